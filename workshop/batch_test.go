package workshop

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
)

const bob = "bob-0123456789abcdef00"

// batchService is a Service over f on a fake clock, flushing every 5 s;
// alice is the workshop's only member.
func batchService(t *testing.T) (*Service, *fakeBackend, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(t0)
	f := &fakeBackend{
		members: map[string]bool{alice: true},
		data: Data{
			Workshop: Workshop{Code: "BATCH1", StartedAt: t0},
			Counts:   map[string]int{},
			Members:  []Member{{Learner: alice, JoinedAt: t0, LastActive: t0}},
		},
	}
	return New(f, Options{FlushEvery: 5 * time.Second, Now: clk.Now}), f, clk
}

func command(at time.Time) Event { return Event{Kind: EventCommand, At: at} }

func mustRecord(t *testing.T, s *Service, learner string, ev Event) {
	t.Helper()
	if err := s.Record(context.Background(), "BATCH1", learner, ev); err != nil {
		t.Fatalf("Record(%s, %+v) = %v", learner, ev, err)
	}
}

// commandsWritten adds up the commands in the batches the back end got.
func commandsWritten(f *fakeBackend) int {
	n := 0
	for _, b := range f.batches {
		for _, mb := range b {
			n += mb.Counts[countCommands]
		}
	}
	return n
}

// TestBatchWaitsForTheInterval: commands are written together, once the
// first of them has waited a flush interval, not one write each.
func TestBatchWaitsForTheInterval(t *testing.T) {
	s, f, clk := batchService(t)
	for range 3 {
		mustRecord(t, s, alice, command(clk.Now()))
		clk.Add(time.Second)
	}
	if err := s.FlushDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.batches) != 0 {
		t.Fatalf("after 3 s, %d writes; want none before the 5 s interval", len(f.batches))
	}
	clk.Add(time.Second)
	mustRecord(t, s, alice, command(clk.Now())) // 4 s after the first
	clk.Add(time.Second)
	// 5 s after the first: the next event writes them all.
	mustRecord(t, s, alice, command(clk.Now()))
	if len(f.batches) != 1 || commandsWritten(f) != 5 {
		t.Fatalf("after 5 s, %d writes with %d commands; want 1 with 5", len(f.batches), commandsWritten(f))
	}
	if mb := f.batches[0][alice]; !mb.First.Equal(t0) || !mb.Last.Equal(t0.Add(5*time.Second)) || mb.MemberCounts[pcountCommands] != 5 {
		t.Errorf("alice's part = %+v; want 5 commands from %v to %v", mb, t0, t0.Add(5*time.Second))
	}
	// Quiet since: FlushDue writes the next one when it falls due.
	mustRecord(t, s, alice, command(clk.Now()))
	clk.Add(4 * time.Second)
	_ = s.FlushDue(context.Background())
	if len(f.batches) != 1 {
		t.Errorf("FlushDue wrote a batch 4 s old")
	}
	clk.Add(time.Second)
	if err := s.FlushDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.batches) != 2 || commandsWritten(f) != 6 {
		t.Errorf("after FlushDue: %d writes, %d commands; want 2 and 6", len(f.batches), commandsWritten(f))
	}
}

// TestReadSeesTheBatch: the dashboard's numbers include what waits in
// memory, without writing it; a batch with a gate (a first answer) is
// written first, since only the back end knows whether it counts.
func TestReadSeesTheBatch(t *testing.T) {
	ctx := context.Background()
	s, f, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	clk.Add(time.Second)
	mustRecord(t, s, alice, command(clk.Now()))
	st, err := s.Stats(ctx, "BATCH1", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if st.Commands != 2 || st.Active != 1 {
		t.Errorf("Stats = %d commands, %d active; want 2 and 1, from memory", st.Commands, st.Active)
	}
	ps, err := s.Participants(ctx, "BATCH1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Commands != 2 || !ps[0].LastActive.Equal(t0.Add(time.Second)) {
		t.Errorf("Participants = %+v; want alice with 2 commands, last active at 1 s", ps)
	}
	if len(f.batches) != 0 || f.data.Counts[countCommands] != 0 {
		t.Errorf("reading wrote %d batches, changed %v; want nothing written", len(f.batches), f.data.Counts)
	}
	mustRecord(t, s, alice, Event{Kind: EventAnswer, Question: "q1", Choice: "a", Correct: true, At: clk.Now()})
	if _, err := s.Stats(ctx, "BATCH1", t0); err != nil {
		t.Fatal(err)
	}
	if len(f.batches) != 1 || len(f.batches[0][alice].Gated) != 1 || commandsWritten(f) != 2 {
		t.Errorf("after a first answer, a read wrote %+v; want the whole batch with its gate", f.batches)
	}
}

// TestFlushWritesEverything: Flush, called on shutdown, writes every
// batch whatever its age.
func TestFlushWritesEverything(t *testing.T) {
	s, f, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	mustRecord(t, s, alice, Event{Kind: EventRace, Scenario: "gc-pause", At: clk.Now()})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.batches) != 1 || commandsWritten(f) != 1 || f.batches[0][alice].Counts[countRaces] != 1 {
		t.Errorf("Flush wrote %+v; want one batch with the command and the race", f.batches)
	}
	if err := s.Flush(context.Background()); err != nil || len(f.batches) != 1 {
		t.Errorf("a second Flush = %v and wrote again; want nothing left to write", err)
	}
}

// TestNonMemberWritesNothing: a learner whose cookie names a workshop
// they have not joined is looked up, and nothing is kept or written.
func TestNonMemberWritesNothing(t *testing.T) {
	s, f, clk := batchService(t)
	for range 100 {
		mustRecord(t, s, bob, command(clk.Now()))
		clk.Add(time.Second)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(f.calls, "flush") {
		t.Errorf("a non-member's commands reached the back end as writes: %v", f.calls)
	}
	if lw := s.workshops["BATCH1"]; lw != nil && len(lw.pending) != 0 {
		t.Errorf("a non-member's commands are kept in memory: %+v", lw.pending)
	}
}

// TestFailedFlushKeepsTheBatch: a batch whose write fails is written with
// the next one, and nothing is counted twice.
func TestFailedFlushKeepsTheBatch(t *testing.T) {
	ctx := context.Background()
	s, f, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	f.flushErr = errors.New("disk full")
	if err := s.Flush(ctx); err == nil {
		t.Fatal("Flush with a failing back end = nil")
	}
	f.flushErr = nil
	clk.Add(time.Second)
	mustRecord(t, s, alice, command(clk.Now()))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.batches) != 1 || commandsWritten(f) != 2 {
		t.Errorf("after a failed write, batches %+v; want one with both commands", f.batches)
	}
}

// TestBatchIsWrittenInParts: a big batch goes to the back end in parts
// of at most flushPart names, each learner's whole part in one, and a
// part whose write fails is written with the next flush together with
// those after it, while the parts written before it are not written
// again.
func TestBatchIsWrittenInParts(t *testing.T) {
	ctx := context.Background()
	s, f, clk := batchService(t)
	f.members = nil // everyone is a member
	const learners = 600
	for i := range learners {
		learner := alice[:len(alice)-4] + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "xx"
		mustRecord(t, s, learner, command(clk.Now()))
		mustRecord(t, s, learner, Event{Kind: EventAnswer, Question: "q1", Choice: "a", At: clk.Now()})
	}
	f.failFlush = func(n int) error {
		if n == 1 {
			return errors.New("redis went away")
		}
		return nil
	}
	if err := s.Flush(ctx); err == nil {
		t.Fatal("Flush with the second part failing = nil")
	}
	if len(f.batches) != 1 {
		t.Fatalf("%d parts written before the failure; want 1", len(f.batches))
	}
	f.failFlush = nil
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, b := range f.batches {
		names := 0
		for learner, mb := range b {
			seen[learner]++
			names += mb.names()
		}
		if names > flushPart {
			t.Errorf("part %d holds %d names; want at most %d", i, names, flushPart)
		}
	}
	if len(f.batches) < 3 {
		t.Errorf("%d parts in all; want the batch split", len(f.batches))
	}
	if len(seen) != learners || commandsWritten(f) != learners {
		t.Errorf("%d learners and %d commands written; want %d of each", len(seen), commandsWritten(f), learners)
	}
	for learner, n := range seen {
		if n != 1 {
			t.Errorf("%s written %d times; want once", learner, n)
		}
	}
}

// TestEndedWorkshopCountsNothing: End writes the batch first, and what
// comes after the end is not counted.
func TestEndedWorkshopCountsNothing(t *testing.T) {
	ctx := context.Background()
	s, f, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	if err := s.End(ctx, "BATCH1", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if commandsWritten(f) != 1 {
		t.Errorf("End wrote %d commands; want the 1 before it", commandsWritten(f))
	}
	f.data.Workshop.EndedAt = clk.Now()
	clk.Add(time.Second)
	mustRecord(t, s, alice, command(clk.Now()))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if commandsWritten(f) != 1 {
		t.Errorf("after the end, %d commands written; want still 1", commandsWritten(f))
	}
}

// TestMemberBatchAfterEnd is the rule back ends apply to a batch that a
// replica wrote after another ended the workshop.
func TestMemberBatchAfterEnd(t *testing.T) {
	mb := &MemberBatch{First: t0, Last: t0.Add(time.Minute)}
	for _, tt := range []struct {
		end  time.Time
		want bool
	}{
		{time.Time{}, false},
		{t0.Add(-time.Second), true},
		{t0, false},
		{t0.Add(time.Second), false},
	} {
		if got := mb.AfterEnd(tt.end); got != tt.want {
			t.Errorf("AfterEnd(%v) = %v; want %v", tt.end, got, tt.want)
		}
	}
}

// TestBatchHasACeiling: a batch at maxPending names is written at once,
// so memory stays bounded whatever the events.
func TestBatchHasACeiling(t *testing.T) {
	s, f, clk := batchService(t)
	f.members = nil // everyone is a member
	for i := range maxPending/4 + 10 {
		learner := alice[:len(alice)-4] + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)) + "x"
		for _, q := range []string{"q1", "q2"} {
			mustRecord(t, s, learner, Event{Kind: EventAnswer, Question: q, Choice: "a", At: clk.Now()})
		}
	}
	if len(f.batches) == 0 {
		t.Fatal("no write at the ceiling")
	}
	if n := s.workshops["BATCH1"].names; n >= maxPending {
		t.Errorf("%d names kept; want fewer than %d", n, maxPending)
	}
}

// TestIdleWorkshopIsForgotten: a workshop with nothing to write leaves
// memory after idleAfter intervals.
func TestIdleWorkshopIsForgotten(t *testing.T) {
	s, _, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	_ = s.Flush(context.Background())
	clk.Add(idleAfter * 5 * time.Second)
	_ = s.FlushDue(context.Background())
	if len(s.workshops) != 0 {
		t.Errorf("%d workshops kept after %v idle; want none", len(s.workshops), idleAfter*5*time.Second)
	}
}

// TestRemoveWritesTheBatchFirst: what a participant did before their
// removal is written (it stays in the totals), then the back end is asked
// to remove them by learner id, and nothing of theirs is counted after.
func TestRemoveWritesTheBatchFirst(t *testing.T) {
	ctx := context.Background()
	s, f, clk := batchService(t)
	mustRecord(t, s, alice, command(clk.Now()))
	if err := s.Remove(ctx, "BATCH1", ParticipantKey("BATCH1", bob)); !errors.Is(err, ErrNoParticipant) {
		t.Errorf("Remove(a key of no participant) = %v; want ErrNoParticipant", err)
	}
	if err := s.Remove(ctx, "BATCH1", "not-a-key"); !errors.Is(err, ErrNoParticipant) || !errors.Is(err, ErrBadInput) {
		t.Errorf("Remove(malformed key) = %v; want ErrNoParticipant and ErrBadInput", err)
	}
	if err := s.Remove(ctx, "BATCH1", ParticipantKey("BATCH1", alice)); err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(f.calls, "remove "+alice); i < 0 || !slices.Contains(f.calls[:i], "flush") {
		t.Errorf("calls %v; want alice's batch written, then alice removed", f.calls)
	}
	if commandsWritten(f) != 1 {
		t.Errorf("%d commands written; want alice's 1 from before the removal", commandsWritten(f))
	}
	f.members[alice] = false
	mustRecord(t, s, alice, command(clk.Now()))
	_ = s.Flush(ctx)
	if commandsWritten(f) != 1 {
		t.Errorf("after the removal, %d commands written; want still 1", commandsWritten(f))
	}
}

// TestJoinHandsTheRules checks what a join hands the back end: the
// cleaned nickname and its key.
func TestJoinHandsTheRules(t *testing.T) {
	f := &fakeBackend{}
	if err := New(f, Options{}).Join(context.Background(), "ABCD", alice, "  Ann  Lee ", t0); err != nil {
		t.Fatal(err)
	}
	want := Joining{Learner: alice, Nickname: "Ann  Lee", NickKey: NicknameKey("ann lee"), At: t0, Limit: DefaultMaxParticipants}
	if len(f.joined) != 1 || !reflect.DeepEqual(f.joined[0], want) {
		t.Errorf("joined %+v; want %+v", f.joined, want)
	}
}

// TestSetJoining hands the back end the closed flag.
func TestSetJoining(t *testing.T) {
	f := &fakeBackend{}
	s := New(f, Options{})
	_ = s.SetJoining(context.Background(), "ABCD", false)
	_ = s.SetJoining(context.Background(), "ABCD", true)
	if want := []string{"closed=true", "closed=false"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls = %v; want %v", f.calls, want)
	}
	if err := s.SetJoining(context.Background(), "ab", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetJoining(malformed code) = %v; want ErrNotFound", err)
	}
}

func TestNicknameKey(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"Ann", "ann"},
		{"ANN", "aNn"},
		{"Ann Lee", "ann   lee"},
		{"Straße", "STRAẞE"},
		{"ÉLODIE", "élodie"},
		{"K", "\u212a"}, // the Kelvin sign folds to K
		{"Σοφία", "σοφία"},
	} {
		if NicknameKey(tt.a) != NicknameKey(tt.b) {
			t.Errorf("NicknameKey(%q) = %q, NicknameKey(%q) = %q; want them equal", tt.a, NicknameKey(tt.a), tt.b, NicknameKey(tt.b))
		}
	}
	for _, tt := range []struct{ a, b string }{
		{"Ann", "Anne"},
		{"Ann Lee", "AnnLee"},
		{"élodie", "elodie"},
	} {
		if NicknameKey(tt.a) == NicknameKey(tt.b) {
			t.Errorf("NicknameKey(%q) = NicknameKey(%q) = %q; want them apart", tt.a, tt.b, NicknameKey(tt.a))
		}
	}
}

func TestParticipantKey(t *testing.T) {
	k := ParticipantKey("ABCD", alice)
	if err := checkParticipantKey(k); err != nil {
		t.Errorf("checkParticipantKey(%q) = %v", k, err)
	}
	if k == ParticipantKey("ABCE", alice) || k == ParticipantKey("ABCD", bob) {
		t.Errorf("ParticipantKey is the same for another workshop or learner")
	}
	if slices.Contains([]string{alice, "ABCD"}, k) {
		t.Errorf("ParticipantKey = %q names the learner", k)
	}
}
