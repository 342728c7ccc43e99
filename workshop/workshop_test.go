package workshop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const alice = "alice-0123456789abcdef"

// t0 is when the test workshops start.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// fakeBackend records what reaches it: validation must stop bad input
// before any call.
type fakeBackend struct {
	PollBackend // nil: these tests open no polls
	calls       []string
	created     []Workshop
	taken       int // CreateWorkshop answers ErrExists this many times first
	joined      []Joining
	batches     []Batch
	data        Data
	// members are the learners IsMember knows; nil knows everyone.
	members map[string]bool
	// flushErr, if set, is what FlushWorkshop returns (and then it
	// keeps nothing).
	flushErr error
	// failFlush, when set, fails the write that would be the back end's
	// written batch number n (from 0) when it returns an error.
	failFlush func(n int) error
}

func (f *fakeBackend) CreateWorkshop(_ context.Context, w Workshop) error {
	f.calls = append(f.calls, "create")
	if f.taken > 0 {
		f.taken--
		return ErrExists
	}
	f.created = append(f.created, w)
	return nil
}

func (f *fakeBackend) Workshop(context.Context, string) (Workshop, error) {
	f.calls = append(f.calls, "workshop")
	return f.data.Workshop, nil
}

func (f *fakeBackend) Workshops(context.Context, int) ([]Workshop, error) {
	f.calls = append(f.calls, "workshops")
	return nil, nil
}

func (f *fakeBackend) EndWorkshop(context.Context, string, time.Time) error {
	f.calls = append(f.calls, "end")
	return nil
}

func (f *fakeBackend) JoinWorkshop(_ context.Context, _ string, j Joining) error {
	f.calls = append(f.calls, "join")
	f.joined = append(f.joined, j)
	return nil
}

func (f *fakeBackend) IsMember(_ context.Context, _, learner string) (bool, error) {
	f.calls = append(f.calls, "member")
	return f.members == nil || f.members[learner], nil
}

func (f *fakeBackend) FlushWorkshop(_ context.Context, _ string, b Batch) error {
	f.calls = append(f.calls, "flush")
	if f.flushErr != nil {
		return f.flushErr
	}
	if f.failFlush != nil {
		if err := f.failFlush(len(f.batches)); err != nil {
			return err
		}
	}
	f.batches = append(f.batches, b)
	return nil
}

func (f *fakeBackend) SetJoinClosed(_ context.Context, _ string, closed bool) error {
	f.calls = append(f.calls, fmt.Sprintf("closed=%v", closed))
	return nil
}

func (f *fakeBackend) RemoveParticipant(_ context.Context, _, learner string) error {
	f.calls = append(f.calls, "remove "+learner)
	return nil
}

// WorkshopData returns a copy of f.data, as a back end returns what it
// read afresh.
func (f *fakeBackend) WorkshopData(context.Context, string) (Data, error) {
	f.calls = append(f.calls, "data")
	d := f.data
	d.Counts = maps.Clone(d.Counts)
	d.Members = slices.Clone(d.Members)
	for i := range d.Members {
		d.Members[i].Counts = maps.Clone(d.Members[i].Counts)
	}
	return d, nil
}

// TestBadInput checks that malformed arguments fail with ErrBadInput
// before anything reaches the back end.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	long := func(n int) string { return strings.Repeat("é", n) }
	ev := func(kind, topic, question, choice, scenario string) Event {
		return Event{Kind: kind, Topic: topic, Question: question, Choice: choice, Scenario: scenario, At: t0}
	}
	for _, tt := range []struct {
		name string
		call func(s *Service) error
	}{
		{"create lower-case code", func(s *Service) error { return s.Create(ctx, Workshop{Code: "good2", StartedAt: t0}) }},
		{"create short code", func(s *Service) error { return s.Create(ctx, Workshop{Code: "ABC", StartedAt: t0}) }},
		{"create long code", func(s *Service) error { return s.Create(ctx, Workshop{Code: "ABCDEFGHIJKLM", StartedAt: t0}) }},
		{"create code with dash", func(s *Service) error { return s.Create(ctx, Workshop{Code: "AB-CD", StartedAt: t0}) }},
		{"create long title", func(s *Service) error {
			return s.Create(ctx, Workshop{Code: "NEW1", Title: long(MaxTitleRunes + 1), StartedAt: t0})
		}},
		{"create title with control", func(s *Service) error {
			return s.Create(ctx, Workshop{Code: "NEW1", Title: "a\x00b", StartedAt: t0})
		}},
		{"create title not UTF-8", func(s *Service) error {
			return s.Create(ctx, Workshop{Code: "NEW1", Title: "a\xffb", StartedAt: t0})
		}},
		{"create without start", func(s *Service) error { return s.Create(ctx, Workshop{Code: "NEW1"}) }},
		{"create ended", func(s *Service) error {
			return s.Create(ctx, Workshop{Code: "NEW1", StartedAt: t0, EndedAt: t0.Add(time.Hour)})
		}},
		{"start long title", func(s *Service) error { _, err := s.Start(ctx, long(MaxTitleRunes+1), t0); return err }},
		{"get bad code", func(s *Service) error { _, err := s.Get(ctx, "good"); return err }},
		{"end bad code", func(s *Service) error { return s.End(ctx, "GO OD", t0) }},
		{"end without time", func(s *Service) error { return s.End(ctx, "GOOD", time.Time{}) }},
		{"join bad code", func(s *Service) error { return s.Join(ctx, "", alice, "", t0) }},
		{"join long nickname", func(s *Service) error { return s.Join(ctx, "GOOD", alice, long(MaxNickRunes+1), t0) }},
		{"join nickname with newline", func(s *Service) error { return s.Join(ctx, "GOOD", alice, "a\nb", t0) }},
		{"join without time", func(s *Service) error { return s.Join(ctx, "GOOD", alice, "", time.Time{}) }},
		{"event bad code", func(s *Service) error { return s.Record(ctx, "GOOD!", alice, ev(EventCommand, "", "", "", "")) }},
		{"event unknown kind", func(s *Service) error { return s.Record(ctx, "GOOD", alice, ev("dance", "", "", "", "")) }},
		{"event without time", func(s *Service) error { return s.Record(ctx, "GOOD", alice, Event{Kind: EventCommand}) }},
		{"answer upper-case question", func(s *Service) error {
			return s.Record(ctx, "GOOD", alice, ev(EventAnswer, "", "Q1", "a", ""))
		}},
		{"answer question with slash", func(s *Service) error {
			return s.Record(ctx, "GOOD", alice, ev(EventAnswer, "", "q1/a", "a", ""))
		}},
		{"answer long question", func(s *Service) error {
			return s.Record(ctx, "GOOD", alice, ev(EventAnswer, "", strings.Repeat("q", maxIDLen+1), "a", ""))
		}},
		{"answer without choice", func(s *Service) error { return s.Record(ctx, "GOOD", alice, ev(EventAnswer, "", "q1", "", "")) }},
		{"complete without topic", func(s *Service) error { return s.Record(ctx, "GOOD", alice, ev(EventComplete, "", "", "", "")) }},
		{"race bad scenario", func(s *Service) error {
			return s.Record(ctx, "GOOD", alice, ev(EventRace, "", "", "", "gc pause"))
		}},
		{"stats bad code", func(s *Service) error { _, err := s.Stats(ctx, "x", t0); return err }},
		{"participants bad code", func(s *Service) error { _, err := s.Participants(ctx, "x"); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBackend{}
			if err := tt.call(New(f, Options{})); !errors.Is(err, ErrBadInput) {
				t.Errorf("got %v; want ErrBadInput", err)
			}
			if len(f.calls) != 0 {
				t.Errorf("the back end was called: %v; want no call", f.calls)
			}
		})
	}
}

// TestGoodInputAtTheEdges checks the longest title, nickname and id that
// are allowed, and that texts arrive trimmed.
func TestGoodInputAtTheEdges(t *testing.T) {
	ctx := context.Background()
	f := &fakeBackend{}
	s := New(f, Options{})
	title := strings.Repeat("é", MaxTitleRunes)
	if err := s.Create(ctx, Workshop{Code: "ABCD", Title: " " + title + "\t", StartedAt: t0}); err != nil {
		t.Fatalf("Create(longest title) = %v", err)
	}
	if err := s.Create(ctx, Workshop{Code: "ABCDEFGHIJ12", StartedAt: t0}); err != nil {
		t.Fatalf("Create(longest code) = %v", err)
	}
	if got := f.created[0].Title; got != title {
		t.Errorf("title stored = %q; want it trimmed", got)
	}
	if err := s.Join(ctx, "ABCD", alice, strings.Repeat("é", MaxNickRunes), t0); err != nil {
		t.Errorf("Join(longest nickname) = %v", err)
	}
	id := strings.Repeat("q", maxIDLen)
	if err := s.Record(ctx, "ABCD", alice, Event{Kind: EventAnswer, Question: id, Choice: "a-1", At: t0}); err != nil {
		t.Errorf("Record(longest question id) = %v", err)
	}
}

// A mistyped code is no workshop at all, so the web layer can tell the
// learner just that.
func TestMalformedCodeIsNotFound(t *testing.T) {
	ctx := context.Background()
	s := New(&fakeBackend{}, Options{})
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := s.Get(ctx, "k7q"); return err }},
		{"end", func() error { return s.End(ctx, "k7q", t0) }},
		{"join", func() error { return s.Join(ctx, "k7q", alice, "", t0) }},
		{"event", func() error { return s.Record(ctx, "k7q", alice, Event{Kind: EventCommand, At: t0}) }},
		{"stats", func() error { _, err := s.Stats(ctx, "k7q", t0); return err }},
		{"participants", func() error { _, err := s.Participants(ctx, "k7q"); return err }},
	} {
		if err := tt.call(); !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrBadInput) {
			t.Errorf("%s(malformed code) = %v; want ErrNotFound and ErrBadInput", tt.name, err)
		}
	}
	// Creating with a malformed code is only bad input: nothing was
	// looked up.
	if err := s.Create(ctx, Workshop{Code: "k7q", StartedAt: t0}); errors.Is(err, ErrNotFound) || !errors.Is(err, ErrBadInput) {
		t.Errorf("Create(malformed code) = %v; want ErrBadInput only", err)
	}
}

// TestMaxParticipants checks the cap each join hands the back end.
func TestMaxParticipants(t *testing.T) {
	for _, tt := range []struct {
		max, want int
	}{
		{0, DefaultMaxParticipants},
		{-3, DefaultMaxParticipants},
		{1, 1},
		{2, 2},
	} {
		f := &fakeBackend{}
		if err := New(f, Options{MaxParticipants: tt.max}).Join(context.Background(), "ABCD", alice, "", t0); err != nil {
			t.Fatal(err)
		}
		if got := f.joined[0].Limit; got != tt.want {
			t.Errorf("MaxParticipants %d: join limit %d; want %d", tt.max, got, tt.want)
		}
	}
	if DefaultMaxParticipants != 500 {
		t.Errorf("DefaultMaxParticipants = %d; want 500", DefaultMaxParticipants)
	}
}

// TestStart checks that Start tries fresh codes while they are taken,
// names an untitled workshop by its date and keeps times to the
// millisecond, as back ends do.
func TestStart(t *testing.T) {
	ctx := context.Background()
	codes := []string{"AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD", "EEEEEE", "FFFFFF"}
	next := func() func() string {
		i := 0
		return func() string { i++; return codes[i-1] }
	}
	at := t0.Add(1234567 * time.Nanosecond)
	for _, tt := range []struct {
		name      string
		taken     int
		title     string
		wantCode  string
		wantTitle string
		wantErr   bool
	}{
		{"free", 0, "  Tuesday group ", "AAAAAA", "Tuesday group", false},
		{"untitled", 0, " \t", "AAAAAA", "Workshop 2026-03-01", false},
		{"two taken", 2, "T", "CCCCCC", "T", false},
		{"four taken", 4, "T", "EEEEEE", "T", false},
		{"all taken", 5, "T", "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBackend{taken: tt.taken}
			w, err := New(f, Options{NewCode: next()}).Start(ctx, tt.title, at)
			if tt.wantErr {
				if err == nil || errors.Is(err, ErrExists) || len(f.created) != 0 {
					t.Errorf("Start with every code taken = %+v, %v; want an error that is not ErrExists, nothing created", w, err)
				}
				return
			}
			want := Workshop{Code: tt.wantCode, Title: tt.wantTitle, StartedAt: time.UnixMilli(at.UnixMilli())}
			if err != nil || !reflect.DeepEqual(w, want) {
				t.Errorf("Start = %+v, %v; want %+v", w, err, want)
			}
			if len(f.created) != 1 || !reflect.DeepEqual(f.created[0], want) {
				t.Errorf("created %+v; want only %+v", f.created, want)
			}
		})
	}
}

// TestCreateKeepsMilliseconds checks that what a back end is given is
// what it will return: times to the millisecond.
func TestCreateKeepsMilliseconds(t *testing.T) {
	f := &fakeBackend{}
	at := t0.Add(1500 * time.Microsecond)
	if err := New(f, Options{}).Create(context.Background(), Workshop{Code: "MILLI", StartedAt: at}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.created[0].StartedAt, t0.Add(time.Millisecond); !got.Equal(want) {
		t.Errorf("start time stored = %v; want %v", got, want)
	}
}

// TestRecordPlans checks that what Record counts reaches the back end as
// the event's plan: its counters, and its gate with the gated counters.
func TestRecordPlans(t *testing.T) {
	f := &fakeBackend{}
	s := New(f, Options{})
	ev := Event{Kind: EventAnswer, Question: "q1", Choice: "b", Correct: true, At: t0}
	if err := s.Record(context.Background(), "ABCD", alice, ev); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, _ := planEvent(alice, ev)
	want := Batch{alice: {
		Counts: map[string]int{p.Counts[0]: 1}, MemberCounts: map[string]int{p.MemberCounts[0]: 1},
		Gated: map[string]Plan{GateFirst + "\x00" + p.GateMember: {Gate: p.Gate, GateMember: p.GateMember, GateCounts: p.GateCounts, GateMemberCounts: p.GateMemberCounts}},
		First: t0, Last: t0,
	}}
	if len(f.batches) != 1 || !reflect.DeepEqual(f.batches[0], want) {
		t.Errorf("batches = %+v; want %+v", f.batches, want)
	}
}

// TestPredictBoundsTheList: a prediction longer than a poll's choices can
// be is refused before any of it is read or stored, whatever its ids.
func TestPredictBoundsTheList(t *testing.T) {
	f := &fakeBackend{}
	s := New(f, Options{})
	long := make([]string, 32000)
	for i := range long {
		long[i] = fmt.Sprintf("o%d", i)
	}
	for _, p := range [][]string{long, make([]string, maxChoices+1), nil} {
		if err := s.Predict(context.Background(), "POLL42", "poll1", "learner", p, t0); !errors.Is(err, ErrBadInput) {
			t.Errorf("Predict(%d ids) = %v; want ErrBadInput", len(p), err)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("refused predictions reached the backend: %v", f.calls)
	}
}
