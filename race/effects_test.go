package race

import (
	"slices"
	"testing"
	"time"
)

// The outcomes, short, for tables.
const (
	del  = OutcomeForeignLockDeleted
	th   = OutcomeTwoHolders
	acc  = OutcomeStaleWriteAccepted
	rej  = OutcomeStaleWriteRejected
	nf   = OutcomeLockNeverFreed
	st   = OutcomeStarved
	safe = OutcomeSafe
)

// set is a list of outcomes, for tables.
func set(o ...Outcome) []Outcome { return o }

// Parameters change outcomes, not only numbers.
func TestParamEffects(t *testing.T) {
	for _, tt := range []struct {
		name string
		id   string
		edit func(*Params)
		want []Outcome
	}{
		{name: "pause past TTL, no fencing", id: "gc-pause", edit: func(*Params) {}, want: set(th, acc)},
		{name: "pause past TTL, fencing", id: "gc-pause", edit: func(p *Params) { p.Fencing = true }, want: set(th, rej)},
		{name: "pause shorter than TTL", id: "gc-pause", edit: func(p *Params) { p.Pause = 5 * time.Second }, want: set(safe)},
		{name: "pause shorter than TTL, fencing", id: "gc-pause", edit: func(p *Params) { p.Pause = 5 * time.Second; p.Fencing = true }, want: set(safe)},
		{name: "longer TTL outlasts the pause", id: "gc-pause", edit: func(p *Params) { p.TTL = 30 * time.Second }, want: set(safe)},
		{name: "fencing turned off", id: "fencing", edit: func(p *Params) { p.Fencing = false }, want: set(th, acc)},
		{name: "fencing on", id: "fencing", edit: func(*Params) {}, want: set(th, rej)},
		{name: "release by DEL", id: "release-del", edit: func(*Params) {}, want: set(del, th, acc)},
		{name: "release by script", id: "release-del", edit: func(p *Params) { p.Release = ReleaseScript }, want: set(th)},
		{name: "DEL without a pause", id: "release-del", edit: func(p *Params) { p.Pause = 0 }, want: set(safe)},
		{name: "work longer than TTL, no renewal", id: "normal", edit: func(p *Params) { p.TTL = time.Second }, want: set(th, acc)},
		{name: "renewal through a long pause", id: "renewal", edit: func(*Params) {}, want: set(th)},
		{name: "renewal without a pause", id: "renewal", edit: func(p *Params) { p.Pause = 0 }, want: set(safe)},
		{name: "clock jump past the TTL", id: "redlock-clock-jump", edit: func(*Params) {}, want: set(th, acc)},
		{name: "small clock jump", id: "redlock-clock-jump", edit: func(p *Params) { p.ClockJump = 5 * time.Second }, want: set(safe)},
		{name: "no clock jump", id: "redlock-clock-jump", edit: func(p *Params) { p.ClockJump = 0 }, want: set(safe)},
		{name: "quick restart", id: "redlock-crash", edit: func(*Params) {}, want: set(th, acc)},
		{name: "immediate restart", id: "redlock-crash", edit: func(p *Params) { p.RestartDelay = 0 }, want: set(th, acc)},
		{name: "restart after the TTL", id: "redlock-crash", edit: func(p *Params) { p.RestartDelay = 11 * time.Second }, want: set(safe)},
		{name: "watchdog on a timer", id: "watchdog", edit: func(*Params) {}, want: set(nf, st)},
		{name: "watchdog that checks progress", id: "watchdog", edit: func(p *Params) { p.Renew = RenewProgress }, want: set(safe)},
		{name: "watchdog on a timer, short TTL", id: "watchdog", edit: func(p *Params) { p.TTL = 2 * time.Second }, want: set(nf, st)},
		{name: "watchdog that checks progress, short TTL", id: "watchdog", edit: func(p *Params) { p.TTL = 2 * time.Second; p.Renew = RenewProgress }, want: set(safe)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultsOf(t, tt.id)
			tt.edit(&p)
			tl := run(t, tt.id, p)
			if got := tl.OutcomeSet(); !slices.Equal(got, tt.want) {
				t.Errorf("Run(%q, %+v) outcomes = %q; want %q (%s)", tt.id, p, got, tt.want, tl.Summary)
			}
		})
	}
}

// kinds lists the kinds of events by actor, in order.
func kinds(tl Timeline, actor string) []Kind {
	var out []Kind
	for _, e := range tl.Events {
		if e.Actor == actor {
			out = append(out, e.Kind)
		}
	}
	return out
}

func TestFencingTokensAre33And34(t *testing.T) {
	tl := run(t, "fencing", defaultsOf(t, "fencing"))
	var fences []int64
	for _, e := range tl.Events {
		if e.Kind == KindAcquireOK {
			fences = append(fences, e.Fence)
		}
	}
	if want := []int64{33, 34}; !slices.Equal(fences, want) {
		t.Errorf("fencing tokens granted = %v; want %v", fences, want)
	}
	last := tl.Events[len(tl.Events)-2]
	if last.Kind != KindWriteRejected || last.Fence != 33 || last.HighestToken != 34 || !last.Stale {
		t.Errorf("client 1's late write = %+v; want a stale write with token 33 rejected after 34", last)
	}
}

func TestRenewalStopsTheClient(t *testing.T) {
	tl := run(t, "renewal", defaultsOf(t, "renewal"))
	got := kinds(tl, "client 1")
	want := []Kind{KindAcquireOK, KindExtendOK, KindExtendOK, KindPauseStart, KindPauseEnd, KindExtendFail}
	if !slices.Equal(got, want) {
		t.Errorf("client 1 did %v; want %v", got, want)
	}
	for _, e := range tl.Events {
		if e.Kind == KindWriteAccepted && e.Subject == "client 1" {
			t.Errorf("client 1 wrote after losing its lock: %+v", e)
		}
	}
}

// indexOf returns the index in the timeline of actor's first event of
// kind, failing the test if there is none.
func indexOf(t *testing.T, tl Timeline, actor string, kind Kind) int {
	t.Helper()
	i := slices.IndexFunc(tl.Events, func(e Event) bool { return e.Actor == actor && e.Kind == kind })
	if i < 0 {
		t.Fatalf("%s has no %s event in %+v", actor, kind, tl.Events)
	}
	return i
}

// inOrder fails the test unless the events at the indices come in that
// order, in the timeline and in virtual time.
func inOrder(t *testing.T, tl Timeline, what string, idx ...int) {
	t.Helper()
	for k := 1; k < len(idx); k++ {
		a, b := tl.Events[idx[k-1]], tl.Events[idx[k]]
		if idx[k-1] >= idx[k] || a.AtMS > b.AtMS {
			t.Errorf("%s: event #%d %+v comes before #%d %+v; want it after", what, idx[k], b, idx[k-1], a)
		}
	}
}

func TestNormalCaseSecondClientRetries(t *testing.T) {
	tl := run(t, "normal", defaultsOf(t, "normal"))
	got := kinds(tl, "client 2")
	if len(got) < 2 || got[0] != KindAcquireFail {
		t.Errorf("client 2 did %v; want a failed attempt first, then the lock", got)
	}
	inOrder(t, tl, "client 2 gets the lock once client 1 released it",
		indexOf(t, tl, "client 1", KindAcquireOK),
		indexOf(t, tl, "client 2", KindAcquireFail),
		indexOf(t, tl, "client 1", KindReleaseOK),
		indexOf(t, tl, "client 2", KindAcquireOK))
}

func TestReleaseDelDeletesSecondClientsLock(t *testing.T) {
	tl := run(t, "release-del", defaultsOf(t, "release-del"))
	del := slices.IndexFunc(tl.Events, func(e Event) bool {
		return e.Kind == KindDeleteOther && e.Actor == "client 1" && e.Subject == "client 2"
	})
	if del < 0 {
		t.Fatalf("no event where client 1 deletes client 2's lock in %+v", tl.Events)
	}
	inOrder(t, tl, "client 1 deletes the lock client 2 took after its own expired",
		indexOf(t, tl, "client 1", KindAcquireOK),
		indexOf(t, tl, "client 1", KindPauseStart),
		indexOf(t, tl, "redis", KindExpire),
		indexOf(t, tl, "client 2", KindAcquireOK),
		indexOf(t, tl, "client 1", KindPauseEnd),
		del)
}
