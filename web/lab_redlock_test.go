package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/locklab/locklab/lab"
)

// redlockRecipe is the classic Redlock recipe on n nodes.
func redlockRecipe(n int) lab.Recipe {
	r := lab.Textbook()
	r.Nodes = n
	return r
}

// TestLabRedlockAPI: POST /api/lab/check takes the recipe's nodes, says
// them in the report, plays a counterexample on every node and refuses
// a count of nodes the lab does not run.
func TestLabRedlockAPI(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	code, rep, body := l.labCheck(labBody(t, redlockRecipe(5), ""))
	if code != http.StatusOK {
		t.Fatalf("POST /api/lab/check with 5 nodes = %d %s", code, body)
	}
	if rep.Nodes != 5 || rep.Quorum != 3 || !strings.Contains(rep.Link, "nodes=5") {
		t.Errorf("report: nodes %d, quorum %d, link %s; want 5, 3 and the nodes in the link", rep.Nodes, rep.Quorum, rep.Link)
	}
	one, _ := findProperty(rep, "one-holder")
	if one.Status != "broken" || one.Counterexample == nil || one.Counterexample.Nodes != 5 {
		t.Fatalf("one-holder under the default model (clocks jump ahead): %s; want Kleppmann's counterexample on 5 nodes", one.Status)
	}
	for _, e := range one.Counterexample.Events {
		if len(e.Nodes) != 5 {
			t.Fatalf("event %q has %d node states; want 5", e.Text, len(e.Nodes))
		}
	}
	code, single, _ := l.labCheck(labBody(t, lab.Textbook(), ""))
	if code != http.StatusOK || single.Nodes != 1 || single.Quorum != 1 || strings.Contains(single.Link, "nodes=") {
		t.Errorf("one node: %d, nodes %d, quorum %d, link %s", code, single.Nodes, single.Quorum, single.Link)
	}
	for _, n := range []int{2, 4, 9} {
		code, _, body := l.labCheck(labBody(t, redlockRecipe(n), ""))
		if code != http.StatusBadRequest || !strings.Contains(body, "1, 3 or 5") {
			t.Errorf("POST /api/lab/check with %d nodes = %d %s; want 400 naming the counts allowed", n, code, body)
		}
	}
}

// TestLabRedlockForm: the page's form chooses the nodes without
// JavaScript, and the report's link keeps them.
func TestLabRedlockForm(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	_, page := l.do("GET", "/lab", "", "")
	if !strings.Contains(page, `name="nodes"`) || !strings.Contains(page, `<option value="1" selected>`) {
		t.Errorf("GET /lab: want the nodes selector with one node chosen")
	}
	r := lab.Textbook()
	v := url.Values{"acquire": {r.Acquire[0]}, "release": {r.Release[0]}, "nodes": {"3"}, "clock_jumps": {"none"}, "restarts": {"empty-delayed"}, "combine": {"true"}}
	const formType = "application/x-www-form-urlencoded"
	code, page := l.do("POST", "/lab", formType, v.Encode())
	if code != http.StatusOK || !strings.Contains(page, `<option value="3" selected>`) || !strings.Contains(page, "asked all 3 Redis nodes") || !strings.Contains(page, `data-property="one-holder" data-holds="true"`) {
		t.Errorf("POST /lab with 3 nodes = %d; want the report of a Redlock on 3 nodes that keeps one holder", code)
	}
	v.Set("nodes", "three")
	if code, _ := l.do("POST", "/lab", formType, v.Encode()); code != http.StatusBadRequest {
		t.Errorf("POST /lab with nodes=three = %d; want 400", code)
	}
	v.Set("nodes", "3")
	v.Set("quorum", "1")
	code, page = l.do("POST", "/lab", formType, v.Encode())
	if code != http.StatusOK || !strings.Contains(page, "fewer than a majority") || !strings.Contains(page, `data-property="one-holder" data-holds="false"`) {
		t.Errorf("POST /lab with quorum 1 of 3 = %d; want one-holder broken", code)
	}
}
