package playground

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// budgetLimits make sandboxes of 10,000 bytes, filled 4 KB at a time.
var budgetLimits = Limits{MaxDataBytes: 10_000, MaxValueBytes: 4000}

// fillLine writes about 4 KB: the data bound grows by 4,093 bytes.
func fillLine(key string) string { return "SET " + key + " " + strings.Repeat("x", 4000) }

func TestManagerBudgetDropsIdleSandboxes(t *testing.T) {
	m, clock := newTestManager(t, Options{Limits: budgetLimits, MaxDataBytes: 25_000, ActiveFor: time.Minute})
	for _, learner := range []string{"ada", "bob"} {
		mustExec(t, m, learner, ClientA, fillLine("k1"))
		mustExec(t, m, learner, ClientA, fillLine("k2"))
		clock.Add(time.Second)
	}
	mustExec(t, m, "eve", ClientA, "PING") // idle, but holds no data
	if data, reserved := m.DataBytes(); data != 4*4093 || reserved != 0 {
		t.Fatalf("DataBytes() = %d, %d; want %d, 0", data, reserved, 4*4093)
	}
	clock.Add(2 * time.Minute)
	// cyd needs room for a full sandbox: ada, the least recently used
	// idle sandbox with data, makes it.
	mustExec(t, m, "cyd", ClientA, fillLine("k1"))
	if data, _ := m.DataBytes(); data != 3*4093 {
		t.Errorf("DataBytes() after the drop = %d; want %d", data, 3*4093)
	}
	if res := mustExec(t, m, "bob", ClientA, "DBSIZE"); res.Output != "(integer) 2" || res.Notice != "" {
		t.Errorf("bob's DBSIZE = %+v; want his 2 keys kept", res)
	}
	if res := mustExec(t, m, "eve", ClientA, "PING"); res.Notice != "" {
		t.Errorf("eve's PING = %+v; want her sandbox kept, with no notice", res)
	}
	res := mustExec(t, m, "ada", ClientA, "DBSIZE")
	if res.Output != "(integer) 0" || res.Notice != fullNotice {
		t.Errorf("ada's DBSIZE = %+v; want a fresh sandbox with the notice %q", res, fullNotice)
	}
}

func TestManagerBudgetRefusesWritesWhenAllAreActive(t *testing.T) {
	m, clock := newTestManager(t, Options{Limits: budgetLimits, MaxDataBytes: 22_000})
	for _, learner := range []string{"ada", "bob"} {
		mustExec(t, m, learner, ClientA, fillLine("k1"))
		mustExec(t, m, learner, ClientA, fillLine("k2"))
	}
	clock.Add(time.Minute) // still active (ActiveFor defaults to 2 minutes)
	mustExec(t, m, "cyd", ClientA, fillLine("k1"))
	res, err := m.Exec(context.Background(), "cyd", ClientA, fillLine("k2"))
	const want = "(error) ERR the playground is full right now"
	if !errors.Is(err, ErrLimit) || !strings.HasPrefix(res.Output, want) {
		t.Errorf("cyd's second SET = %q, %v; want %q..., ErrLimit", res.Output, err, want)
	}
	if res := mustExec(t, m, "cyd", ClientA, "EXISTS k2"); res.Output != "(integer) 0" {
		t.Errorf("EXISTS k2 after the refusal = %q; want the sandbox unchanged", res.Output)
	}
	for _, learner := range []string{"ada", "bob"} {
		if res := mustExec(t, m, learner, ClientA, "DBSIZE"); res.Output != "(integer) 2" || res.Notice != "" {
			t.Errorf("%s's DBSIZE = %+v; want both keys kept", learner, res)
		}
	}
	// Making room in one's own sandbox is always possible, and makes room.
	mustExec(t, m, "cyd", ClientA, "DEL k1")
	if res := mustExec(t, m, "cyd", ClientA, fillLine("k2")); res.Output != "OK" {
		t.Errorf("SET k2 after DEL k1 = %q; want OK", res.Output)
	}
	if data, reserved := m.DataBytes(); data > 22_000 || reserved != 0 {
		t.Errorf("DataBytes() = %d, %d; want at most the budget, nothing reserved", data, reserved)
	}
	if err := m.Reset("cyd"); err != nil {
		t.Fatal(err)
	}
	if data, _ := m.DataBytes(); data != 4*4093 {
		t.Errorf("DataBytes() after cyd's reset = %d; want ada's and bob's %d", data, 4*4093)
	}
}

func TestManagerCapPerAddress(t *testing.T) {
	m, clock := newTestManager(t, Options{MaxPerAddress: 2})
	from := func(addr string) context.Context { return WithAddress(context.Background(), addr) }
	exec := func(learner, addr, line string) Result {
		t.Helper()
		res, err := m.Exec(from(addr), learner, ClientA, line)
		if err != nil {
			t.Fatalf("%s from %q: %s: %v", learner, addr, line, err)
		}
		return res
	}
	for _, learner := range []string{"ada", "bob"} {
		exec(learner, "10.0.0.1", "SET k "+learner)
		clock.Add(time.Second)
	}
	exec("ada", "10.0.0.1", "PING") // bob is now the address's least recently used
	exec("dan", "10.0.0.2", "SET k dan")
	mustExec(t, m, "eve", ClientA, "SET k eve") // no address: not counted
	exec("cyd", "10.0.0.1", "SET k cyd")
	if m.Len() != 4 {
		t.Errorf("Len() = %d; want 4 (ada, cyd, dan, eve)", m.Len())
	}
	for _, learner := range []string{"ada", "dan", "eve"} {
		if res := mustExec(t, m, learner, ClientA, "GET k"); res.Output != `"`+learner+`"` {
			t.Errorf("%s's GET k = %+v; want the sandbox kept", learner, res)
		}
	}
	res := exec("bob", "10.0.0.2", "GET k") // bob moved to another network
	if res.Output != "(nil)" || res.Notice != addressNotice {
		t.Errorf("bob's GET k = %+v; want a fresh sandbox with the notice %q", res, addressNotice)
	}
	// A learner who moves leaves their old address's count.
	exec("fay", "10.0.0.1", "SET k fay")
	// fay's arrival drops ada, now the least recently used at 10.0.0.1.
	if res := exec("cyd", "10.0.0.1", "GET k"); res.Output != `"cyd"` {
		t.Errorf("cyd's GET k = %+v; want her sandbox kept", res)
	}
	if res := mustExec(t, m, "ada", ClientA, "GET k"); res.Output != "(nil)" || res.Notice != addressNotice {
		t.Errorf("ada's GET k = %+v; want a fresh sandbox with the notice", res)
	}
}

func TestSandboxKeySizeLimit(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{MaxKeyBytes: 1000})
	item := strings.Repeat("x", 300)
	const refused = `(error) ERR the playground keeps each key under 1000 bytes, all its elements together, and "l" could grow past that; use several smaller keys`
	runSteps(t, s, []step{
		{ClientA, "RPUSH l " + item, "(integer) 1"},
		{ClientA, "RPUSH l " + item, "(integer) 2"},
		{ClientA, "RPUSH l " + item, refused},
		{ClientA, "LLEN l", "(integer) 2"},
		{ClientA, "RPUSH m " + item, "(integer) 1"},
		{ClientA, "HSET h f " + strings.Repeat("y", 1200), `(error) ERR the playground keeps each key under 1000 bytes, all its elements together, and "h" could grow past that; use several smaller keys`},
		{ClientA, "LPOP l", `"` + item + `"`},
		{ClientA, "RPUSH l x", "(integer) 2"},
		{ClientA, "COPY m m2", "(integer) 1"},
		{ClientA, "COPY l m3", "(integer) 1"},
	})
	if _, err := s.Exec(context.Background(), ClientA, "RPUSH l "+item+" "+item); !errors.Is(err, ErrLimit) {
		t.Errorf("RPUSH past the key limit: error %v; want ErrLimit", err)
	}
}

func TestSandboxExecWithin(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, budgetLimits)
	res, size, err := s.ExecWithin(context.Background(), ClientA, fillLine("k1"), 5000)
	if err != nil || res.Output != "OK" || size != 4093 {
		t.Errorf("first SET within 5000 = %q, %d, %v; want OK, 4093", res.Output, size, err)
	}
	res, size, err = s.ExecWithin(context.Background(), ClientA, fillLine("k2"), 5000)
	if !errors.Is(err, ErrLimit) || !strings.Contains(res.Output, "playground is full") || size != 4002 {
		t.Errorf("second SET within 5000 = %q, %d, %v; want refused as full, the measured 4002", res.Output, size, err)
	}
	// Exec alone gets the sandbox's whole limit back.
	if res, err := s.Exec(context.Background(), ClientA, fillLine("k2")); err != nil || res.Output != "OK" {
		t.Errorf("Exec SET k2 = %q, %v; want OK", res.Output, err)
	}
}

func TestSandboxQueuedBytesLimit(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{MaxQueuedBytes: 1000})
	item := strings.Repeat("x", 400)
	runSteps(t, s, []step{
		{ClientA, "MULTI", "OK"},
		{ClientA, "SET a " + item, "QUEUED"},
		{ClientA, "SET b " + item, "QUEUED"},
		{ClientA, "SET c " + item, "(error) ERR the playground queues at most 1000 bytes of commands in a transaction"},
		{ClientA, "EXEC", "(error) EXECABORT Transaction discarded because of previous errors."},
		{ClientA, "MULTI", "OK"},
		{ClientA, "SET a " + item, "QUEUED"},
		{ClientA, "SET b " + item, "QUEUED"},
		{ClientA, "EXEC", "1) OK\n2) OK"},
	})
	// What a transaction holds counts as data for a Manager's budget.
	ctx := context.Background()
	_, before, _ := s.ExecWithin(ctx, ClientA, "PING", 1<<20)
	s.Exec(ctx, ClientB, "MULTI")
	if _, size, _ := s.ExecWithin(ctx, ClientB, "SET c "+item, 1<<20); size < before+400 {
		t.Errorf("size with a command queued = %d; want at least 400 more than the %d without", size, before)
	}
	s.Exec(ctx, ClientB, "DISCARD")
	if _, size, _ := s.ExecWithin(ctx, ClientA, "PING", 1<<20); size != before {
		t.Errorf("size after DISCARD = %d; want %d back", size, before)
	}
}

func TestManagerBudgetCountsRestoredCopies(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{Limits: budgetLimits})
	mustExec(t, m1, "ada", ClientA, fillLine("k1"))
	if keys, err := m2.Keys("ada"); err != nil || len(keys) != 1 {
		t.Fatalf("replica 2 Keys(ada) = %v, %v; want k1", keys, err)
	}
	if data, _ := m2.DataBytes(); data != 4002 {
		t.Errorf("replica 2 DataBytes() after restoring ada's copy = %d; want its 4002", data)
	}
}

// TestManagerBudgetManyCallsInFlight: with hundreds of calls in flight,
// as on a busy server, each still gets room for a key, then for a small
// write, though none has settled; and together they never reserve more
// than the budget.
func TestManagerBudgetManyCallsInFlight(t *testing.T) {
	const budget = 128 << 20
	m, _ := newTestManager(t, Options{MaxDataBytes: budget})
	lim := m.opts.Limits
	var total int
	for i := range 600 {
		allow, reserved := m.grant(&session{})
		total += reserved
		switch {
		case i == 0 && allow != lim.footprint():
			t.Errorf("a call alone may grow its sandbox by %d bytes; want its whole allowance, %d", allow, lim.footprint())
		case i > 0 && i < 480 && reserved < lim.MaxKeyBytes:
			t.Fatalf("call %d in flight may grow its sandbox by %d bytes; want room for a key at its largest, %d", i+1, reserved, lim.MaxKeyBytes)
		case i < 520 && reserved < 1<<10:
			t.Fatalf("call %d in flight may grow its sandbox by %d bytes; want at least a kilobyte", i+1, reserved)
		}
	}
	if _, reserved := m.DataBytes(); reserved != total || total > budget {
		t.Errorf("600 calls reserved %d bytes (the Manager counts %d); want at most the budget, %d", total, reserved, budget)
	}
}
