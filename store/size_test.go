package store

import (
	"context"
	"errors"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/progress"
	"github.com/locklab/locklab/workshop"
)

// perLearner is what one learner with the one flag "locks/started" takes,
// as the size cap counts it (every learnerN id is as long).
func perLearner() int64 {
	id := []byte(learnerN(0))
	return learnerBytes(id) + flagBytes([]byte(progress.StartedFlag("locks")))
}

// cappedStore opens a bolt store capped at max bytes whose clock the test
// moves with *now.
func cappedStore(t *testing.T, dir string, max int64, now *time.Time) *Store {
	t.Helper()
	s, err := OpenBolt(dir, MaxSize(max), Clock(func() time.Time { return *now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func saved(t *testing.T, s *Store, id string) bool {
	t.Helper()
	p, err := s.Progress(context.Background(), id)
	if err != nil {
		t.Fatalf("Progress(%s): %v", id, err)
	}
	return len(p) > 0
}

// TestSizeCapDropsLongestIdleAnonymousFirst: at the cap, each newcomer
// makes room by dropping the learner idle longest among the anonymous
// ones; a learner who made a transfer code, one who adopted one and a
// workshop participant are passed over however long idle; a learner
// already saved is never refused, and the sweep brings the records back
// under the cap after they grew it.
func TestSizeCapDropsLongestIdleAnonymousFirst(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := cappedStore(t, t.TempDir(), 6*perLearner(), &now)
	tick := func() { now = now.Add(time.Minute) }
	answer := func(id string) error {
		_, err := s.RecordAnswer(ctx, id, "locks", "q1", false)
		return err
	}
	var (
		oldest, carrier, participant, adopter = learnerN(1), learnerN(2), learnerN(3), learnerN(4)
		anon1, anon2                          = learnerN(5), learnerN(6)
	)
	// Six learners, a minute apart, the oldest first: the cap exactly.
	for _, id := range []string{oldest, carrier, participant} {
		if err := answer(id); err != nil {
			t.Fatal(err)
		}
		tick()
	}
	if err := s.PutCarryCode(ctx, "ABCDEFGH", carry.Ticket{Learner: carrier, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkshop(ctx, workshop.Workshop{Code: "SIZE42", Title: "Locks", StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.JoinWorkshop(ctx, "SIZE42", workshop.Joining{Learner: participant, At: now, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	// The adopter's progress is a copy of the oldest learner's.
	if err := s.Merge(ctx, oldest, adopter); err != nil {
		t.Fatal(err)
	}
	tick()
	for _, id := range []string{anon1, anon2} {
		if err := answer(id); err != nil {
			t.Fatal(err)
		}
		tick()
	}
	if used, max := s.Size(); used != max {
		t.Fatalf("Size() = %d, %d; want the cap reached by six learners", used, max)
	}

	// Each newcomer drops the longest idle anonymous learner.
	for i, want := range []string{oldest, anon1, anon2, learnerN(10)} {
		tick()
		newcomer := learnerN(10 + i)
		if err := answer(newcomer); err != nil {
			t.Fatalf("newcomer %d at the cap: %v; want room made", i, err)
		}
		if saved(t, s, want) {
			t.Errorf("after newcomer %d: %s is still saved; want the longest idle anonymous learner dropped", i, want)
		}
		for _, id := range []string{carrier, participant, adopter, newcomer} {
			if !saved(t, s, id) {
				t.Errorf("after newcomer %d: %s was dropped; want kept", i, id)
			}
		}
		if used, max := s.Size(); used > max {
			t.Errorf("after newcomer %d: Size() = %d; want at most the cap %d", i, used, max)
		}
	}

	// Learners already saved are never refused, even past the cap.
	tick()
	for _, id := range []string{learnerN(11), carrier} {
		for q := range 3 {
			if _, err := s.RecordAnswer(ctx, id, "locks", "q"+string(rune('a'+q)), true); err != nil {
				t.Fatalf("RecordAnswer(%s) past the cap: %v; want saved", id, err)
			}
		}
	}
	if used, max := s.Size(); used <= max {
		t.Fatalf("Size() = %d, %d; want the records past the cap after saved learners grew", used, max)
	}
	if n := s.Sweep(now); n == 0 {
		t.Error("Sweep past the cap dropped nobody")
	}
	if used, max := s.Size(); used > lowWater(max) {
		t.Errorf("after the sweep, Size() = %d; want at most %d", used, lowWater(max))
	}
	for _, id := range []string{carrier, participant, adopter} {
		if !saved(t, s, id) {
			t.Errorf("after the sweep: %s was dropped; want kept", id)
		}
	}
}

// TestSizeCapFullOfKeptLearners: when every learner saved is kept, an
// anonymous newcomer is ErrFull and nothing of theirs is written, while a
// learner adopting carried progress is let in.
func TestSizeCapFullOfKeptLearners(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := cappedStore(t, t.TempDir(), 2*perLearner(), &now)
	for i, id := range []string{learnerN(1), learnerN(2)} {
		if _, err := s.RecordAnswer(ctx, id, "locks", "q1", false); err != nil {
			t.Fatal(err)
		}
		code := "ABCDEFG" + string(carry.Alphabet[i])
		if err := s.PutCarryCode(ctx, code, carry.Ticket{Learner: id, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	newcomer := learnerN(3)
	for _, write := range []struct {
		name string
		f    func() error
	}{
		{"RecordAnswer", func() error { _, err := s.RecordAnswer(ctx, newcomer, "locks", "q1", true); return err }},
		{"MarkStarted", func() error { return s.MarkStarted(ctx, newcomer, "locks") }},
		{"RecordSolved", func() error { return s.RecordSolved(ctx, newcomer, "mutex") }},
	} {
		if err := write.f(); !errors.Is(err, ErrFull) {
			t.Errorf("%s of a newcomer when only kept learners are saved = %v; want ErrFull", write.name, err)
		}
	}
	if saved(t, s, newcomer) {
		t.Error("the refused newcomer's progress was saved")
	}
	if err := s.Merge(ctx, learnerN(1), learnerN(4)); err != nil {
		t.Errorf("Merge into a learner adopting carried progress, at the cap = %v; want it kept", err)
	}
	for _, id := range []string{learnerN(1), learnerN(2), learnerN(4)} {
		if !saved(t, s, id) {
			t.Errorf("%s is not saved; want every kept learner saved", id)
		}
	}
}

// TestSizeCountedOnceAndKeptAcrossReopen: the count survives a reopen, a
// file written before sizes were counted (no count, no idle index) is
// counted at open to the same total, and the idle index then orders its
// learners for the cap.
func TestSizeCountedOnceAndKeptAcrossReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s, err := OpenBolt(dir, Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	const n = 25
	for i := range n {
		if _, err := s.RecordAnswer(ctx, learnerN(i), "locks", "q1", i%2 == 0); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	// A flag saved twice counts once.
	if _, err := s.RecordAnswer(ctx, learnerN(0), "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	want, _ := s.Size()
	if per := perLearner(); want < n*per || want > n*(per+flagBytes([]byte("locks/right/q1"))) {
		t.Fatalf("Size() = %d for %d learners; want between %d and %d", want, n, n*per, n*(per+flagBytes([]byte("locks/right/q1"))))
	}
	s.Close()

	// As a file from before: no count and no index.
	db, err := bolt.Open(dir+"/progress.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(metaBucket).Delete(sizeKey); err != nil {
			return err
		}
		if err := tx.DeleteBucket(idleBucket); err != nil {
			return err
		}
		return tx.DeleteBucket(keptBucket)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s = cappedStore(t, dir, want, &now)
	if got, _ := s.Size(); got != want {
		t.Errorf("Size() of a file counted at open = %d; want %d, as counted while written", got, want)
	}
	if _, err := s.RecordAnswer(ctx, learnerN(100), "locks", "q1", false); err != nil {
		t.Fatal(err)
	}
	// Learner 0 came back last: learner 1 has been idle longest.
	if saved(t, s, learnerN(1)) || !saved(t, s, learnerN(2)) || !saved(t, s, learnerN(0)) {
		t.Errorf("after a newcomer at the cap of a file counted at open: learners 1, 2 and 0 saved %v, %v, %v; want the first dropped, the others kept",
			saved(t, s, learnerN(1)), saved(t, s, learnerN(2)), saved(t, s, learnerN(0)))
	}
}

// TestSweepKeepsTheCountAndIndex: learners the progress TTL drops leave
// the count and the idle index with them.
func TestSweepKeepsTheCountAndIndex(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s, err := OpenBolt(t.TempDir(), ProgressTTL(testTTL), Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 4 {
		if _, err := s.RecordAnswer(ctx, learnerN(i), "locks", "q1", false); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(testTTL + time.Hour)
	if _, err := s.RecordAnswer(ctx, learnerN(9), "locks", "q1", false); err != nil {
		t.Fatal(err)
	}
	if n := s.Sweep(now); n != 4 {
		t.Errorf("Sweep dropped %d; want the 4 idle learners", n)
	}
	if used, _ := s.Size(); used != perLearner() {
		t.Errorf("Size() after the sweep = %d; want %d, one learner's", used, perLearner())
	}
	b := s.b.(*boltBackend)
	_ = b.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(idleBucket).Stats().KeyN; n != 1 {
			t.Errorf("the idle index holds %d keys after the sweep; want 1", n)
		}
		return nil
	})
}
