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
	}
}

// forEachBackend runs f against a fresh store of every kind.
func forEachBackend(t *testing.T, f func(t *testing.T, s, replica *Store)) {
	t.Helper()
	for name, open := range workshopBackends() {
		t.Run(name, func(t *testing.T) {
			s, replica := open(t)
			f(t, s, replica)
		})
	}
}

// utc makes times comparable with reflect.DeepEqual: back ends return
// them in the local zone.
func utc(w Workshop) Workshop {
	w.StartedAt = w.StartedAt.UTC()
	if !w.EndedAt.IsZero() {
		w.EndedAt = w.EndedAt.UTC()
	}
	return w
}

func mustCreate(t *testing.T, s *Store, w Workshop) {
	t.Helper()
	if err := s.CreateWorkshop(context.Background(), w); err != nil {
		t.Fatalf("CreateWorkshop(%+v) = %v", w, err)
	}
}

func mustJoin(t *testing.T, s *Store, code, learner, nickname string, at time.Time) {
	t.Helper()
	if err := s.JoinWorkshop(context.Background(), code, learner, nickname, at); err != nil {
		t.Fatalf("JoinWorkshop(%s, %s, %q) = %v", code, learner, nickname, err)
	}
}

func mustRecord(t *testing.T, s *Store, code, learner string, ev WorkshopEvent) {
	t.Helper()
	if err := s.RecordWorkshopEvent(context.Background(), code, learner, ev); err != nil {
		t.Errorf("RecordWorkshopEvent(%s, %s, %+v) = %v", code, learner, ev, err)
	}
}

func mustStats(t *testing.T, s *Store, code string, activeSince time.Time) WorkshopStats {
	t.Helper()
	st, err := s.WorkshopStats(context.Background(), code, activeSince)
	if err != nil {
		t.Fatalf("WorkshopStats(%s) = %v", code, err)
	}
	st.Workshop = utc(st.Workshop)
	return st
}

func mustParticipants(t *testing.T, s *Store, code string) []Participant {
	t.Helper()
	ps, err := s.WorkshopParticipants(context.Background(), code)
	if err != nil {
		t.Fatalf("WorkshopParticipants(%s) = %v", code, err)
	}
	for i := range ps {
		ps[i].JoinedAt, ps[i].LastActive = ps[i].JoinedAt.UTC(), ps[i].LastActive.UTC()
	}
	return ps
}

func mustList(t *testing.T, s *Store) []Workshop {
	t.Helper()
	ws, err := s.Workshops(context.Background())
	if err != nil {
		t.Fatalf("Workshops() = %v", err)
	}
	for i := range ws {
		ws[i] = utc(ws[i])
	}
	return ws
}

func TestWorkshopLifecycle(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, _ *Store) {
		if ws := mustList(t, s); len(ws) != 0 {
			t.Errorf("Workshops() on a new store = %+v; want none", ws)
		}
		morning := Workshop{Code: "MORN1", Title: "Morning", StartedAt: t0}
		mustCreate(t, s, morning)
		mustCreate(t, s, Workshop{Code: "AFT2", Title: "  Afternoon\t", StartedAt: t0.Add(4 * time.Hour)})
		afternoon := Workshop{Code: "AFT2", Title: "Afternoon", StartedAt: t0.Add(4 * time.Hour)}

		err := s.CreateWorkshop(ctx, Workshop{Code: "MORN1", Title: "Impostor", StartedAt: t0.Add(time.Hour)})
		if !errors.Is(err, ErrExists) {
			t.Errorf("CreateWorkshop(taken code) = %v; want ErrExists", err)
		}
		w, err := s.Workshop(ctx, "MORN1")
		if err != nil || utc(w) != morning || !w.Running() {
			t.Errorf("Workshop(MORN1) = %+v, %v; want %+v, running", w, err, morning)
		}
		if _, err := s.Workshop(ctx, "NOPE1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Workshop(unknown) = %v; want ErrNotFound", err)
		}
		if ws, want := mustList(t, s), []Workshop{afternoon, morning}; !reflect.DeepEqual(ws, want) {
			t.Errorf("Workshops() = %+v; want %+v", ws, want)
		}

		end := t0.Add(2 * time.Hour)
		if err := s.EndWorkshop(ctx, "MORN1", end); err != nil {
			t.Fatalf("EndWorkshop(MORN1) = %v", err)
		}
		if err := s.EndWorkshop(ctx, "MORN1", end.Add(time.Hour)); err != nil {
			t.Errorf("EndWorkshop(MORN1) again = %v; want nil", err)
		}
		ended := morning
		ended.EndedAt = end
		w, err = s.Workshop(ctx, "MORN1")
		if err != nil || utc(w) != ended || w.Running() {
			t.Errorf("after EndWorkshop twice, Workshop(MORN1) = %+v, %v; want %+v (first end time kept)", w, err, ended)
		}
		if err := s.EndWorkshop(ctx, "NOPE1", end); !errors.Is(err, ErrNotFound) {
			t.Errorf("EndWorkshop(unknown) = %v; want ErrNotFound", err)
		}
		if ws, want := mustList(t, s), []Workshop{afternoon, ended}; !reflect.DeepEqual(ws, want) {
			t.Errorf("Workshops() = %+v; want %+v", ws, want)
		}
		for _, f := range []func() error{
			func() error { _, err := s.WorkshopStats(ctx, "NOPE1", t0); return err },
			func() error { _, err := s.WorkshopParticipants(ctx, "NOPE1"); return err },
			func() error { return s.JoinWorkshop(ctx, "NOPE1", alice, "", t0) },
			func() error {
				return s.RecordWorkshopEvent(ctx, "NOPE1", alice, WorkshopEvent{Kind: EventCommand, At: t0})
			},
		} {
			if err := f(); !errors.Is(err, ErrNotFound) {
				t.Errorf("on an unknown workshop: %v; want ErrNotFound", err)
			}
		}
	})
}

func TestWorkshopsNewestFirstAtMost200(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, _ *Store) {
		const n = maxWorkshops + 5
		for i := range n {
			// Start times out of order, to see that the list sorts them.
			j := (i * 7) % n
			mustCreate(t, s, Workshop{Code: fmt.Sprintf("W%04d", j), StartedAt: t0.Add(time.Duration(j) * time.Minute)})
		}
		ws := mustList(t, s)
		if len(ws) != maxWorkshops {
			t.Fatalf("Workshops() returned %d; want %d", len(ws), maxWorkshops)
		}
		for i, w := range ws {
			if want := fmt.Sprintf("W%04d", n-1-i); w.Code != want {
				t.Fatalf("Workshops()[%d] = %s; want %s (newest first)", i, w.Code, want)
			}
		}
	})
}

func TestWorkshopJoin(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, _ *Store) {
		mustCreate(t, s, Workshop{Code: "JOIN1", Title: "Joins", StartedAt: t0})
		minute := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
		mustJoin(t, s, "JOIN1", bob, "", minute(2))
		mustJoin(t, s, "JOIN1", alice, "Ann", minute(1))
		mustJoin(t, s, "JOIN1", alice, " Annie ", minute(3)) // a rename
		mustJoin(t, s, "JOIN1", alice, "", minute(4))        // keeps the name
		mustJoin(t, s, "JOIN1", carol, strings.Repeat("é", maxNickRunes), minute(5))
		want := []Participant{
			{Learner: alice, Nickname: "Annie", JoinedAt: minute(1), LastActive: minute(4)},
			{Learner: bob, JoinedAt: minute(2), LastActive: minute(2)},
			{Learner: carol, Nickname: strings.Repeat("é", maxNickRunes), JoinedAt: minute(5), LastActive: minute(5)},
		}
		if ps := mustParticipants(t, s, "JOIN1"); !reflect.DeepEqual(ps, want) {
			t.Errorf("participants = %+v\nwant %+v", ps, want)
		}
		if err := s.EndWorkshop(ctx, "JOIN1", minute(10)); err != nil {
			t.Fatal(err)
		}
		if err := s.JoinWorkshop(ctx, "JOIN1", dave, "Dave", minute(11)); !errors.Is(err, ErrEnded) {
			t.Errorf("JoinWorkshop(ended) = %v; want ErrEnded", err)
		}
		if err := s.JoinWorkshop(ctx, "JOIN1", alice, "Late", minute(11)); !errors.Is(err, ErrEnded) {
			t.Errorf("JoinWorkshop(ended, rename) = %v; want ErrEnded", err)
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
	answer := func(q, c string, right bool) WorkshopEvent {
		return WorkshopEvent{Kind: EventAnswer, Topic: "locks", Question: q, Choice: c, Correct: right}
	}
	complete := func(topic string) WorkshopEvent { return WorkshopEvent{Kind: EventComplete, Topic: topic} }
	command := WorkshopEvent{Kind: EventCommand}
	race := func(scenario string, predicted, right bool) WorkshopEvent {
		return WorkshopEvent{Kind: EventRace, Scenario: scenario, Predicted: predicted, PredictionRight: right}
	}
	steps := []struct {
		learner string
		ev      WorkshopEvent
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
		// dave has not joined: ignored.
		{dave, answer("q1", "b", false)}, {dave, complete("t1")}, {dave, command}, {dave, race("normal", true, true)},
	}
	wantStats := WorkshopStats{
		Workshop: Workshop{Code: "EVENTS", Title: "Events", StartedAt: t0},
		Joined:   3,
		Active:   3,
		Questions: map[string]QuestionStats{
			"q1": {Choices: map[string]int{"a": 3, "b": 1}, FirstTries: 2, FirstRight: 1},
			"q2": {Choices: map[string]int{"c": 1}, FirstTries: 1, FirstRight: 1},
		},
		Completions: 3, Commands: 4, Races: 4, Predictions: 2, PredictionsRight: 1,
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i+1) * time.Minute) }
	last := at(len(steps) - 1)
	wantParticipants := []Participant{
		{Learner: alice, Nickname: "Ann", JoinedAt: t0, LastActive: at(13), Answers: 2, FirstRight: 1, Completed: true, Commands: 3, Races: 1},
		{Learner: bob, JoinedAt: t0, LastActive: at(14), Answers: 2, FirstRight: 0, Completed: true, Commands: 1, Races: 1},
		{Learner: carol, Nickname: "Cee", JoinedAt: t0, LastActive: at(16), Answers: 1, FirstRight: 1, Races: 2},
	}

	forEachBackend(t, func(t *testing.T, s, replica *Store) {
		mustCreate(t, s, Workshop{Code: "EVENTS", Title: "Events", StartedAt: t0})
		mustJoin(t, s, "EVENTS", alice, "Ann", t0)
		mustJoin(t, s, "EVENTS", bob, "", t0)
		mustJoin(t, s, "EVENTS", carol, "Cee", t0)
		if st, want := mustStats(t, s, "EVENTS", t0), (WorkshopStats{Workshop: wantStats.Workshop, Joined: 3, Active: 3, Questions: map[string]QuestionStats{}}); !reflect.DeepEqual(st, want) {
			t.Errorf("stats before any event = %+v; want %+v", st, want)
		}
		for i, step := range steps {
			step.ev.At = at(i)
			// Alternate replicas: they must see each other's writes.
			mustRecord(t, []*Store{s, replica}[i%2], "EVENTS", step.learner, step.ev)
		}
		if st := mustStats(t, s, "EVENTS", t0); !reflect.DeepEqual(st, wantStats) {
			t.Errorf("stats = %+v\nwant %+v", st, wantStats)
		}
		if ps := mustParticipants(t, replica, "EVENTS"); !reflect.DeepEqual(ps, wantParticipants) {
			t.Errorf("participants = %+v\nwant %+v", ps, wantParticipants)
		}

		// After the end, events change nothing, not even who was active.
		if err := s.EndWorkshop(ctx, "EVENTS", last.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, step := range steps {
			step.ev.At = last.Add(2 * time.Minute)
			mustRecord(t, replica, "EVENTS", step.learner, step.ev)
		}
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
	forEachBackend(t, func(t *testing.T, s, _ *Store) {
		mustCreate(t, s, Workshop{Code: "ACTIVE", StartedAt: t0})
		mustJoin(t, s, "ACTIVE", alice, "", minute(0))
		mustJoin(t, s, "ACTIVE", bob, "", minute(1))
		mustJoin(t, s, "ACTIVE", carol, "", minute(2))
		mustRecord(t, s, "ACTIVE", alice, WorkshopEvent{Kind: EventCommand, At: minute(10)})
		// An event that arrives late does not move the last activity back.
		mustRecord(t, s, "ACTIVE", alice, WorkshopEvent{Kind: EventCommand, At: minute(3)})
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
				t.Errorf("WorkshopStats(since %v) Active, Joined = %d, %d; want %d, 3", tt.since, st.Active, st.Joined, tt.want)
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
	forEachBackend(t, func(t *testing.T, s, replica *Store) {
		mustCreate(t, s, Workshop{Code: "BUSY", StartedAt: t0})
		for k := range learners {
			mustJoin(t, s, "BUSY", learner(k), "", t0)
		}
		var wg sync.WaitGroup
		for i := range goroutines {
			wg.Go(func() {
				st, k := []*Store{s, replica}[i%2], i%learners
				right := k%2 == 0 // the same for both goroutines of a learner
				choice := map[bool]string{true: "a", false: "b"}[right]
				evs := []WorkshopEvent{
					{Kind: EventAnswer, Question: "q1", Choice: choice, Correct: right},
					{Kind: EventComplete, Topic: "locks"},
					{Kind: EventRace, Scenario: "gc-pause", Predicted: true, PredictionRight: right},
				}
				for range commands {
					evs = append(evs, WorkshopEvent{Kind: EventCommand})
				}
				for j, ev := range evs {
					ev.At = t0.Add(time.Duration(j) * time.Second)
					mustRecord(t, st, "BUSY", learner(k), ev)
				}
			})
		}
		wg.Wait()
		want := WorkshopStats{
			Workshop: Workshop{Code: "BUSY", StartedAt: t0},
			Joined:   learners, Active: learners,
			Questions: map[string]QuestionStats{
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
		byLearner := map[string]Participant{}
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

// TestWorkshopBadInput checks that malformed arguments fail with
// ErrBadInput and change nothing.
func TestWorkshopBadInput(t *testing.T) {
	ctx := context.Background()
	long := func(n int) string { return strings.Repeat("é", n) }
	forEachBackend(t, func(t *testing.T, s, _ *Store) {
		mustCreate(t, s, Workshop{Code: "GOOD", Title: long(maxTitleRunes), StartedAt: t0})
		mustJoin(t, s, "GOOD", alice, long(maxNickRunes), t0)
		mustRecord(t, s, "GOOD", alice, WorkshopEvent{Kind: EventAnswer, Question: "q1", Choice: "a", Correct: true, At: t0})
		beforeList := mustList(t, s)
		beforeStats := mustStats(t, s, "GOOD", t0)
		beforeParticipants := mustParticipants(t, s, "GOOD")

		ev := func(kind, topic, question, choice, scenario string) WorkshopEvent {
			return WorkshopEvent{Kind: kind, Topic: topic, Question: question, Choice: choice, Scenario: scenario, At: t0}
		}
		for _, tt := range []struct {
			name string
			call func() error
		}{
			{"create lower-case code", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "good2", StartedAt: t0}) }},
			{"create short code", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "ABC", StartedAt: t0}) }},
			{"create long code", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "ABCDEFGHIJKLM", StartedAt: t0}) }},
			{"create code with dash", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "AB-CD", StartedAt: t0}) }},
			{"create long title", func() error {
				return s.CreateWorkshop(ctx, Workshop{Code: "NEW1", Title: long(maxTitleRunes + 1), StartedAt: t0})
			}},
			{"create title with control", func() error {
				return s.CreateWorkshop(ctx, Workshop{Code: "NEW1", Title: "a\x00b", StartedAt: t0})
			}},
			{"create title not UTF-8", func() error {
				return s.CreateWorkshop(ctx, Workshop{Code: "NEW1", Title: "a\xffb", StartedAt: t0})
			}},
			{"create without start", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "NEW1"}) }},
			{"create ended", func() error {
				return s.CreateWorkshop(ctx, Workshop{Code: "NEW1", StartedAt: t0, EndedAt: t0.Add(time.Hour)})
			}},
			{"get bad code", func() error { _, err := s.Workshop(ctx, "good"); return err }},
			{"end bad code", func() error { return s.EndWorkshop(ctx, "GO OD", t0) }},
			{"end without time", func() error { return s.EndWorkshop(ctx, "GOOD", time.Time{}) }},
			{"join bad code", func() error { return s.JoinWorkshop(ctx, "", bob, "", t0) }},
			{"join bad learner", func() error { return s.JoinWorkshop(ctx, "GOOD", "bob", "", t0) }},
			{"join long nickname", func() error { return s.JoinWorkshop(ctx, "GOOD", bob, long(maxNickRunes+1), t0) }},
			{"rename to long nickname", func() error { return s.JoinWorkshop(ctx, "GOOD", alice, long(maxNickRunes+1), t0) }},
			{"join nickname with newline", func() error { return s.JoinWorkshop(ctx, "GOOD", bob, "a\nb", t0) }},
			{"join without time", func() error { return s.JoinWorkshop(ctx, "GOOD", bob, "", time.Time{}) }},
			{"event bad code", func() error { return s.RecordWorkshopEvent(ctx, "GOOD!", alice, ev(EventCommand, "", "", "", "")) }},
			{"event bad learner", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", "alice/x-0123456789ab", ev(EventCommand, "", "", "", ""))
			}},
			{"event unknown kind", func() error { return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev("dance", "", "", "", "")) }},
			{"event without time", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, WorkshopEvent{Kind: EventCommand})
			}},
			{"answer upper-case question", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventAnswer, "", "Q1", "a", ""))
			}},
			{"answer question with slash", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventAnswer, "", "q1/a", "a", ""))
			}},
			{"answer long question", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventAnswer, "", strings.Repeat("q", maxIDLen+1), "a", ""))
			}},
			{"answer without choice", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventAnswer, "", "q1", "", ""))
			}},
			{"complete without topic", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventComplete, "", "", "", ""))
			}},
			{"race bad scenario", func() error {
				return s.RecordWorkshopEvent(ctx, "GOOD", alice, ev(EventRace, "", "", "", "gc pause"))
			}},
			{"stats bad code", func() error { _, err := s.WorkshopStats(ctx, "x", t0); return err }},
			{"participants bad code", func() error { _, err := s.WorkshopParticipants(ctx, "x"); return err }},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, ErrBadInput) {
					t.Errorf("got %v; want ErrBadInput", err)
				}
			})
		}
		if got := mustList(t, s); !reflect.DeepEqual(got, beforeList) {
			t.Errorf("after bad inputs, Workshops() = %+v; want %+v", got, beforeList)
		}
		if got := mustStats(t, s, "GOOD", t0); !reflect.DeepEqual(got, beforeStats) {
			t.Errorf("after bad inputs, stats = %+v; want %+v", got, beforeStats)
		}
		if got := mustParticipants(t, s, "GOOD"); !reflect.DeepEqual(got, beforeParticipants) {
			t.Errorf("after bad inputs, participants = %+v; want %+v", got, beforeParticipants)
		}
	})
}

// A mistyped code is no workshop at all, so the web layer can tell the
// learner just that.
func TestWorkshopMalformedCodeIsNotFound(t *testing.T) {
	s, _ := workshopBackends()["bolt"](t)
	err := s.JoinWorkshop(context.Background(), "k7q", alice, "", t0)
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrBadInput) {
		t.Errorf("JoinWorkshop(malformed code) = %v; want ErrNotFound and ErrBadInput", err)
	}
}

func TestWorkshopBoltSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Workshop{Code: "KEEP", Title: "Kept", StartedAt: t0})
	mustJoin(t, s, "KEEP", alice, "Ann", t0)
	mustRecord(t, s, "KEEP", alice, WorkshopEvent{Kind: EventCommand, At: t0})
	want := mustStats(t, s, "KEEP", t0)
	s.Close()
	s, err = OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := mustStats(t, s, "KEEP", t0); !reflect.DeepEqual(st, want) || st.Commands != 1 {
		t.Errorf("after reopen, stats = %+v; want %+v", st, want)
	}
}

// TestWorkshopRedisTTL checks that every key of a workshop expires long
// after its last write, together with the others, and that the list then
// forgets it.
func TestWorkshopRedisTTL(t *testing.T) {
	m := miniredis.RunT(t)
	s := openRedisStore(t, m.Addr())
	mustCreate(t, s, Workshop{Code: "TTL1", StartedAt: t0})
	mustJoin(t, s, "TTL1", alice, "Ann", t0)
	mustRecord(t, s, "TTL1", alice, WorkshopEvent{Kind: EventAnswer, Question: "q1", Choice: "a", At: t0})
	m.FastForward(300 * 24 * time.Hour)
	mustRecord(t, s, "TTL1", alice, WorkshopEvent{Kind: EventComplete, Topic: "locks", At: t0})
	var keys []string
	for _, k := range m.Keys() {
		if strings.HasPrefix(k, "locklab:ws:TTL1") {
			keys = append(keys, k)
			if ttl := m.TTL(k); ttl != workshopTTL {
				t.Errorf("TTL(%s) = %v; want %v, refreshed by the last write", k, ttl, workshopTTL)
			}
		}
	}
	if len(keys) != 8 {
		t.Errorf("workshop keys = %q; want 8", keys)
	}
	m.FastForward(workshopTTL + time.Second)
	if _, err := s.Workshop(context.Background(), "TTL1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Workshop(expired) = %v; want ErrNotFound", err)
	}
	if ws := mustList(t, s); len(ws) != 0 {
		t.Errorf("Workshops() = %+v; want the expired workshop gone", ws)
	}
	if m.Exists("locklab:workshops") {
		t.Errorf("index still holds %v; want the expired code pruned", m.Keys())
	}
	// The code can be used again, from scratch.
	mustCreate(t, s, Workshop{Code: "TTL1", StartedAt: t0.Add(time.Hour)})
	if st := mustStats(t, s, "TTL1", t0); st.Joined != 0 || len(st.Questions) != 0 || st.Completions != 0 {
		t.Errorf("reused code stats = %+v; want a fresh workshop", st)
	}
}

// TestWorkshopRedisOutage stops Redis: every workshop call must fail with
// ErrUnavailable within a second, and work again once Redis is back.
func TestWorkshopRedisOutage(t *testing.T) {
	ctx := context.Background()
	srv := redistest.StartServer(t)
	s := openRedisStore(t, srv.Addr)
	mustCreate(t, s, Workshop{Code: "DOWN", StartedAt: t0})
	mustJoin(t, s, "DOWN", alice, "", t0)
	srv.Stop()
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"CreateWorkshop", func() error { return s.CreateWorkshop(ctx, Workshop{Code: "DOWN2", StartedAt: t0}) }},
		{"Workshop", func() error { _, err := s.Workshop(ctx, "DOWN"); return err }},
		{"Workshops", func() error { _, err := s.Workshops(ctx); return err }},
		{"EndWorkshop", func() error { return s.EndWorkshop(ctx, "DOWN", t0) }},
		{"JoinWorkshop", func() error { return s.JoinWorkshop(ctx, "DOWN", bob, "", t0) }},
		{"RecordWorkshopEvent", func() error {
			return s.RecordWorkshopEvent(ctx, "DOWN", alice, WorkshopEvent{Kind: EventCommand, At: t0})
		}},
		{"WorkshopStats", func() error { _, err := s.WorkshopStats(ctx, "DOWN", t0); return err }},
		{"WorkshopParticipants", func() error { _, err := s.WorkshopParticipants(ctx, "DOWN"); return err }},
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
		err = s.CreateWorkshop(ctx, Workshop{Code: "DOWN", StartedAt: t0})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after Redis came back: %v", err)
	}
	mustJoin(t, s, "DOWN", alice, "", t0)
	mustRecord(t, s, "DOWN", alice, WorkshopEvent{Kind: EventCommand, At: t0})
	if st := mustStats(t, s, "DOWN", t0); st.Commands != 1 {
		t.Errorf("after recovery, commands = %d; want 1", st.Commands)
	}
}

// TestWorkshopFull checks the cap on participants: a newcomer beyond it
// gets ErrFull, while those already in may rejoin and rename, and other
// workshops are not affected.
func TestWorkshopFull(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, replica *Store) {
		s.SetMaxParticipants(2)
		replica.SetMaxParticipants(2)
		mustCreate(t, s, Workshop{Code: "FULL1", Title: "Small", StartedAt: t0})
		mustCreate(t, s, Workshop{Code: "FULL2", Title: "Other", StartedAt: t0})
		mustJoin(t, s, "FULL1", alice, "Ann", t0)
		mustJoin(t, replica, "FULL1", bob, "", t0)
		for _, st := range []*Store{s, replica} {
			if err := st.JoinWorkshop(ctx, "FULL1", carol, "Carol", t0); !errors.Is(err, ErrFull) {
				t.Errorf("third JoinWorkshop = %v; want ErrFull", err)
			}
		}
		mustJoin(t, replica, "FULL1", alice, "Annie", t0.Add(time.Minute))
		mustJoin(t, s, "FULL2", carol, "Carol", t0)
		if st := mustStats(t, s, "FULL1", time.Time{}); st.Joined != 2 {
			t.Errorf("Joined = %d; want 2", st.Joined)
		}
	})
	s := &Store{}
	if got := s.participantCap(); got != DefaultMaxParticipants {
		t.Errorf("default cap = %d; want %d", got, DefaultMaxParticipants)
	}
}
