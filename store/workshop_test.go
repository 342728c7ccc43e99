package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/workshop"
)

const (
	carol = "carol-0123456789abcdef"
	dave  = "dave-0123456789abcdef0"
)

// t0 is when the test workshops start.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func openRedisStore(t *testing.T, addr string) *Store {
	t.Helper()
	s, err := OpenRedis("redis://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// workshopBackends is like backends, but each entry opens two Stores on
// the same storage, as two replicas sharing one Redis would. Bolt, whose
// file belongs to one process, gives the same Store twice.
func workshopBackends() map[string]func(t *testing.T) (s, replica *Store) {
	return map[string]func(t *testing.T) (*Store, *Store){
		"bolt": func(t *testing.T) (*Store, *Store) {
			s, err := OpenBolt(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s
		},
		"miniredis": func(t *testing.T) (*Store, *Store) {
			m := miniredis.RunT(t)
			return openRedisStore(t, m.Addr()), openRedisStore(t, m.Addr())
		},
		"redis-server": func(t *testing.T) (*Store, *Store) {
			addr := redistest.Start(t)
			return openRedisStore(t, addr), openRedisStore(t, addr)
		},
		"cluster": openCluster,
	}
}

// forEachBackend runs f against a workshop service over a fresh store of
// every kind, and a second service over the same storage.
func forEachBackend(t *testing.T, f func(t *testing.T, s, replica *workshop.Service)) {
	t.Helper()
	forEachBackendWith(t, workshop.Options{}, f)
}

// forEachBackendWith is forEachBackend with services made with o.
func forEachBackendWith(t *testing.T, o workshop.Options, f func(t *testing.T, s, replica *workshop.Service)) {
	t.Helper()
	for name, open := range workshopBackends() {
		t.Run(name, func(t *testing.T) {
			s, replica := open(t)
			f(t, workshop.New(s, o), workshop.New(replica, o))
		})
	}
}

// newService is the workshop service over st, as the server wires it.
func newService(st *Store) *workshop.Service { return workshop.New(st, workshop.Options{}) }

// Limits of the workshop package, checked here at their edges.
const (
	maxWorkshops = 200
	maxNickRunes = 40
)

// utc makes times comparable with reflect.DeepEqual: back ends return
// them in the local zone.
func utc(w workshop.Workshop) workshop.Workshop {
	w.StartedAt = w.StartedAt.UTC()
	if !w.EndedAt.IsZero() {
		w.EndedAt = w.EndedAt.UTC()
	}
	return w
}

func mustCreate(t *testing.T, s *workshop.Service, w workshop.Workshop) {
	t.Helper()
	if err := s.Create(context.Background(), w); err != nil {
		t.Fatalf("Create(%+v) = %v", w, err)
	}
}

func mustJoin(t *testing.T, s *workshop.Service, code, learner, nickname string, at time.Time) {
	t.Helper()
	if err := s.Join(context.Background(), code, learner, nickname, at); err != nil {
		t.Fatalf("Join(%s, %s, %q) = %v", code, learner, nickname, err)
	}
}

func mustRecord(t *testing.T, s *workshop.Service, code, learner string, ev workshop.Event) {
	t.Helper()
	if err := s.Record(context.Background(), code, learner, ev); err != nil {
		t.Errorf("Record(%s, %s, %+v) = %v", code, learner, ev, err)
	}
}

// mustFlush writes what each service counted in memory, as each replica
// does within a flush interval.
func mustFlush(t *testing.T, ss ...*workshop.Service) {
	t.Helper()
	for _, s := range ss {
		if err := s.Flush(context.Background()); err != nil {
			t.Fatalf("Flush() = %v", err)
		}
	}
}

func mustStats(t *testing.T, s *workshop.Service, code string, activeSince time.Time) workshop.Stats {
	t.Helper()
	st, err := s.Stats(context.Background(), code, activeSince)
	if err != nil {
		t.Fatalf("workshop.Stats(%s) = %v", code, err)
	}
	st.Workshop = utc(st.Workshop)
	return st
}

func mustParticipants(t *testing.T, s *workshop.Service, code string) []workshop.Participant {
	t.Helper()
	ps, err := s.Participants(context.Background(), code)
	if err != nil {
		t.Fatalf("Participants(%s) = %v", code, err)
	}
	for i := range ps {
		if want := workshop.ParticipantKey(code, ps[i].Learner); ps[i].Key != want {
			t.Errorf("participant %s key = %q; want %q", ps[i].Learner, ps[i].Key, want)
		}
		ps[i].Key = "" // checked; the tests' wants leave it out
		ps[i].JoinedAt, ps[i].LastActive = ps[i].JoinedAt.UTC(), ps[i].LastActive.UTC()
	}
	return ps
}

func mustList(t *testing.T, s *workshop.Service) []workshop.Workshop {
	t.Helper()
	ws, err := s.List(context.Background())
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	for i := range ws {
		ws[i] = utc(ws[i])
	}
	return ws
}

func TestWorkshopLifecycle(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		if ws := mustList(t, s); len(ws) != 0 {
			t.Errorf("List() on a new store = %+v; want none", ws)
		}
		morning := workshop.Workshop{Code: "MORN1", Title: "Morning", StartedAt: t0}
		mustCreate(t, s, morning)
		mustCreate(t, s, workshop.Workshop{Code: "AFT2", Title: "  Afternoon\t", StartedAt: t0.Add(4 * time.Hour)})
		afternoon := workshop.Workshop{Code: "AFT2", Title: "Afternoon", StartedAt: t0.Add(4 * time.Hour)}

		err := s.Create(ctx, workshop.Workshop{Code: "MORN1", Title: "Impostor", StartedAt: t0.Add(time.Hour)})
		if !errors.Is(err, workshop.ErrExists) {
			t.Errorf("Create(taken code) = %v; want workshop.ErrExists", err)
		}
		w, err := s.Get(ctx, "MORN1")
		if err != nil || utc(w) != morning || !w.Running() {
			t.Errorf("Get(MORN1) = %+v, %v; want %+v, running", w, err, morning)
		}
		if _, err := s.Get(ctx, "NOPE1"); !errors.Is(err, workshop.ErrNotFound) {
			t.Errorf("Get(unknown) = %v; want workshop.ErrNotFound", err)
		}
		if ws, want := mustList(t, s), []workshop.Workshop{afternoon, morning}; !reflect.DeepEqual(ws, want) {
			t.Errorf("List() = %+v; want %+v", ws, want)
		}

		end := t0.Add(2 * time.Hour)
		if err := s.End(ctx, "MORN1", end); err != nil {
			t.Fatalf("End(MORN1) = %v", err)
		}
		if err := s.End(ctx, "MORN1", end.Add(time.Hour)); err != nil {
			t.Errorf("End(MORN1) again = %v; want nil", err)
		}
		ended := morning
		ended.EndedAt = end
		w, err = s.Get(ctx, "MORN1")
		if err != nil || utc(w) != ended || w.Running() {
			t.Errorf("after End twice, Get(MORN1) = %+v, %v; want %+v (first end time kept)", w, err, ended)
		}
		if err := s.End(ctx, "NOPE1", end); !errors.Is(err, workshop.ErrNotFound) {
			t.Errorf("End(unknown) = %v; want workshop.ErrNotFound", err)
		}
		if ws, want := mustList(t, s), []workshop.Workshop{afternoon, ended}; !reflect.DeepEqual(ws, want) {
			t.Errorf("List() = %+v; want %+v", ws, want)
		}
		for _, f := range []func() error{
			func() error { _, err := s.Stats(ctx, "NOPE1", t0); return err },
			func() error { _, err := s.Participants(ctx, "NOPE1"); return err },
			func() error { return s.Join(ctx, "NOPE1", alice, "", t0) },
			func() error {
				return s.Record(ctx, "NOPE1", alice, workshop.Event{Kind: workshop.EventCommand, At: t0})
			},
		} {
			if err := f(); !errors.Is(err, workshop.ErrNotFound) {
				t.Errorf("on an unknown workshop: %v; want workshop.ErrNotFound", err)
			}
		}
	})
}

func TestWorkshopsNewestFirstAtMost200(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		const n = maxWorkshops + 5
		for i := range n {
			// Start times out of order, to see that the list sorts them.
			j := (i * 7) % n
			mustCreate(t, s, workshop.Workshop{Code: fmt.Sprintf("W%04d", j), StartedAt: t0.Add(time.Duration(j) * time.Minute)})
		}
		ws := mustList(t, s)
		if len(ws) != maxWorkshops {
			t.Fatalf("List() returned %d; want %d", len(ws), maxWorkshops)
		}
		for i, w := range ws {
			if want := fmt.Sprintf("W%04d", n-1-i); w.Code != want {
				t.Fatalf("List()[%d] = %s; want %s (newest first)", i, w.Code, want)
			}
		}
	})
}

func TestWorkshopJoin(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "JOIN1", Title: "Joins", StartedAt: t0})
		minute := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
		mustJoin(t, s, "JOIN1", bob, "", minute(2))
		mustJoin(t, s, "JOIN1", alice, "Ann", minute(1))
		mustJoin(t, s, "JOIN1", alice, " Annie ", minute(3)) // a rename
		mustJoin(t, s, "JOIN1", alice, "", minute(4))        // keeps the name
		mustJoin(t, s, "JOIN1", carol, strings.Repeat("é", maxNickRunes), minute(5))
		want := []workshop.Participant{
			{Learner: alice, Nickname: "Annie", JoinedAt: minute(1), LastActive: minute(4)},
			{Learner: bob, JoinedAt: minute(2), LastActive: minute(2)},
			{Learner: carol, Nickname: strings.Repeat("é", maxNickRunes), JoinedAt: minute(5), LastActive: minute(5)},
		}
		if ps := mustParticipants(t, s, "JOIN1"); !reflect.DeepEqual(ps, want) {
			t.Errorf("participants = %+v\nwant %+v", ps, want)
		}
		if err := s.End(ctx, "JOIN1", minute(10)); err != nil {
			t.Fatal(err)
		}
		if err := s.Join(ctx, "JOIN1", dave, "Dave", minute(11)); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("Join(ended) = %v; want workshop.ErrEnded", err)
		}
		if err := s.Join(ctx, "JOIN1", alice, "Late", minute(11)); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("Join(ended, rename) = %v; want workshop.ErrEnded", err)
		}
		if ps := mustParticipants(t, s, "JOIN1"); !reflect.DeepEqual(ps, want) {
			t.Errorf("after joins to the ended workshop, participants = %+v\nwant %+v", ps, want)
		}
		if st := mustStats(t, s, "JOIN1", time.Time{}); st.Joined != 3 {
			t.Errorf("Joined = %d; want 3", st.Joined)
		}
	})
}

func TestWorkshopEvents(t *testing.T) {
	ctx := context.Background()
	answer := func(q, c string, right bool) workshop.Event {
		return workshop.Event{Kind: workshop.EventAnswer, Topic: "locks", Question: q, Choice: c, Correct: right}
	}
	complete := func(topic string) workshop.Event { return workshop.Event{Kind: workshop.EventComplete, Topic: topic} }
	command := workshop.Event{Kind: workshop.EventCommand}
	race := func(scenario string, predicted, right bool) workshop.Event {
		return workshop.Event{Kind: workshop.EventRace, Scenario: scenario, Predicted: predicted, PredictionRight: right}
	}
	lab := func(challenge string) workshop.Event {
		return workshop.Event{Kind: workshop.EventLabSolve, Challenge: challenge}
	}
	steps := []struct {
		learner string
		ev      workshop.Event
	}{
		{alice, answer("q1", "a", true)},
		{alice, answer("q1", "a", true)}, // a second try does not count as first right again
		{bob, answer("q1", "b", false)},
		{bob, answer("q1", "a", true)}, // right, but not on the first try
		{carol, answer("q2", "c", true)},
		{alice, complete("t1")},
		{alice, complete("t1")}, // once per participant and topic
		{bob, complete("t1")},
		{alice, complete("t2")},
		{alice, command}, {alice, command}, {alice, command}, {bob, command},
		{alice, race("gc-pause", true, true)},
		{bob, race("gc-pause", true, false)},
		{carol, race("fencing", false, false)},
		{carol, race("fencing", false, true)}, // no prediction, so not right either
		{carol, lab("c1")},
		{carol, lab("c1")}, // once per participant and challenge
		{alice, lab("c2")},
		// dave has not joined: ignored.
		{dave, answer("q1", "b", false)}, {dave, complete("t1")}, {dave, command}, {dave, race("normal", true, true)},
	}
	wantStats := workshop.Stats{
		Workshop: workshop.Workshop{Code: "EVENTS", Title: "Events", StartedAt: t0},
		Joined:   3,
		Active:   3,
		Questions: map[string]workshop.QuestionStats{
			"q1": {Choices: map[string]int{"a": 3, "b": 1}, FirstTries: 2, FirstRight: 1},
			"q2": {Choices: map[string]int{"c": 1}, FirstTries: 1, FirstRight: 1},
		},
		Completions: 3, Commands: 4, Races: 4, Predictions: 2, PredictionsRight: 1, LabSolves: 2,
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i+1) * time.Minute) }
	last := at(len(steps) - 1)
	wantParticipants := []workshop.Participant{
		{Learner: alice, Nickname: "Ann", JoinedAt: t0, LastActive: at(19), Answers: 2, FirstRight: 1, Completed: true, Commands: 3, Races: 1, LabSolves: 1},
		{Learner: bob, JoinedAt: t0, LastActive: at(14), Answers: 2, FirstRight: 0, Completed: true, Commands: 1, Races: 1},
		{Learner: carol, Nickname: "Cee", JoinedAt: t0, LastActive: at(18), Answers: 1, FirstRight: 1, Races: 2, LabSolves: 1},
	}

	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "EVENTS", Title: "Events", StartedAt: t0})
		mustJoin(t, s, "EVENTS", alice, "Ann", t0)
		mustJoin(t, s, "EVENTS", bob, "", t0)
		mustJoin(t, s, "EVENTS", carol, "Cee", t0)
		if st, want := mustStats(t, s, "EVENTS", t0), (workshop.Stats{Workshop: wantStats.Workshop, Joined: 3, Active: 3, Questions: map[string]workshop.QuestionStats{}}); !reflect.DeepEqual(st, want) {
			t.Errorf("stats before any event = %+v; want %+v", st, want)
		}
		for i, step := range steps {
			step.ev.At = at(i)
			// Alternate replicas: they must see each other's batches.
			mustRecord(t, []*workshop.Service{s, replica}[i%2], "EVENTS", step.learner, step.ev)
			if i%5 == 4 {
				mustFlush(t, s, replica) // some batches, then more on top
			}
		}
		mustFlush(t, replica)
		if st := mustStats(t, s, "EVENTS", t0); !reflect.DeepEqual(st, wantStats) {
			t.Errorf("stats = %+v\nwant %+v", st, wantStats)
		}
		if ps := mustParticipants(t, replica, "EVENTS"); !reflect.DeepEqual(ps, wantParticipants) {
			t.Errorf("participants = %+v\nwant %+v", ps, wantParticipants)
		}

		// After the end, events change nothing, not even who was active.
		if err := s.End(ctx, "EVENTS", last.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, step := range steps {
			step.ev.At = last.Add(2 * time.Minute)
			mustRecord(t, replica, "EVENTS", step.learner, step.ev)
		}
		mustFlush(t, replica)
		ended := wantStats
		ended.Workshop.EndedAt = last.Add(time.Minute)
		if st := mustStats(t, s, "EVENTS", t0); !reflect.DeepEqual(st, ended) {
			t.Errorf("stats after events past the end = %+v\nwant %+v", st, ended)
		}
		if ps := mustParticipants(t, s, "EVENTS"); !reflect.DeepEqual(ps, wantParticipants) {
			t.Errorf("participants after events past the end = %+v\nwant %+v", ps, wantParticipants)
		}
	})
}

func TestWorkshopActive(t *testing.T) {
	minute := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "ACTIVE", StartedAt: t0})
		mustJoin(t, s, "ACTIVE", alice, "", minute(0))
		mustJoin(t, s, "ACTIVE", bob, "", minute(1))
		mustJoin(t, s, "ACTIVE", carol, "", minute(2))
		mustRecord(t, s, "ACTIVE", alice, workshop.Event{Kind: workshop.EventCommand, At: minute(10)})
		// An event that arrives late does not move the last activity back.
		mustRecord(t, s, "ACTIVE", alice, workshop.Event{Kind: workshop.EventCommand, At: minute(3)})
		mustJoin(t, s, "ACTIVE", carol, "Cee", minute(8)) // joining again is activity
		for _, tt := range []struct {
			since time.Time
			want  int
		}{
			{time.Time{}, 3},
			{minute(1), 3}, // at activeSince counts
			{minute(2), 2},
			{minute(8), 2},
			{minute(9), 1},
			{minute(10), 1},
			{minute(11), 0},
		} {
			if st := mustStats(t, s, "ACTIVE", tt.since); st.Active != tt.want || st.Joined != 3 {
				t.Errorf("workshop.Stats(since %v) Active, Joined = %d, %d; want %d, 3", tt.since, st.Active, st.Joined, tt.want)
			}
		}
		if ps := mustParticipants(t, s, "ACTIVE"); !ps[0].LastActive.Equal(minute(10)) {
			t.Errorf("alice last active %v; want %v", ps[0].LastActive, minute(10))
		}
	})
}

// TestWorkshopConcurrentEvents records events from 20 goroutines at once,
// half of them through a second Store on the same Redis (a second
// replica): no count may be lost, and first tries and completions must
// still count once per participant.
func TestWorkshopConcurrentEvents(t *testing.T) {
	const (
		goroutines = 20
		learners   = 10
		commands   = 10 // per goroutine
	)
	learner := func(k int) string { return fmt.Sprintf("learner-%02d-01234567890", k) }
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "BUSY", StartedAt: t0})
		for k := range learners {
			mustJoin(t, s, "BUSY", learner(k), "", t0)
		}
		var wg sync.WaitGroup
		for i := range goroutines {
			wg.Go(func() {
				st, k := []*workshop.Service{s, replica}[i%2], i%learners
				right := k%2 == 0 // the same for both goroutines of a learner
				choice := map[bool]string{true: "a", false: "b"}[right]
				evs := []workshop.Event{
					{Kind: workshop.EventAnswer, Question: "q1", Choice: choice, Correct: right},
					{Kind: workshop.EventComplete, Topic: "locks"},
					{Kind: workshop.EventRace, Scenario: "gc-pause", Predicted: true, PredictionRight: right},
				}
				for range commands {
					evs = append(evs, workshop.Event{Kind: workshop.EventCommand})
				}
				for j, ev := range evs {
					ev.At = t0.Add(time.Duration(j) * time.Second)
					mustRecord(t, st, "BUSY", learner(k), ev)
				}
			})
		}
		wg.Wait()
		mustFlush(t, s, replica)
		want := workshop.Stats{
			Workshop: workshop.Workshop{Code: "BUSY", StartedAt: t0},
			Joined:   learners, Active: learners,
			Questions: map[string]workshop.QuestionStats{
				"q1": {Choices: map[string]int{"a": goroutines / 2, "b": goroutines / 2}, FirstTries: learners, FirstRight: learners / 2},
			},
			Completions: learners, Commands: goroutines * commands,
			Races: goroutines, Predictions: goroutines, PredictionsRight: goroutines / 2,
		}
		if st := mustStats(t, replica, "BUSY", t0); !reflect.DeepEqual(st, want) {
			t.Errorf("stats = %+v\nwant %+v", st, want)
		}
		ps := mustParticipants(t, s, "BUSY")
		if len(ps) != learners {
			t.Fatalf("%d participants; want %d", len(ps), learners)
		}
		byLearner := map[string]workshop.Participant{}
		for _, p := range ps {
			byLearner[p.Learner] = p
		}
		for k := range learners {
			p, wantFirst := byLearner[learner(k)], 1-k%2
			if p.Answers != 2 || p.FirstRight != wantFirst || !p.Completed || p.Commands != 2*commands || p.Races != 2 {
				t.Errorf("participant %+v; want 2 answers, %d first right, completed, %d commands, 2 races", p, wantFirst, 2*commands)
			}
		}
	})
}

// TestWorkshopBadLearner checks the one rule the store adds to the
// workshop package's: a malformed learner id is bad input (and
// ErrBadLearner), and nothing is written. The workshop package tests the
// other inputs.
func TestWorkshopBadLearner(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "GOOD", StartedAt: t0})
		mustJoin(t, s, "GOOD", alice, "Ann", t0)
		before := mustStats(t, s, "GOOD", t0)
		beforeParticipants := mustParticipants(t, s, "GOOD")
		for _, tt := range []struct {
			name string
			call func() error
		}{
			{"join short learner", func() error { return s.Join(ctx, "GOOD", "bob", "", t0) }},
			{"join learner with slash", func() error { return s.Join(ctx, "GOOD", "bob/x-0123456789abcd", "", t0) }},
			{"event learner with slash", func() error {
				return s.Record(ctx, "GOOD", "alice/x-0123456789ab", workshop.Event{Kind: workshop.EventCommand, At: t0})
			}},
			{"event empty learner", func() error {
				return s.Record(ctx, "GOOD", "", workshop.Event{Kind: workshop.EventCommand, At: t0})
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, workshop.ErrBadInput) || !errors.Is(err, ErrBadLearner) {
					t.Errorf("got %v; want workshop.ErrBadInput and ErrBadLearner", err)
				}
			})
		}
		if got := mustStats(t, s, "GOOD", t0); !reflect.DeepEqual(got, before) {
			t.Errorf("after bad learners, stats = %+v; want %+v", got, before)
		}
		if got := mustParticipants(t, s, "GOOD"); !reflect.DeepEqual(got, beforeParticipants) {
			t.Errorf("after bad learners, participants = %+v; want %+v", got, beforeParticipants)
		}
	})
}

func TestWorkshopBoltSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newService(st)
	mustCreate(t, s, workshop.Workshop{Code: "KEEP", Title: "Kept", StartedAt: t0})
	mustJoin(t, s, "KEEP", alice, "Ann", t0)
	mustRecord(t, s, "KEEP", alice, workshop.Event{Kind: workshop.EventCommand, At: t0})
	want := mustStats(t, s, "KEEP", t0)
	// The server's shutdown: what waits in memory is written before the
	// file is closed.
	mustFlush(t, s)
	st.Close()
	st, err = OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st := mustStats(t, newService(st), "KEEP", t0); !reflect.DeepEqual(st, want) || st.Commands != 1 {
		t.Errorf("after reopen, stats = %+v; want %+v", st, want)
	}
}

// TestWorkshopRedisTTL checks that every key of a workshop expires long
// after its last write, together with the others, and that the list then
// forgets it.
func TestWorkshopRedisTTL(t *testing.T) {
	m := miniredis.RunT(t)
	s := newService(openRedisStore(t, m.Addr()))
	mustCreate(t, s, workshop.Workshop{Code: "TTL1", StartedAt: t0})
	mustJoin(t, s, "TTL1", alice, "Ann", t0)
	mustRecord(t, s, "TTL1", alice, workshop.Event{Kind: workshop.EventAnswer, Question: "q1", Choice: "a", At: t0})
	mustFlush(t, s)
	m.FastForward(300 * 24 * time.Hour)
	mustRecord(t, s, "TTL1", alice, workshop.Event{Kind: workshop.EventComplete, Topic: "locks", At: t0})
	mustFlush(t, s)
	var keys []string
	for _, k := range m.Keys() {
		if strings.HasPrefix(k, "locklab:ws:{TTL1}") {
			keys = append(keys, k)
			if ttl := m.TTL(k); ttl != workshopTTL {
				t.Errorf("TTL(%s) = %v; want %v, refreshed by the last write", k, ttl, workshopTTL)
			}
		}
	}
	if len(keys) != 9 {
		t.Errorf("workshop keys = %q; want 9", keys)
	}
	m.FastForward(workshopTTL + time.Second)
	if _, err := s.Get(context.Background(), "TTL1"); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("Get(expired) = %v; want workshop.ErrNotFound", err)
	}
	if ws := mustList(t, s); len(ws) != 0 {
		t.Errorf("List() = %+v; want the expired workshop gone", ws)
	}
	if m.Exists("locklab:workshops") {
		t.Errorf("index still holds %v; want the expired code pruned", m.Keys())
	}
	// The code can be used again, from scratch.
	mustCreate(t, s, workshop.Workshop{Code: "TTL1", StartedAt: t0.Add(time.Hour)})
	if st := mustStats(t, s, "TTL1", t0); st.Joined != 0 || len(st.Questions) != 0 || st.Completions != 0 {
		t.Errorf("reused code stats = %+v; want a fresh workshop", st)
	}
}

// TestWorkshopRedisOutage stops Redis: every workshop call must fail with
// ErrUnavailable within a second, and work again once Redis is back.
func TestWorkshopRedisOutage(t *testing.T) {
	ctx := context.Background()
	srv := redistest.StartServer(t)
	s := newService(openRedisStore(t, srv.Addr))
	mustCreate(t, s, workshop.Workshop{Code: "DOWN", StartedAt: t0})
	mustJoin(t, s, "DOWN", alice, "", t0)
	srv.Stop()
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"Create", func() error { return s.Create(ctx, workshop.Workshop{Code: "DOWN2", StartedAt: t0}) }},
		{"Get", func() error { _, err := s.Get(ctx, "DOWN"); return err }},
		{"List", func() error { _, err := s.List(ctx); return err }},
		{"End", func() error { return s.End(ctx, "DOWN", t0) }},
		{"Join", func() error { return s.Join(ctx, "DOWN", bob, "", t0) }},
		{"Record", func() error {
			return s.Record(ctx, "DOWN", alice, workshop.Event{Kind: workshop.EventCommand, At: t0})
		}},
		{"Stats", func() error { _, err := s.Stats(ctx, "DOWN", t0); return err }},
		{"Participants", func() error { _, err := s.Participants(ctx, "DOWN"); return err }},
	} {
		start := time.Now()
		err := tt.call()
		if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > time.Second {
			t.Errorf("%s with Redis down: %v after %v; want ErrUnavailable within 1s", tt.name, err, took)
		}
	}
	// The server comes back empty (no persistence): the same code is free.
	redistest.StartOnPort(t, srv.Port)
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for {
		err = s.Create(ctx, workshop.Workshop{Code: "DOWN", StartedAt: t0})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after Redis came back: %v", err)
	}
	mustJoin(t, s, "DOWN", alice, "", t0)
	mustRecord(t, s, "DOWN", alice, workshop.Event{Kind: workshop.EventCommand, At: t0})
	if st := mustStats(t, s, "DOWN", t0); st.Commands != 1 {
		t.Errorf("after recovery, commands = %d; want 1", st.Commands)
	}
}

// TestWorkshopFull checks the cap on participants: a newcomer beyond it
// gets workshop.ErrFull, while those already in may rejoin and rename,
// and other workshops are not affected. The back end checks the cap in
// the same atomic step as the join, so replicas cannot both let one more
// in.
func TestWorkshopFull(t *testing.T) {
	ctx := context.Background()
	forEachBackendWith(t, workshop.Options{MaxParticipants: 2}, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "FULL1", Title: "Small", StartedAt: t0})
		mustCreate(t, s, workshop.Workshop{Code: "FULL2", Title: "Other", StartedAt: t0})
		mustJoin(t, s, "FULL1", alice, "Ann", t0)
		mustJoin(t, replica, "FULL1", bob, "", t0)
		for _, st := range []*workshop.Service{s, replica} {
			if err := st.Join(ctx, "FULL1", carol, "Carol", t0); !errors.Is(err, workshop.ErrFull) {
				t.Errorf("third Join = %v; want workshop.ErrFull", err)
			}
		}
		mustJoin(t, replica, "FULL1", alice, "Annie", t0.Add(time.Minute))
		mustJoin(t, s, "FULL2", carol, "Carol", t0)
		if st := mustStats(t, s, "FULL1", time.Time{}); st.Joined != 2 {
			t.Errorf("Joined = %d; want 2", st.Joined)
		}
	})
}
