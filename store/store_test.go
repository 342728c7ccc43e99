package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/internal/testenv"
)

const (
	alice = "alice-0123456789abcdef"
	bob   = "bob-0123456789abcdef00"
)

// backends opens a fresh store of every kind: bolt in a temp dir, Redis on
// miniredis, and Redis on a real redis-server.
func backends(t *testing.T) map[string]func(t *testing.T) *Store {
	return map[string]func(t *testing.T) *Store{
		"bolt": func(t *testing.T) *Store {
			s, err := OpenBolt(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"miniredis": func(t *testing.T) *Store {
			m := miniredis.RunT(t)
			s, err := OpenRedis("redis://" + m.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis-server": func(t *testing.T) *Store {
			s, err := OpenRedis("redis://" + redistest.Start(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"cluster": func(t *testing.T) *Store {
			s, _ := openCluster(t)
			return s
		},
	}
}

// clusterWait is how long the cluster tests' writes wait for a replica.
const clusterWait = 5 * time.Second

// callTimeout bounds each Redis call of a store opened with it, and each
// read of its replies, at d.
func callTimeout(d time.Duration) Option {
	return func(o *options) { o.callTimeout = d }
}

// openCluster opens two stores, as two replicas, on a Redis Cluster of
// three masters with a replica each, started for the test: every script
// and transaction then runs where keys in different slots would be
// refused (CROSSSLOT), and every write waits for a replica. A cluster
// takes seconds to start, so it is in the slow tier.
func openCluster(t *testing.T) (*Store, *Store) {
	t.Helper()
	testenv.Slow(t, "Redis Cluster")
	c := redistest.StartCluster(t, 3, 1)
	open := func() *Store {
		// Every write waits for a replica, for as long as a loaded
		// machine may take: a warning is a replica that never answered.
		// Each call, and each read of its replies, has time for that
		// wait; the 700 ms and 1 s they have otherwise would cut it short.
		s, err := OpenRedis(c.URL(), RedisMode(ModeCluster), Warn(func(err error) { t.Errorf("store warned: %v", err) }), callTimeout(clusterWait+2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s.b.(*redisBackend).replicas.wait = clusterWait
		t.Cleanup(func() { s.Close() })
		warmUp(t, s)
		return s
	}
	return open(), open()
}

// warmUp waits until a fresh cluster store has answered a read and has a
// connection to every master, each having answered a WAIT for its
// replica. A first call reads the slot map and the command table, and a
// first call to each master dials it, all within the one call's timeout;
// on a machine busy with the race detector and other packages' tests that
// may not be enough. These tests are about what the calls after it do.
func warmUp(t *testing.T, s *Store) {
	t.Helper()
	cc := s.b.(*redisBackend).rdb.(*redis.ClusterClient)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := s.Progress(context.Background(), "warm-up-0123456789abcd")
		if err == nil {
			err = cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
				return c.Do(ctx, "WAIT", 1, 5000).Err()
			})
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster store never answered: %v", err)
		}
		t.Logf("cluster store not answering yet: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStoreBehaviour(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if l, err := s.Progress(ctx, alice); err != nil || len(l) != 0 {
				t.Fatalf("new learner = %v, %v; want empty", l, err)
			}
			tp, err := s.RecordAnswer(ctx, alice, "locks", "q1", false)
			if err != nil || !tp.Started || len(tp.Right) != 0 {
				t.Fatalf("wrong answer -> %+v, %v; want started, none right", tp, err)
			}
			for _, q := range []string{"q2", "q1", "q2"} {
				if tp, err = s.RecordAnswer(ctx, alice, "locks", q, true); err != nil {
					t.Fatal(err)
				}
			}
			if want := []string{"q1", "q2"}; !reflect.DeepEqual(tp.Right, want) {
				t.Errorf("right = %q; want %q (each once, sorted)", tp.Right, want)
			}
			if err := s.MarkStarted(ctx, bob, "other"); err != nil {
				t.Fatal(err)
			}
			if l, _ := s.Progress(ctx, bob); !l["other"].Started || l["locks"].Started {
				t.Errorf("bob = %+v; want only topic other started", l)
			}
			// Merge keeps everything of both.
			if _, err := s.RecordAnswer(ctx, bob, "locks", "q3", true); err != nil {
				t.Fatal(err)
			}
			if err := s.Merge(ctx, alice, bob); err != nil {
				t.Fatal(err)
			}
			l, _ := s.Progress(ctx, bob)
			if want := []string{"q1", "q2", "q3"}; !reflect.DeepEqual(l["locks"].Right, want) || !l["other"].Started {
				t.Errorf("after merge bob = %+v; want locks right %q and other started", l, want)
			}
			// The secret is created once and then kept.
			s1, err := s.Secret(ctx, []byte("first"))
			if err != nil {
				t.Fatal(err)
			}
			s2, _ := s.Secret(ctx, []byte("second"))
			if string(s1) != "first" || string(s2) != "first" {
				t.Errorf("secrets = %q, %q; want first both times", s1, s2)
			}
			if _, err := s.Progress(ctx, "x"); !errors.Is(err, ErrBadLearner) {
				t.Errorf("Progress(short id) = %v; want ErrBadLearner", err)
			}
		})
	}
}

// TestConcurrentAnswers checks that answers written at the same time by
// many goroutines are all kept.
func TestConcurrentAnswers(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.RecordAnswer(ctx, alice, "locks", fmt.Sprintf("q%02d", i), true); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			tp, err := s.Topic(ctx, alice, "locks")
			if err != nil || len(tp.Right) != 40 {
				t.Errorf("kept %d of 40 answers (%v)", len(tp.Right), err)
			}
		})
	}
}

func TestBoltSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tp, _ := s.Topic(ctx, alice, "locks"); !reflect.DeepEqual(tp.Right, []string{"q1"}) {
		t.Errorf("after reopen = %+v; want q1 right", tp)
	}
}

// TestRedisOutageAndRecovery stops Redis: saving must fail with
// ErrUnavailable within a second, and work again once Redis is back,
// with the same Store and no restart.
func TestRedisOutageAndRecovery(t *testing.T) {
	ctx := context.Background()
	srv := redistest.StartServer(t)
	s, err := OpenRedis("redis://" + srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	_, err = s.RecordAnswer(ctx, alice, "locks", "q2", true)
	if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > time.Second {
		t.Errorf("with Redis down: %v after %v; want ErrUnavailable within 1s", err, took)
	}
	redistest.StartOnPort(t, srv.Port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = s.RecordAnswer(ctx, alice, "locks", "q2", true)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after Redis came back: %v", err)
	}
}

func TestOpenRedisBadURL(t *testing.T) {
	if _, err := OpenRedis("http://nope"); err == nil {
		t.Error("OpenRedis(http://nope) = nil error")
	}
}
