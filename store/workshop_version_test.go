package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/workshop"
)

// TestWorkshopVersion makes every change participants see, one at a
// time, on one replica, and reads the version on the other after each:
// each moves it, while a learner's own joining and predicting, reads,
// recorded activity and refused writes leave it. The file store has no
// version ("").
func TestWorkshopVersion(t *testing.T) {
	for name, open := range workshopBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, other := open(t)
			s, replica := workshop.New(st, workshop.Options{}), workshop.New(other, workshop.Options{})
			// The replica's clock moves past versionFresh before each read,
			// so that each read is a new one.
			var mu sync.Mutex
			clock := t0
			if rb, ok := other.b.(*redisBackend); ok {
				rb.now = func() time.Time {
					mu.Lock()
					defer mu.Unlock()
					return clock
				}
			}
			version := func() string {
				t.Helper()
				mu.Lock()
				clock = clock.Add(versionFresh)
				mu.Unlock()
				v, err := replica.Version(ctx, "VERS42")
				if err != nil {
					t.Fatalf("Version = %v", err)
				}
				return v
			}
			if v := version(); v != "" {
				t.Fatalf("Version of a workshop not created = %q; want \"\"", v)
			}
			mustCreate(t, s, workshop.Workshop{Code: "VERS42", Title: "Versions", StartedAt: t0})
			last := version()
			if name == "bolt" {
				if last != "" {
					t.Errorf("bolt's Version = %q; want \"\"", last)
				}
				return
			}
			if last == "" {
				t.Fatal("Version of a new workshop is empty")
			}
			const ada, bob = "learner-ada-0123456789", "learner-bob-0123456789"
			var poll workshop.Poll
			steps := []struct {
				name  string
				do    func() error
				moves bool
			}{
				{"Join", func() error { return s.Join(ctx, "VERS42", ada, "Ada", t0) }, false},
				{"Join of another", func() error { return s.Join(ctx, "VERS42", bob, "Bob", t0) }, false},
				{"LearnerState", func() error { _, err := s.Learner(ctx, "VERS42", ada); return err }, false},
				{"Record and Flush", func() error {
					if err := s.Record(ctx, "VERS42", ada, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(time.Minute)}); err != nil {
						return err
					}
					return s.Flush(ctx)
				}, false},
				{"OpenPoll", func() (err error) { poll, err = s.OpenPoll(ctx, "VERS42", pollSpec(), t0); return err }, true},
				{"Predict", func() error { return s.Predict(ctx, "VERS42", poll.ID, ada, []string{"safe"}, t0) }, false},
				{"Predict refused", func() error {
					if err := s.Predict(ctx, "VERS42", poll.ID, "learner-eve-0123456789", []string{"safe"}, t0); !errors.Is(err, workshop.ErrNotJoined) {
						return fmt.Errorf("Predict by a stranger = %v; want ErrNotJoined", err)
					}
					return nil
				}, false},
				{"Reveal", func() error { return s.Reveal(ctx, "VERS42", poll.ID, t0) }, true},
				{"SetJoining closed", func() error { return s.SetJoining(ctx, "VERS42", false) }, true},
				{"SetJoining open", func() error { return s.SetJoining(ctx, "VERS42", true) }, true},
				{"Remove", func() error { return s.Remove(ctx, "VERS42", workshop.ParticipantKey("VERS42", bob)) }, true},
				{"End", func() error { return s.End(ctx, "VERS42", t0.Add(time.Hour)) }, true},
			}
			for _, step := range steps {
				if err := step.do(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				v := version()
				if moved := v != last; moved != step.moves {
					t.Errorf("%s: version %q -> %q; want it moved: %v", step.name, last, v, step.moves)
				}
				last = v
			}
		})
	}
}

// TestWorkshopVersionsShared asks for versions as a room of streams
// would: callers within versionFresh of a read share it, as do callers
// while it is out; a caller that gives up does not end the read for the
// others; the kept versions are bounded.
func TestWorkshopVersionsShared(t *testing.T) {
	var v workshopVersions
	now := t0
	clock := func() time.Time { return now }
	var reads atomic.Int32
	release := make(chan struct{})
	read := func(ctx context.Context) (string, error) {
		reads.Add(1)
		<-release
		return fmt.Sprint("v", reads.Load()), ctx.Err()
	}
	var wg sync.WaitGroup
	got := make([]string, 50)
	for i := range got {
		wg.Go(func() {
			var err error
			got[i], err = v.get(context.Background(), "ROOM42", clock, read)
			if err != nil {
				t.Errorf("get = %v", err)
			}
		})
	}
	for reads.Load() == 0 {
		time.Sleep(time.Millisecond) // until one caller's read is out
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.get(gone, "ROOM42", clock, read); !errors.Is(err, context.Canceled) {
		t.Errorf("get with its context ended = %v; want context.Canceled", err)
	}
	close(release)
	wg.Wait()
	for i, g := range got {
		if g != "v1" {
			t.Fatalf("caller %d got %q; want v1, the one shared read", i, g)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads for 51 callers at once; want 1", n)
	}
	now = now.Add(versionFresh - time.Millisecond)
	if g, _ := v.get(context.Background(), "ROOM42", clock, read); g != "v1" || reads.Load() != 1 {
		t.Errorf("get within versionFresh = %q after %d reads; want v1 and no new read", g, reads.Load())
	}
	now = now.Add(time.Millisecond)
	if g, _ := v.get(context.Background(), "ROOM42", clock, read); g != "v2" {
		t.Errorf("get after versionFresh = %q; want v2, a new read", g)
	}
	for i := range 3 * maxVersions {
		if i%maxVersions == 0 {
			now = now.Add(versionFresh)
		}
		v.get(context.Background(), fmt.Sprint("W", i), clock, read)
	}
	if n := len(v.byWS); n > maxVersions {
		t.Errorf("%d versions kept; want at most %d", n, maxVersions)
	}
}
