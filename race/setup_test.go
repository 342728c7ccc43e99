package race

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// setupRuns are the scenarios with their defaults and with the settings a
// learner changes, a fault added to some: the setups the tests read.
func setupRuns(t *testing.T) []goldenRun {
	t.Helper()
	out := goldenRuns(t)
	for _, in := range List() {
		for name, edit := range map[string]func(*Params){
			"short TTL":      func(p *Params) { p.TTL = 2 * time.Second },
			"no pause":       func(p *Params) { p.Pause = 0 },
			"fencing on":     func(p *Params) { p.Fencing = true },
			"fencing off":    func(p *Params) { p.Fencing = false },
			"DEL":            func(p *Params) { p.Release = ReleaseDel },
			"long work":      func(p *Params) { p.Work = 12 * time.Second },
			"no clock jump":  func(p *Params) { p.ClockJump = 0 },
			"slow restart":   func(p *Params) { p.RestartDelay = 11 * time.Second },
			"WAIT":           func(p *Params) { p.Wait = true },
			"no lag":         func(p *Params) { p.ReplicationLag = 0 },
			"renew progress": func(p *Params) { p.Renew = RenewProgress },
		} {
			p := in.Defaults
			edit(&p)
			out = append(out, goldenRun{name: in.ID + ", " + name, id: in.ID, p: p})
		}
	}
	return out
}

// setupOf is Setup for tests.
func setupOf(t *testing.T, id string, p Params) []string {
	t.Helper()
	lines, err := Setup(id, p)
	if err != nil {
		t.Fatalf("Setup(%q) error: %v", id, err)
	}
	if len(lines) == 0 {
		t.Fatalf("Setup(%q) is empty", id)
	}
	return lines
}

// outcomePhrases are ways to say what happens that a setup must not use:
// the old descriptions' giveaways ("the storage checks and rejects it",
// "client 2 gets a majority too", "client 2 waits forever") and their
// like.
var outcomePhrases = []string{
	"stale", "reject", "accepts", "hold it at once", "both", "majority too", "gets the same lock", "deletes client",
	"passes to", "takes the lock", "gets the lock", "expires", "expired", "lost", "forever", "never get", "never got",
	"never freed", "still taken", "gives up", "wakes up", "anyway", "safe", "wrong", "fails", "starv", "walks in",
}

// No setup says an outcome, by its label, its short words or another
// phrase that tells what happens, whatever the settings and faults.
func TestSetupSaysNoOutcome(t *testing.T) {
	for _, g := range setupRuns(t) {
		for _, line := range setupOf(t, g.id, g.p) {
			low := strings.ToLower(line)
			for _, o := range AllOutcomes() {
				for _, words := range []string{o.Label(), o.Short()} {
					if strings.Contains(low, strings.ToLower(words)) {
						t.Errorf("%s: setup %q says the outcome %s (%q)", g.name, line, o, words)
					}
				}
			}
			for _, ph := range outcomePhrases {
				if strings.Contains(low, ph) {
					t.Errorf("%s: setup %q says what happens (%q)", g.name, line, ph)
				}
			}
		}
	}
}

var (
	askedAt   = regexp.MustCompile(`(?i)client (\d) (?:asks for (?:it|the lock) )?at (\d+(?:\.\d+)?) s`)
	ttlIs     = regexp.MustCompile(`time to live \(TTL\) is (\d+(?:\.\d+)?) s`)
	watched   = regexp.MustCompile(`watched until (\d+(?:\.\d+)?) s`)
	nodeEvent = regexp.MustCompile(`^At (\d+(?:\.\d+)?) s, node (\d)(?:, the primary,|'s clock)? (crashes|jumps)`)
)

// ms reads "1.5" seconds as 1500 ms.
func ms(t *testing.T, s string) int64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(f*1000 + 0.5)
}

// A setup is true of the run: each client's first step is when the setup
// says it asks, the TTL is the run's, a scenario's crash and clock jump
// happen when it says, a pause is said exactly when there is one, and the
// run ends by the time the setup says it is watched until.
func TestSetupIsTrue(t *testing.T) {
	for _, g := range setupRuns(t) {
		if len(g.p.Faults) > 0 {
			continue // a fault may move a client's first step
		}
		tl, err := Run(g.id, g.p)
		if errors.Is(err, ErrBadParams) {
			continue // a setting this scenario refuses
		}
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		text := strings.Join(setupOf(t, g.id, g.p), "\n")
		asks := askedAt.FindAllStringSubmatch(text, -1)
		if len(asks) < 2 {
			t.Errorf("%s: setup says when %d clients ask; want every client's time:\n%s", g.name, len(asks), text)
		}
		for _, m := range asks {
			actor := "client " + m[1]
			i := slices.IndexFunc(tl.Events, func(e Event) bool { return e.Actor == actor })
			if i < 0 || tl.Events[i].AtMS != ms(t, m[2]) {
				t.Errorf("%s: setup says %s asks at %s s; its first event is #%d", g.name, actor, m[2], i)
			}
		}
		if m := ttlIs.FindStringSubmatch(text); m == nil || ms(t, m[1]) != g.p.TTL.Milliseconds() {
			t.Errorf("%s: setup's TTL %q; want %v", g.name, m, g.p.TTL)
		}
		end := tl.Events[len(tl.Events)-1].AtMS
		if m := watched.FindStringSubmatch(text); m != nil && end > ms(t, m[1]) {
			t.Errorf("%s: setup says the run is watched until %s s; it ends at %d ms", g.name, m[1], end)
		}
		for _, line := range strings.Split(text, "\n") {
			m := nodeEvent.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			kind := map[string]Kind{"crashes": KindCrash, "jumps": KindClockJump}[m[3]]
			at, actor := ms(t, m[1]), "redis node "+m[2]
			if !slices.ContainsFunc(tl.Events, func(e Event) bool { return e.Kind == kind && e.Actor == actor && e.AtMS == at }) {
				t.Errorf("%s: setup says %q; no %s of %s at %d ms", g.name, line, kind, actor, at)
			}
		}
		paused := slices.ContainsFunc(tl.Events, func(e Event) bool { return e.Kind == KindPauseStart })
		if says := strings.Contains(text, "freezes for"); says != paused {
			t.Errorf("%s: setup says a client freezes: %v; the run has a pause: %v", g.name, says, paused)
		}
		fencing := strings.Contains(text, "Fencing tokens are on")
		if fencing != (g.p.Fencing && !strings.HasPrefix(g.id, "redlock")) {
			t.Errorf("%s: setup says fencing is on: %v; fencing %v", g.name, fencing, g.p.Fencing)
		}
	}
}

// A fault's sentence is the last of the setup of a run with it, and says
// what the fault does, in the words of the list of added faults.
func TestFaultText(t *testing.T) {
	for _, tt := range []struct{ spec, want string }{
		{"pause:client1:1000:15000", "At 1 s, client 1 pauses for 15 s."},
		{"crash:node3:500:2000", "At 0.5 s, node 3 crashes, losing its data, and restarts 2 s later."},
		{"crash:redis:500:2000-persist", "At 0.5 s, Redis crashes, keeping its data, and restarts 2 s later."},
		{"crash:redis:500:0", "At 0.5 s, Redis crashes, losing its data, and restarts at once."},
		{"clock-jump:node2:0:10000", "At 0 s, node 2's clock jumps 10 s ahead."},
		{"delay:client2:300:400", "At 0.3 s, the next reply to client 2 is delayed by 0.4 s."},
		{"delay:node1:0:50", "At 0 s, the next reply from node 1 is delayed by 0.05 s."},
	} {
		f, err := ParseFault(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Text(); got != tt.want {
			t.Errorf("ParseFault(%q).Text() = %q; want %q", tt.spec, got, tt.want)
		}
	}
	for _, tt := range []struct{ id, spec, want string }{
		{"normal", "crash:redis:1000:500", "At 1 s, Redis crashes, losing its data, and restarts 0.5 s later."},
		{"failover", "crash:redis:1000:500", "At 1 s, the primary crashes, losing its data, and restarts 0.5 s later."},
		{"redlock-crash", "delay:node4:0:300", "At 0 s, the next reply from node 4 is delayed by 0.3 s."},
	} {
		f, _ := ParseFault(tt.spec)
		p := defaultsOf(t, tt.id)
		p.Faults = []Fault{f}
		lines := setupOf(t, tt.id, p)
		if got := lines[len(lines)-1]; got != tt.want {
			t.Errorf("Setup(%q, fault %s) ends %q; want %q", tt.id, tt.spec, got, tt.want)
		}
	}
}

// Setup refuses what Run refuses.
func TestSetupErrors(t *testing.T) {
	if _, err := Setup("nope", defaults()); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("Setup(nope) error = %v; want ErrUnknownScenario", err)
	}
	p := defaults()
	p.TTL = time.Millisecond
	if _, err := Setup("normal", p); !errors.Is(err, ErrBadParams) {
		t.Errorf("Setup(normal, TTL 1 ms) error = %v; want ErrBadParams", err)
	}
	for _, in := range List() {
		if got := setupOf(t, in.ID, in.Defaults); !slices.Equal(got, in.Setup) {
			t.Errorf("%s: List's setup %q; want Setup with the defaults, %q", in.ID, in.Setup, got)
		}
	}
}
