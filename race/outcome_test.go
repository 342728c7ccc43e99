package race

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// found returns the run's Found for o, failing the test if it is missing.
func found(t *testing.T, tl Timeline, o Outcome) Found {
	t.Helper()
	for _, f := range tl.Outcomes {
		if f.Outcome == o {
			if f.Event < 0 || f.Event >= len(tl.Events) || tl.Events[f.Event].AtMS != f.AtMS || f.Text == "" {
				t.Fatalf("%s: %+v does not point at one of the %d events", o, f, len(tl.Events))
			}
			return f
		}
	}
	t.Fatalf("outcomes %q lack %q", tl.OutcomeSet(), o)
	return Found{}
}

// Each outcome is tied to the event where it happened: the first event
// that shows it, and no earlier one.
func TestOutcomeAtItsEvent(t *testing.T) {
	for _, tt := range []struct {
		name    string
		id      string
		edit    func(*Params)
		outcome Outcome
		is      func(e Event) bool // the event the outcome must point at
	}{
		{"two holders: client 2 granted while paused client 1 believes it holds", "gc-pause", func(*Params) {}, OutcomeTwoHolders,
			func(e Event) bool {
				return e.Kind == KindAcquireOK && e.Actor == "client 2" && slices.Contains(e.Holding, "client 1")
			}},
		{"two holders: Redlock majority after a clock jump", "redlock-clock-jump", func(*Params) {}, OutcomeTwoHolders,
			func(e Event) bool { return e.Kind == KindAcquireOK && e.Actor == "client 2" }},
		{"two holders: failover grants client 2 the lost lock", "failover", func(*Params) {}, OutcomeTwoHolders,
			func(e Event) bool { return e.Kind == KindAcquireOK && e.Actor == "client 2" && len(e.Holding) == 2 }},
		{"stale write accepted: client 1's late write", "gc-pause", func(*Params) {}, OutcomeStaleWriteAccepted,
			func(e Event) bool { return e.Kind == KindWriteAccepted && e.Subject == "client 1" && e.Stale }},
		{"stale write accepted: the same token after failover", "failover", func(p *Params) { p.Fencing = true }, OutcomeStaleWriteAccepted,
			func(e Event) bool { return e.Kind == KindWriteAccepted && e.Subject == "client 1" && e.Fence == 33 }},
		{"stale write rejected: token 33 after 34", "fencing", func(*Params) {}, OutcomeStaleWriteRejected,
			func(e Event) bool { return e.Kind == KindWriteRejected && e.Subject == "client 1" && e.Fence == 33 }},
		{"foreign lock deleted: client 1's DEL", "release-del", func(*Params) {}, OutcomeForeignLockDeleted,
			func(e Event) bool {
				return e.Kind == KindDeleteOther && e.Actor == "client 1" && e.Subject == "client 2"
			}},
		{"safe: at the last event", "normal", func(*Params) {}, OutcomeSafe, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultsOf(t, tt.id)
			tt.edit(&p)
			tl := run(t, tt.id, p)
			f := found(t, tl, tt.outcome)
			if tt.is == nil {
				if f.Event != len(tl.Events)-1 || len(tl.Outcomes) != 1 {
					t.Errorf("%s: %+v; want safe alone, at the last event (%d)", tt.id, tl.Outcomes, len(tl.Events)-1)
				}
				return
			}
			first := slices.IndexFunc(tl.Events, tt.is)
			if f.Event != first {
				t.Errorf("%s: %s at event %d (%+v); want event %d, the first that shows it", tt.id, tt.outcome, f.Event, tl.Events[f.Event], first)
			}
		})
	}
}

// Outcomes are listed most serious first, once each, and the verdict and
// summary are the first.
func TestOutcomesOrder(t *testing.T) {
	for _, g := range goldenRuns(t) {
		tl := run(t, g.id, g.p)
		if len(tl.Outcomes) == 0 || tl.Verdict != tl.Outcomes[0].Outcome || tl.Summary != tl.Outcomes[0].Text {
			t.Errorf("%s: verdict %q, summary %q, outcomes %+v; want the first outcome's", g.name, tl.Verdict, tl.Summary, tl.Outcomes)
			continue
		}
		for i := 1; i < len(tl.Outcomes); i++ {
			if tl.Outcomes[i-1].Outcome.Rank() >= tl.Outcomes[i].Outcome.Rank() {
				t.Errorf("%s: outcomes %q not in order of seriousness", g.name, tl.OutcomeSet())
			}
		}
		if tl.Has(OutcomeSafe) && len(tl.Outcomes) > 1 {
			t.Errorf("%s: outcomes %q: safe with others", g.name, tl.OutcomeSet())
		}
	}
}

// Faults change the outcome as they should.
func TestFaultEffects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		id     string
		edit   func(*Params)
		faults []string
		want   []Outcome
	}{
		{"no fault", "normal", nil, nil, set(safe)},
		{"pause past the TTL", "normal", nil, []string{"pause:client1:500:12000"}, set(th, acc)},
		{"pause shorter than the TTL", "normal", nil, []string{"pause:client1:500:3000"}, set(safe)},
		{"two pauses add up past the TTL", "normal", nil, []string{"pause:client1:500:6000", "pause:client1:6000:6000"}, set(th, acc)},
		{"pause at 0 comes before the first attempt", "normal", nil, []string{"pause:client1:0:1000"}, set(safe)},
		{"crash loses the key", "normal", func(p *Params) { p.Work = 5 * time.Second }, []string{"crash:redis:1000:500"}, set(th, acc)},
		{"crash with persistence keeps it", "normal", func(p *Params) { p.Work = 5 * time.Second }, []string{"crash:redis:1000:500-persist"}, set(safe)},
		{"clock jump expires the key early", "normal", nil, []string{"clock-jump:redis:1000:9500"}, set(th, acc)},
		{"small clock jump", "normal", nil, []string{"clock-jump:redis:1000:1000"}, set(safe)},
		{"crash loses the fencing counter too", "fencing", nil, []string{"crash:redis:3000:500"}, set(th, acc)},
		{"pausing client 1 longer in the fencing run", "fencing", nil, []string{"pause:client1:2000:5000"}, set(th, rej)},
		{"Redlock: a slow reply eats into validity", "redlock-crash", func(p *Params) { p.RestartDelay = 11 * time.Second }, []string{"delay:client1:0:9950"}, set(safe)},
		{"failover: no replica to promote, the primary restarts empty", "failover", nil, []string{"crash:node2:100:60000"}, set(th, acc)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultsOf(t, tt.id)
			if tt.edit != nil {
				tt.edit(&p)
			}
			for _, s := range tt.faults {
				f, err := ParseFault(s)
				if err != nil {
					t.Fatal(err)
				}
				p.Faults = append(p.Faults, f)
			}
			tl := run(t, tt.id, p)
			if got := tl.OutcomeSet(); !slices.Equal(got, tt.want) {
				t.Errorf("Run(%q, faults %q) outcomes = %q; want %q (%s)", tt.id, tt.faults, got, tt.want, tl.Summary)
			}
		})
	}
}

// A delayed reply to a Redlock client shortens its validity by the time
// the attempt took, and the narration says so.
func TestDelayShortensRedlockValidity(t *testing.T) {
	p := defaultsOf(t, "redlock-clock-jump")
	p.Faults = []Fault{{Kind: FaultDelay, Target: "client1", Length: 3 * time.Second}}
	tl := run(t, "redlock-clock-jump", p)
	i := indexOf(t, tl, "client 1", KindAcquireOK)
	if e := tl.Events[i]; e.AtMS != 3000 || !containsAll(e.Text, "6.898 s", "minus the 3 s the attempt took", "102 ms allowed for clock drift") {
		t.Errorf("client 1's grant = %+v; want it at 3000 ms, valid for 10 s - 3 s - 102 ms", e)
	}
	if d := indexOf(t, tl, "client 1", KindDelay); d >= i {
		t.Errorf("the delay event (#%d) comes after the grant (#%d)", d, i)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// Any fault on any target a scenario has, at any of a few times, gives a
// run in time order, with outcomes, and the same run twice.
func TestFaultsNeverBreakARun(t *testing.T) {
	kinds := map[FaultKind][]string{
		FaultPause:     {"client1", "client2", "client3"},
		FaultCrash:     {"redis", "node1", "node2", "node3"},
		FaultClockJump: {"redis", "node1", "node3"},
		FaultDelay:     {"client1", "client2", "redis", "node2", "node3"},
	}
	n := 0
	for _, in := range List() {
		for kind, targets := range kinds {
			for _, target := range targets {
				for _, at := range []time.Duration{0, 700 * time.Millisecond, 5 * time.Second, 12 * time.Second} {
					for _, length := range []time.Duration{0, 300 * time.Millisecond, 11 * time.Second} {
						f := Fault{Kind: kind, Target: target, At: at, Length: length, Persist: kind == FaultCrash && length == 0}
						if f.Validate() != nil {
							continue
						}
						p := in.Defaults
						p.Faults = []Fault{f, f}
						a, err := Run(in.ID, p)
						if err != nil {
							if !errors.Is(err, ErrBadParams) {
								t.Errorf("Run(%q, %s twice) error %v", in.ID, f, err)
							}
							continue
						}
						n++
						if len(a.Outcomes) == 0 {
							t.Errorf("Run(%q, %s twice): no outcomes", in.ID, f)
						}
						for i := 1; i < len(a.Events); i++ {
							if a.Events[i].AtMS < a.Events[i-1].AtMS {
								t.Errorf("Run(%q, %s twice): event %d out of time order", in.ID, f, i)
							}
						}
						if b, _ := Run(in.ID, p); !reflect.DeepEqual(a, b) {
							t.Errorf("Run(%q, %s twice) is not deterministic", in.ID, f)
						}
					}
				}
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d runs with faults succeeded; want most of them", n)
	}
}

// A watchdog that renews on a timer keeps a stuck client's lock for as
// long as the run is watched, and the client that waits for it never gets
// it; one that renews only after progress lets the lock go, and the other
// client gets it. Both liveness outcomes are at the run's last event,
// when the run ends, and say who and when.
func TestLivenessOutcomes(t *testing.T) {
	p := defaultsOf(t, "watchdog")
	tl := run(t, "watchdog", p)
	if got, want := tl.OutcomeSet(), set(nf, st); !slices.Equal(got, want) {
		t.Fatalf("watchdog, renew=timer: outcomes %q; want %q", got, want)
	}
	last := len(tl.Events) - 1
	for _, tt := range []struct {
		o    Outcome
		says []string
	}{
		{nf, []string{"Client 1's work hung at 4 s", "at 34 s", "still taken", "renewed it 9 times"}},
		{st, []string{"Client 2 asked for the lock at 5 s", "ended at 34 s"}},
	} {
		f := found(t, tl, tt.o)
		if f.Event != last || !containsAll(f.Text, tt.says...) {
			t.Errorf("%s = %+v; want it at the last event (%d), saying %q", tt.o, f, last, tt.says)
		}
	}
	if tl.Verdict != nf {
		t.Errorf("verdict %q; want %q, the most serious", tl.Verdict, nf)
	}
	if got := kinds(tl, "client 2"); slices.Contains(got, KindAcquireOK) {
		t.Errorf("client 2 did %v; a starved client must not have got the lock", got)
	}

	p.Renew = RenewProgress
	tl = run(t, "watchdog", p)
	if tl.Has(nf) || tl.Has(st) {
		t.Errorf("watchdog, renew=progress: outcomes %q; want neither %q nor %q", tl.OutcomeSet(), nf, st)
	}
	if got := kinds(tl, "client 2"); !slices.Contains(got, KindAcquireOK) {
		t.Errorf("watchdog, renew=progress: client 2 did %v; want it to get the lock", got)
	}
}

// Every client that asked for the lock got it in every golden run but the
// watchdog on a timer, so no other run is starved; and only a stuck
// client's lock can be never freed.
func TestStarvedOnlyWhereTrue(t *testing.T) {
	for _, g := range goldenRuns(t) {
		tl := run(t, g.id, g.p)
		asked, got := map[string]bool{}, map[string]bool{}
		for _, e := range tl.Events {
			switch e.Kind {
			case KindAcquireOK:
				got[e.Actor] = true
				asked[e.Actor] = true
			case KindAcquireFail, KindWait:
				asked[e.Actor] = true
			}
		}
		starved := false
		for c := range asked {
			starved = starved || !got[c]
		}
		if tl.Has(st) != starved {
			t.Errorf("%s: starved %v, but clients that asked %v and got %v", g.name, tl.Has(st), asked, got)
		}
		stuck := slices.ContainsFunc(tl.Events, func(e Event) bool { return e.Kind == KindStuck })
		if tl.Has(nf) && !stuck {
			t.Errorf("%s: lock never freed, with no stuck client", g.name)
		}
	}
}

// Every outcome has a label for a prediction and short words for a
// drawing, each its own; a name that is no outcome has neither.
func TestOutcomeWords(t *testing.T) {
	labels, shorts := map[string]Outcome{}, map[string]Outcome{}
	for _, o := range AllOutcomes() {
		l, s := o.Label(), o.Short()
		if l == "" || s == "" || l == s {
			t.Errorf("%s: label %q, short %q; want both, different", o, l, s)
		}
		if len(s) > 24 {
			t.Errorf("%s: short words %q are %d bytes; want at most 24, for a flag on a phone", o, s, len(s))
		}
		if prev, ok := labels[l]; ok {
			t.Errorf("%s and %s have the same label %q", prev, o, l)
		}
		if prev, ok := shorts[s]; ok {
			t.Errorf("%s and %s have the same short words %q", prev, o, s)
		}
		labels[l], shorts[s] = o, o
	}
	if l, s := Outcome("lock-not-freed").Label(), Outcome("lock-not-freed").Short(); l != "" || s != "" {
		t.Errorf("an unknown outcome has label %q, short %q; want none", l, s)
	}
	for _, o := range Outcomes() {
		if o == OutcomeForeignLockExtended {
			t.Errorf("Outcomes() offers %s, which no race run has", o)
		}
	}
}
