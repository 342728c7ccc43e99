package playground

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
)

// memSnapshots is SandboxCopies in memory, shared by the Managers of a
// test as a Redis is by replicas. It can be made to fail, as a Redis that
// is down.
type memSnapshots struct {
	now func() time.Time

	mu        sync.Mutex
	copies    map[string]memCopy
	seq       int
	saves     int
	conflicts int
	down      bool
	// lostReply makes the next Save save and then fail, as a Redis whose
	// reply never arrived.
	lostReply bool
}

type memCopy struct {
	version string
	data    []byte
	expires time.Time
}

var errDown = errors.New("snapshot store down")

func newMemSnapshots(now func() time.Time) *memSnapshots {
	return &memSnapshots{now: now, copies: map[string]memCopy{}}
}

func (s *memSnapshots) live(learner string) (memCopy, bool) {
	c, ok := s.copies[learner]
	if ok && !s.now().Before(c.expires) {
		delete(s.copies, learner)
		return memCopy{}, false
	}
	return c, ok
}

func (s *memSnapshots) Version(_ context.Context, learner string, ttl time.Duration) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return "", errDown
	}
	c, ok := s.live(learner)
	if !ok {
		return "", nil
	}
	c.expires = s.now().Add(ttl)
	s.copies[learner] = c
	return c.version, nil
}

func (s *memSnapshots) LoadNewer(ctx context.Context, learner, have string, ttl time.Duration) (string, []byte, error) {
	ver, err := s.Version(ctx, learner, ttl)
	if err != nil || ver == "" || ver == have {
		return ver, nil, err
	}
	return s.Load(ctx, learner)
}

func (s *memSnapshots) Load(_ context.Context, learner string) (string, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return "", nil, errDown
	}
	c, _ := s.live(learner)
	return c.version, c.data, nil
}

func (s *memSnapshots) Save(_ context.Context, learner, base string, data []byte, ttl time.Duration) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return "", false, errDown
	}
	if c, _ := s.live(learner); c.version != base {
		s.conflicts++
		return "", false, nil
	}
	s.seq++
	s.saves++
	c := memCopy{version: strconv.Itoa(s.seq), data: data, expires: s.now().Add(ttl)}
	s.copies[learner] = c
	if s.lostReply {
		s.lostReply = false
		return "", false, errDown
	}
	return c.version, true, nil
}

func (s *memSnapshots) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *memSnapshots) saveCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// newReplicas returns two Managers that share SandboxCopies and a
// clock, as two replicas of the server behind a load balancer.
func newReplicas(t *testing.T, opts Options) (*Manager, *Manager, *memSnapshots, *fakeclock.Clock) {
	t.Helper()
	clock := newFakeClock()
	store := newMemSnapshots(clock.Now)
	opts.Now, opts.SandboxCopies = clock.Now, store
	m1, m2 := NewManager(opts), NewManager(opts)
	t.Cleanup(m1.Close)
	t.Cleanup(m2.Close)
	return m1, m2, store, clock
}

func wantOutput(t *testing.T, m *Manager, name, learner string, client Client, line, want string) {
	t.Helper()
	if res := mustExec(t, m, learner, client, line); res.Output != want {
		t.Errorf("%s: %s = %q; want %q", name, line, res.Output, want)
	}
}

func TestFollowCommandsAcrossReplicas(t *testing.T) {
	m1, m2, _, clock := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "SET lock:1 tok NX PX 30000")
	clock.Add(10 * time.Second)
	wantOutput(t, m2, "replica 2", "ada", ClientB, "GET lock:1", `"tok"`)
	// The TTL went on running while the learner moved.
	wantOutput(t, m2, "replica 2", "ada", ClientB, "PTTL lock:1", "(integer) 20000")
	// And back: replica 1 gives up its own, older sandbox.
	mustExec(t, m2, "ada", ClientA, "SET lock:1 other XX KEEPTTL")
	clock.Add(5 * time.Second)
	wantOutput(t, m1, "replica 1", "ada", ClientA, "GET lock:1", `"other"`)
	wantOutput(t, m1, "replica 1", "ada", ClientA, "PTTL lock:1", "(integer) 15000")
	clock.Add(15 * time.Second)
	wantOutput(t, m2, "replica 2", "ada", ClientA, "GET lock:1", "(nil)")
	// Other learners are not mixed in.
	wantOutput(t, m2, "replica 2", "bob", ClientA, "EXISTS lock:1", "(integer) 0")
}

func TestFollowScriptsAcrossReplicas(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{})
	sha := mustExec(t, m1, "ada", ClientA, `SCRIPT LOAD "return redis.call('GET', KEYS[1])"`).Output
	mustExec(t, m1, "ada", ClientA, "SET k v")
	wantOutput(t, m2, "replica 2", "ada", ClientA, "EVALSHA "+strings.Trim(sha, `"`)+" 1 k", `"v"`)
}

func TestFollowClockAndReset(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "SET lock:1 tok PX 30000")
	mustExec(t, m1, "ada", ClientA, "SET plain v")
	a, err := m1.Advance("ada", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now1 := a.Now
	if now2, err := m2.Clock("ada"); err != nil || !now2.Equal(now1) {
		t.Errorf("replica 2 Clock = %v, %v; want replica 1's %v after Advance", now2, err, now1)
	}
	wantOutput(t, m2, "replica 2", "ada", ClientA, "PTTL lock:1", "(integer) 10000")
	if _, err := m2.Advance("ada", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantOutput(t, m1, "replica 1", "ada", ClientA, "EXISTS lock:1", "(integer) 0")

	if err := m2.Reset("ada"); err != nil {
		t.Fatal(err)
	}
	wantOutput(t, m1, "replica 1", "ada", ClientA, "GET plain", "(nil)")
	now1, _ = m1.Clock("ada")
	if now2, _ := m2.Clock("ada"); !now1.Equal(now2) || now1.After(newFakeClock().Now()) {
		t.Errorf("clocks after Reset: %v and %v; want both back at the real time", now1, now2)
	}
}

func TestFollowKeysOnAReplicaNotUsedYet(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "SET k v")
	keys, err := m2.Keys("ada")
	if err != nil || len(keys) != 1 || keys[0].Key != "k" {
		t.Errorf("replica 2 Keys(ada) = %v, %v; want k", keys, err)
	}
	if keys, err := m2.Keys("nobody"); err != nil || len(keys) != 0 {
		t.Errorf("Keys(nobody) = %v, %v; want none", keys, err)
	}
	if m2.Len() != 1 {
		t.Errorf("replica 2 Len() = %d; want 1 (ada's, not nobody's)", m2.Len())
	}
}

func TestFollowSavesOnlyChanges(t *testing.T) {
	m1, m2, store, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "SET k v")
	saves := store.saveCount()
	for _, line := range []string{"GET k", "PTTL k", "KEYS *", "PING", "SET k w XX GET"} {
		mustExec(t, m1, "ada", ClientA, line)
	}
	mustExec(t, m2, "ada", ClientB, "GET k")
	m2.Keys("ada")
	if got := store.saveCount() - saves; got != 1 {
		t.Errorf("%d saves for reads and one write; want 1", got)
	}
}

// TestFollowStoreDown: with the store unreachable, lines are refused
// rather than answered by one replica alone, and nothing they did here
// is kept; when it is back, each replica starts again from the copy.
func TestFollowStoreDown(t *testing.T) {
	m1, m2, store, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "SET k 1")
	mustExec(t, m2, "ada", ClientA, "GET k")
	store.setDown(true)
	for _, tt := range []struct {
		m    *Manager
		line string
	}{{m1, "INCR k"}, {m1, "GET k"}, {m2, "SET k 9"}, {m2, "GET k"}} {
		if res, err := tt.m.Exec(context.Background(), "ada", ClientA, tt.line); !errors.Is(err, ErrStoreDown) {
			t.Errorf("Exec(%q) with the store down = %+v, %v; want ErrStoreDown", tt.line, res, err)
		}
	}
	if _, err := m1.Advance("ada", time.Second); !errors.Is(err, ErrStoreDown) {
		t.Errorf("Advance with the store down: %v; want ErrStoreDown", err)
	}
	if err := m2.Reset("ada"); !errors.Is(err, ErrStoreDown) {
		t.Errorf("Reset with the store down: %v; want ErrStoreDown", err)
	}
	if _, err := m1.Keys("bob"); !errors.Is(err, ErrStoreDown) {
		t.Errorf("Keys of a learner new here with the store down: %v; want ErrStoreDown", err)
	}
	// Back: the refused INCR, SET and reset left nothing on either
	// replica, whose sandboxes had run them before their saves failed.
	store.setDown(false)
	wantOutput(t, m1, "replica 1, store back", "ada", ClientA, "GET k", `"1"`)
	wantOutput(t, m2, "replica 2, store back", "ada", ClientA, "GET k", `"1"`)

	// A save Redis made but whose reply was lost: the line is refused,
	// and the next line, on either replica, sees what it did.
	store.mu.Lock()
	store.lostReply = true
	store.mu.Unlock()
	if _, err := m1.Exec(context.Background(), "ada", ClientA, "INCR k"); !errors.Is(err, ErrStoreDown) {
		t.Errorf("INCR whose save reply was lost: %v; want ErrStoreDown", err)
	}
	wantOutput(t, m1, "replica 1, after a lost reply", "ada", ClientA, "GET k", `"2"`)
	wantOutput(t, m2, "replica 2, after a lost reply", "ada", ClientA, "INCR k", "(integer) 3")
	wantOutput(t, m1, "replica 1", "ada", ClientA, "GET k", `"3"`)
}

func TestFollowIdleReplicaDoesNotReset(t *testing.T) {
	m1, m2, _, clock := newReplicas(t, Options{IdleTimeout: 30 * time.Minute})
	mustExec(t, m2, "ada", ClientA, "SET k v")
	for range 4 { // 40 minutes of work on replica 1
		clock.Add(10 * time.Minute)
		mustExec(t, m1, "ada", ClientA, "APPEND k +")
	}
	res := mustExec(t, m2, "ada", ClientA, "GET k")
	if res.Output != `"v++++"` || res.Notice != "" {
		t.Errorf("replica 2 after 40 minutes on replica 1: %+v; want \"v++++\" and no idle notice", res)
	}
}

func TestFollowMultiStaysOnItsReplica(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, "MULTI")
	mustExec(t, m1, "ada", ClientA, "SET k v")
	// The transaction is connection state, which does not follow.
	wantOutput(t, m2, "replica 2", "ada", ClientA, "EXEC", "(error) ERR EXEC without MULTI")
	wantOutput(t, m1, "replica 1", "ada", ClientA, "EXEC", "1) OK")
	wantOutput(t, m2, "replica 2", "ada", ClientB, "GET k", `"v"`)
}

// TestFollowRefusesOversizedCopies gives a replica well-formed copies of a
// sandbox from elsewhere: one within its bound, which it restores, and one
// larger than the bound (its keys fit the bound one by one), which it
// refuses before decoding.
func TestFollowRefusesOversizedCopies(t *testing.T) {
	limits := Limits{MaxDataBytes: 1 << 10, ScriptCacheBytes: 1 << 10, MaxKeys: 10}
	bound := maxSavedBytes(limits.withDefaults())
	for _, tt := range []struct {
		name   string
		values int // bytes of the copy's values, in 100-byte keys
		want   string
	}{
		{"within the bound", 500, "(integer) 5"},
		{"over the bound", bound + 1, "(integer) 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			store := newMemSnapshots(clock.Now)
			m := NewManager(Options{Now: clock.Now, SandboxCopies: store, Limits: limits})
			t.Cleanup(m.Close)
			var snap Snapshot
			for i := 0; i*100 < tt.values; i++ {
				snap.Keys = append(snap.Keys, KeyDump{Key: fmt.Sprintf("k%d", i), Type: "string", PTTLMS: -1, String: strings.Repeat("v", 100)})
			}
			data, err := encodeSaved(snap, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if over := len(data) > bound; over != (tt.values > bound) {
				t.Fatalf("the copy is %d bytes against a bound of %d; the test needs it on the other side", len(data), bound)
			}
			if _, _, err := store.Save(context.Background(), "ada", "", data, time.Hour); err != nil {
				t.Fatal(err)
			}
			wantOutput(t, m, tt.name, "ada", ClientA, "DBSIZE", tt.want)
		})
	}
}

// TestFollowAlternatingReplicas sends a learner's lines to two replicas in
// turn, as a load balancer without sticky sessions does: every write is
// saved before its reply, so none is lost, whatever the spacing.
func TestFollowAlternatingReplicas(t *testing.T) {
	m1, m2, store, _ := newReplicas(t, Options{})
	replicas := []*Manager{m1, m2}
	for i := 1; i <= 100; i++ {
		wantOutput(t, replicas[i%2], "alternating", "ada", ClientA, "INCR n", fmt.Sprintf("(integer) %d", i))
	}
	// The first line to move to each replica ran on its older sandbox,
	// found the copy newer when it saved, and ran again on the copy;
	// after that each replica compares versions first, and no save is
	// thrown away.
	if store.conflicts > 2 {
		t.Errorf("%d conflicting saves for 100 lines that moved; want one a replica, the first", store.conflicts)
	}
	// A lock released on one replica is free on the other at once.
	wantOutput(t, m1, "replica 1", "ada", ClientA, "SET lock:1 tok NX PX 30000", "OK")
	wantOutput(t, m2, "replica 2", "ada", ClientA, "DEL lock:1", "(integer) 1")
	wantOutput(t, m1, "replica 1", "ada", ClientB, "SET lock:1 b NX PX 30000", "OK")
	// Back on one replica, lines run once, with one round trip each.
	before, saves := store.conflicts, store.saveCount()
	for i := 101; i <= 110; i++ {
		wantOutput(t, m1, "staying", "ada", ClientA, "INCR n", fmt.Sprintf("(integer) %d", i))
	}
	if store.conflicts != before || store.saveCount()-saves != 10 {
		t.Errorf("10 lines on one replica: %d conflicts, %d saves; want 0 and 10", store.conflicts-before, store.saveCount()-saves)
	}
}

// TestFollowConcurrentReplicas has one learner's lines run on two replicas
// at the same time, which a page sending several requests at once does.
// Each replica's sandbox may be behind when its line runs; the save after
// it then finds the other replica's newer copy and the line runs again on
// that. Every INCR that got a reply is counted once, and the replies are
// the numbers 1 to n, each once.
func TestFollowConcurrentReplicas(t *testing.T) {
	m1, m2, store, _ := newReplicas(t, Options{})
	const each = 60
	var mu sync.Mutex
	seen := map[string]int{}
	busy := 0
	var wg sync.WaitGroup
	for _, m := range []*Manager{m1, m2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				res, err := m.Exec(context.Background(), "ada", ClientA, "INCR n")
				mu.Lock()
				if errors.Is(err, ErrBusy) {
					busy++
				} else if err != nil {
					t.Errorf("INCR: %v", err)
				} else {
					seen[res.Output]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	acked := 2*each - busy
	for i := 1; i <= acked; i++ {
		if out := fmt.Sprintf("(integer) %d", i); seen[out] != 1 {
			t.Errorf("reply %q given %d times; want once", out, seen[out])
		}
	}
	wantOutput(t, m1, "replica 1 after", "ada", ClientA, "GET n", fmt.Sprintf(`"%d"`, acked))
	wantOutput(t, m2, "replica 2 after", "ada", ClientA, "GET n", fmt.Sprintf(`"%d"`, acked))
	t.Logf("%d INCRs acknowledged, %d busy, %d conflicting saves run again", acked, busy, store.conflicts)
	if acked < each {
		t.Errorf("only %d of %d INCRs acknowledged", acked, 2*each)
	}
}

// TestSavedCopyEncodings: a copy keeps binary keys and values as they
// are, and a copy in the encoding written before (gob) still restores, so
// that replicas of two versions can run side by side.
func TestSavedCopyEncodings(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	snap := Snapshot{
		Offset:    3 * time.Second,
		Keys:      []KeyDump{{Key: "k\x00\xff", Type: "string", PTTLMS: 5000, String: "\xff\xfe\x00v"}, {Key: "h", Type: "hash", PTTLMS: -1, Hash: map[string]string{"f\x80": "\x00"}}},
		Scripts:   []string{"return 1"},
		Libraries: []string{"#!lua name=l\nredis.register_function('f', function() return 1 end)"},
		Nodes:     &NodesSnapshot{Others: []NodeSnapshot{{Node: 3, Snapshot: Snapshot{Keys: []KeyDump{{Key: "x", Type: "set", PTTLMS: -1, Set: []string{"1", "2"}}}}}}},
	}
	data, err := encodeSaved(snap, now)
	if err != nil {
		t.Fatal(err)
	}
	var gobData bytes.Buffer
	gobData.WriteByte(savedGob)
	if err := gob.NewEncoder(&gobData).Encode(saved{SavedAtMS: now.UnixMilli(), Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"msgpack": data, "gob": gobData.Bytes()} {
		got, err := decodeSaved(data, now.Add(time.Second))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := snap.aged(time.Second)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v\nwant %+v", name, got, want)
		}
	}
	if _, err := decodeSaved([]byte{9, 1, 2}, now); err == nil {
		t.Error("a copy of an unknown format decoded")
	}
}

// gatedSaves is memSnapshots whose first Save waits until gate is
// closed, so that a test can hold a learner's sandbox busy.
type gatedSaves struct {
	*memSnapshots
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedSaves) Save(ctx context.Context, learner, base string, data []byte, ttl time.Duration) (string, bool, error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.gate
	}
	return g.memSnapshots.Save(ctx, learner, base, data, ttl)
}

// TestFollowSkipsCallersWhoLeft checks that a line whose caller gave up
// while it waited behind the learner's other line is not run: no one
// will read its answer.
func TestFollowSkipsCallersWhoLeft(t *testing.T) {
	clock := newFakeClock()
	g := &gatedSaves{memSnapshots: newMemSnapshots(clock.Now), entered: make(chan struct{}), gate: make(chan struct{})}
	m := NewManager(Options{Now: clock.Now, SandboxCopies: g})
	t.Cleanup(m.Close)
	first := make(chan error)
	go func() {
		_, err := m.Exec(context.Background(), "ada", ClientA, "SET k 1")
		first <- err
	}()
	<-g.entered // the first line holds the sandbox, saving
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error)
	go func() {
		_, err := m.Exec(ctx, "ada", ClientA, "INCR n")
		second <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it reach the sandbox's queue
	cancel()
	close(g.gate)
	if err := <-first; err != nil {
		t.Fatalf("first line: %v", err)
	}
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("line whose caller left = %v; want context.Canceled", err)
	}
	wantOutput(t, m, "after", "ada", ClientA, "GET n", "(nil)")
	wantOutput(t, m, "after", "ada", ClientA, "GET k", `"1"`)
}
