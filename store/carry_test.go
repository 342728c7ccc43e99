package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/carry"
)

func TestCarryCodes(t *testing.T) {
	ctx := context.Background()
	// Redis expires the keys by its own clock (PEXPIREAT), so the test's
	// times start now, not at a fixed date that would one day be past.
	t0 := time.Now().UTC().Truncate(time.Second)
	exp := t0.Add(15 * time.Minute)
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, _, err := s.LiveCarryCode(ctx, alice, t0); !errors.Is(err, carry.ErrUnknown) {
				t.Errorf("live code of a learner with none = %v; want ErrUnknown", err)
			}
			if err := s.PutCarryCode(ctx, "AAAABBBB", carry.Ticket{Learner: alice, Expires: exp}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutCarryCode(ctx, "AAAABBBB", carry.Ticket{Learner: bob, Expires: exp}); !errors.Is(err, carry.ErrTaken) {
				t.Errorf("second put of one code = %v; want ErrTaken", err)
			}
			if code, tk, err := s.LiveCarryCode(ctx, alice, t0); err != nil || code != "AAAABBBB" || !tk.Expires.Equal(exp) {
				t.Errorf("live code = %q %+v %v; want AAAABBBB until %v", code, tk, err, exp)
			}
			if _, _, err := s.LiveCarryCode(ctx, alice, exp); !errors.Is(err, carry.ErrUnknown) {
				t.Errorf("live code at its expiry = %v; want ErrUnknown", err)
			}
			// A new code drops the learner's previous one.
			if err := s.PutCarryCode(ctx, "CCCCDDDD", carry.Ticket{Learner: alice, Expires: exp}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.TakeCarryCode(ctx, "AAAABBBB", t0); !errors.Is(err, carry.ErrUnknown) {
				t.Errorf("take of a replaced code = %v; want ErrUnknown", err)
			}
			if _, err := s.TakeCarryCode(ctx, "CCCCDDDD", exp); !errors.Is(err, carry.ErrExpired) {
				t.Errorf("take at expiry = %v; want ErrExpired", err)
			}
			tk, err := s.TakeCarryCode(ctx, "CCCCDDDD", t0)
			if err != nil || tk.Learner != alice {
				t.Fatalf("take = %+v %v; want alice's ticket", tk, err)
			}
			if _, err := s.TakeCarryCode(ctx, "CCCCDDDD", t0); !errors.Is(err, carry.ErrUsed) {
				t.Errorf("second take = %v; want ErrUsed", err)
			}
			if _, _, err := s.LiveCarryCode(ctx, alice, t0); !errors.Is(err, carry.ErrUnknown) {
				t.Errorf("live code after use = %v; want ErrUnknown", err)
			}
			if _, err := s.TakeCarryCode(ctx, "EEEEFFFF", t0); !errors.Is(err, carry.ErrUnknown) {
				t.Errorf("take of a code never made = %v; want ErrUnknown", err)
			}
			if err := s.PutCarryCode(ctx, "aaaa-bbb", carry.Ticket{Learner: alice, Expires: exp}); !errors.Is(err, carry.ErrMalformed) {
				t.Errorf("put of a non-canonical code = %v; want ErrMalformed", err)
			}
		})
	}
}

// TestCarryCodeTakenOnce: of many adoptions of one code at the same
// moment, exactly one wins.
func TestCarryCodeTakenOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if err := s.PutCarryCode(ctx, "GGGGHHHH", carry.Ticket{Learner: alice, Expires: now.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			var won, used atomic.Int32
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.TakeCarryCode(ctx, "GGGGHHHH", now)
					switch {
					case err == nil:
						won.Add(1)
					case errors.Is(err, carry.ErrUsed):
						used.Add(1)
					default:
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if won.Load() != 1 || used.Load() != 19 {
				t.Errorf("20 concurrent takes: %d won, %d told used; want 1 and 19", won.Load(), used.Load())
			}
		})
	}
}

func TestRedisDropsOldCarryCodes(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	m.SetTime(now)
	if err := s.PutCarryCode(ctx, "JJJJKKKK", carry.Ticket{Learner: alice, Expires: now.Add(15 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Keys()); n != 2 {
		t.Fatalf("keys after one code = %q; want the code and the learner's pointer", m.Keys())
	}
	m.FastForward(15*time.Minute + time.Second)
	if got := m.Keys(); len(got) != 1 {
		t.Errorf("keys after expiry = %q; want only the code, kept for its grace", got)
	}
	m.FastForward(carryGrace)
	if got := m.Keys(); len(got) != 0 {
		t.Errorf("keys after the grace = %q; want none", got)
	}
}

func TestBoltSweepsOldCarryCodes(t *testing.T) {
	ctx := context.Background()
	s, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	exp := now.Add(15 * time.Minute)
	for _, c := range []struct{ code, learner string }{{"MMMMNNNN", alice}, {"PPPPQQQQ", bob}} {
		if err := s.PutCarryCode(ctx, c.code, carry.Ticket{Learner: c.learner, Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.TakeCarryCode(ctx, "MMMMNNNN", now); err != nil {
		t.Fatal(err)
	}
	if n := s.Sweep(exp.Add(carryGrace - time.Second)); n != 0 {
		t.Errorf("sweep within the grace dropped %d; want 0", n)
	}
	if _, err := s.TakeCarryCode(ctx, "MMMMNNNN", now); !errors.Is(err, carry.ErrUsed) {
		t.Errorf("within the grace, take of a used code = %v; want ErrUsed", err)
	}
	if n := s.Sweep(exp.Add(carryGrace + time.Second)); n != 2 {
		t.Errorf("sweep after the grace dropped %d; want both codes", n)
	}
	b := s.b.(*boltBackend)
	_ = b.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(carryBucket).Stats().KeyN + tx.Bucket(carryByBucket).Stats().KeyN; n != 0 {
			t.Errorf("%d carry records left after the sweep; want 0", n)
		}
		return nil
	})
}
