package web

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// newcomerServer is a server whose client addresses may each have two
// newcomers' progress saved a day, by clk; 127.0.0.1 is a trusted proxy.
func newcomerServer(t *testing.T, clk *fakeclock.Clock) (string, *store.Store) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Newcomers = limit.NewNewcomers(limit.Memory{Now: clk.Now}, limit.Rates{Writes: 1000}, 2)
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL, cfg.Progress.(*store.Store)
}

// TestNewcomersPerAddress: an address's newcomers beyond its allowance
// are graded and told their progress is not saved, and nothing of theirs
// is; learners saved already, and newcomers from another address, are
// saved; the allowance comes back with time.
func TestNewcomersPerAddress(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	base, st := newcomerServer(t, clk)
	const office = "198.51.100.7"
	first, second := learnerAt(t, base, office), learnerAt(t, base, office)
	for _, l := range []*learnerClient{first, second} {
		if code, a, body := l.answer("gc-pause", "fencing"); code != 200 || a.NotSaved != "" || a.Progress.Right != 1 {
			t.Fatalf("a newcomer within the allowance = %d %s; want saved", code, body)
		}
	}

	third := learnerAt(t, base, office)
	code, a, body := third.answer("gc-pause", "fencing")
	if code != 200 || !a.Correct || a.Progress.Right != 1 || !strings.Contains(a.NotSaved, "not being saved") {
		t.Fatalf("a newcomer beyond the allowance = %d %s; want 200, graded, with not_saved", code, body)
	}
	if q := third.quiz(); q.Progress.Right != 0 {
		t.Errorf("the refused newcomer's saved progress = %+v; want none", q.Progress)
	}
	if id := third.cookieValue(learnerCookie); id == "" {
		t.Error("the refused newcomer got no learner cookie")
	} else if p, err := st.Progress(t.Context(), id); err != nil || len(p) != 0 {
		t.Errorf("the store holds %+v, %v for the refused newcomer; want nothing", p, err)
	}
	// The form without JavaScript says so too, on the lesson page.
	status, page := third.do("POST", "/topics/distributed-locks/quiz/gc-pause", "application/x-www-form-urlencoded",
		url.Values{"choice": {"fencing"}, "_csrf": {third.csrfToken()}}.Encode())
	if status != 200 || !strings.Contains(page, "data-not-saved") || !strings.Contains(page, "Right.") {
		t.Errorf("the form's answer of a refused newcomer = %d; want 200 with the answer graded and the notice", status)
	}
	// The playground works for them; their commands save nothing.
	if status, out := third.do("POST", "/api/playground/exec", "application/json", `{"line":"PING","client":"A"}`); status != 200 {
		t.Errorf("a refused newcomer's command = %d %s; want 200", status, out)
	}
	if p, _ := st.Progress(t.Context(), third.cookieValue(learnerCookie)); len(p) != 0 {
		t.Errorf("after a refused newcomer's command the store holds %+v; want nothing", p)
	}

	// A learner saved already is never refused.
	if code, a, body := first.answer("release-script", "other-holder"); code != 200 || a.NotSaved != "" || a.Progress.Right != 2 {
		t.Errorf("a saved learner's next answer = %d %s; want saved", code, body)
	}
	// Another address has its own allowance.
	if code, a, body := learnerAt(t, base, "203.0.113.9").answer("gc-pause", "fencing"); code != 200 || a.NotSaved != "" {
		t.Errorf("a newcomer from another address = %d %s; want saved", code, body)
	}
	// Half a day later one more newcomer of the office's is saved: the
	// refused one, answering again.
	clk.Add(12 * time.Hour)
	if code, a, body := third.answer("release-script", "other-holder"); code != 200 || a.NotSaved != "" {
		t.Errorf("the refused newcomer half a day later = %d %s; want saved", code, body)
	}
}

// TestLabSolvedByARefusedNewcomer: a refused newcomer's check of a
// challenge runs and passes, and the report says it is not saved.
func TestLabSolvedByARefusedNewcomer(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	base, _ := newcomerServer(t, clk)
	for range 2 {
		if code, _, body := learnerAt(t, base, "198.51.100.7").answer("gc-pause", "fencing"); code != 200 {
			t.Fatalf("answer = %d %s", code, body)
		}
	}
	l := learnerAt(t, base, "198.51.100.7")
	ch, err := lab.ChallengeByID("plain-del")
	if err != nil {
		t.Fatal(err)
	}
	code, rep, raw := l.labCheck(labBody(t, ch.Fix, ch.ID))
	if code != http.StatusOK || rep.Passed == nil || !*rep.Passed || rep.JustSolved || !strings.Contains(rep.NotSaved, "not being saved") {
		t.Fatalf("a refused newcomer's passing check = %d %s; want passed, not saved, and saying so", code, raw)
	}
	for _, c := range l.labChallenges() {
		if c.Solved {
			t.Errorf("challenge %s is solved for the refused newcomer; want nothing saved", c.ID)
		}
	}
}
