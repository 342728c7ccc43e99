package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/locklab/locklab/lab"
)

func (l *learnerClient) labCompare(req labCompareRequest) (int, labCompareJSON, string) {
	l.t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		l.t.Fatal(err)
	}
	code, out := l.do("POST", "/api/lab/compare", "application/json", string(b))
	var c labCompareJSON
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			l.t.Fatalf("POST /api/lab/compare: %v\n%s", err, out)
		}
	}
	return code, c, out
}

func compared(t *testing.T, c labCompareJSON, id string) labCompPropertyJSON {
	t.Helper()
	for _, p := range c.Properties {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no %s in the comparison", id)
	return labCompPropertyJSON{}
}

// TestLabCompareAPI: POST /api/lab/compare tells the compare-and-delete
// release from a plain DEL on no-foreign-release, with the schedule that
// tells them apart as each ran it, whichever way the other recipe is
// named; and refuses what cannot run.
func TestLabCompareAPI(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	textbook := recipeToJSON(lab.Textbook())
	plain, _ := lab.ChallengeByID("plain-del")
	pasted := recipeToJSON(plain.Recipe)
	for name, with := range map[string]labCompareWith{"challenge": {Challenge: "plain-del"}, "pasted": {Recipe: &pasted}} {
		code, c, body := l.labCompare(labCompareRequest{Recipe: textbook, With: with})
		if code != http.StatusOK {
			t.Fatalf("%s: POST /api/lab/compare = %d %s", name, code, body)
		}
		p := compared(t, c, "no-foreign-release")
		if !p.Differs || p.A.Status != "holds" || p.B.Status != "broken" || p.Telling == nil || p.Telling.Broke != "b" {
			t.Fatalf("%s: no-foreign-release %+v; want held by the textbook, broken by the plain DEL, with the telling schedule", name, p)
		}
		if len(p.Telling.A.Events) == 0 || len(p.Telling.B.Events) == 0 || len(p.Telling.Faults) == 0 {
			t.Errorf("%s: the telling schedule has no events or faults", name)
		}
		if c.Differ != 1 || c.Schedules == 0 || strings.Join(c.With.Release, "") != "DEL {key}" {
			t.Errorf("%s: differ %d over %d schedules, with %v", name, c.Differ, c.Schedules, c.With.Release)
		}
	}
	// The other recipe runs on as many nodes as the learner's.
	five := recipeToJSON(redlockRecipe(5))
	code, c, body := l.labCompare(labCompareRequest{Recipe: five, With: labCompareWith{Textbook: true}, Model: &lab.Model{ClockJumps: lab.JumpsNone, Restarts: lab.RestartsNone}})
	if code != http.StatusOK || c.Nodes != 5 || c.With.Nodes != 5 || c.Differ != 0 {
		t.Errorf("5 nodes with the textbook = %d, nodes %d and %d, differ %d %s; want the same recipe on 5 nodes", code, c.Nodes, c.With.Nodes, c.Differ, body)
	}
	for name, tt := range map[string]struct {
		req  labCompareRequest
		code int
		says string
	}{
		"no other recipe":   {labCompareRequest{Recipe: textbook}, http.StatusBadRequest, "name the recipe"},
		"bad other recipe":  {labCompareRequest{Recipe: textbook, With: labCompareWith{Recipe: &labRecipeJSON{Acquire: []string{"SET {nope} 1"}, Release: []string{"DEL {key}"}}}}, http.StatusBadRequest, "compare with the other recipe"},
		"bad recipe":        {labCompareRequest{Recipe: labRecipeJSON{Release: []string{"DEL {key}"}}, With: labCompareWith{Textbook: true}}, http.StatusBadRequest, "acquire needs"},
		"unknown challenge": {labCompareRequest{Recipe: textbook, With: labCompareWith{Challenge: "nope"}}, http.StatusNotFound, ""},
	} {
		code, _, body := l.labCompare(tt.req)
		if code != tt.code || !strings.Contains(body, tt.says) {
			t.Errorf("%s: POST /api/lab/compare = %d %s; want %d saying %q", name, code, body, tt.code, tt.says)
		}
	}
}

// TestLabCompareForm: the page's "Compare with…" works without
// JavaScript: the form posted with do=compare shows the comparison where
// the report goes, each telling schedule ready to play, and keeps the
// choice.
func TestLabCompareForm(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	_, page := l.do("GET", "/lab", "", "")
	for _, want := range []string{`name="with"`, `value="challenge:plain-del"`, `name="do" value="compare"`, `name="with_acquire"`} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /lab: want %q in the page", want)
		}
	}
	r := lab.Textbook()
	v := url.Values{"acquire": {r.Acquire[0]}, "release": {r.Release[0]}, "do": {"compare"}, "with": {"challenge:plain-del"}}
	const formType = "application/x-www-form-urlencoded"
	code, page := l.do("POST", "/lab", formType, v.Encode())
	if code != http.StatusOK {
		t.Fatalf("POST /lab do=compare = %d", code)
	}
	for _, want := range []string{`data-lab-comparison`, `data-compare-property="no-foreign-release" data-differs="true" data-a="holds" data-b="broken"`, `data-compare-property="one-holder" data-differs="false"`, `data-lab-telling="no-foreign-release-b"`, `id="cmp-no-foreign-release-b-run"`, `<option value="challenge:plain-del" selected>`} {
		if !strings.Contains(page, want) {
			t.Errorf("POST /lab do=compare: want %q in the page", want)
		}
	}
	if strings.Contains(page, `data-lab-passed`) {
		t.Error("a comparison shows a check's verdict")
	}
	v.Set("with", "pasted")
	v.Set("with_acquire", "SET {nope} 1")
	v.Set("with_release", "DEL {key}")
	if code, page := l.do("POST", "/lab", formType, v.Encode()); code != http.StatusBadRequest || !strings.Contains(page, "Compare with the other recipe") {
		t.Errorf("POST /lab comparing with a bad pasted recipe = %d; want 400 saying which recipe", code)
	}
}
