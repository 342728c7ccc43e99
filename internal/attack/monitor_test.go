package attack

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/loadgen"
)

// Targets every attack is held to: a bystander learner's PING answers
// within pingP99 (99th percentile, as the server measured it) and the
// server with all its worker processes stays under maxRSS.
const (
	pingP99       = 100 * time.Millisecond
	maxRSS  int64 = 1_000_000_000 // 1 GB
)

// monitor watches the servers for the whole suite: a bystander learner
// on each sends PING every pingEvery, and the resident memory of each
// server and its children is sampled every rssEvery. Each attack is a
// phase, so the summary can say what each one cost.
type monitor struct {
	servers []*server
	control *server // attacked by nobody: what the machine alone costs
	proc    loadgen.Proc
	wg      sync.WaitGroup
	cancel  context.CancelFunc

	mu     sync.Mutex
	pings  []ping
	peak   map[string]int64 // by server, whole suite
	phases []*phase
	cur    *phase
}

// ping is one bystander PING.
type ping struct {
	srv    *server
	at     time.Time
	uri    string
	client time.Duration
	ok     bool
	what   string // the answer, when not PONG
}

// phase is one attack's window.
type phase struct {
	name       string
	start, end time.Time
	cpu0, cpu  map[string]time.Duration // by server: at the start, and used
	peak       map[string]int64         // by server
	failed     bool
}

const (
	pingEvery = 50 * time.Millisecond
	rssEvery  = 100 * time.Millisecond
)

func startMonitor(t *testing.T, control *server, servers ...*server) *monitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	servers = append(servers, control)
	m := &monitor{servers: servers, control: control, proc: loadgen.Proc{Root: "/proc"}, cancel: cancel, peak: map[string]int64{}}
	for i, s := range servers {
		b := newBrowser(s)
		// The bystander has an address of its own, as another learner
		// would, so that the attackers' per-address limits are not its.
		b.xff = fmt.Sprintf("198.18.200.%d", i+1)
		if a, out := b.exec("warmup", "PING", ordinary); out != "PONG" {
			t.Fatalf("%s: the bystander's first PING = %v", s.name, a)
		}
		m.wg.Add(1)
		go m.pinger(ctx, s, b)
	}
	m.wg.Add(1)
	go m.sampler(ctx)
	return m
}

func (m *monitor) stop() {
	m.cancel()
	m.wg.Wait()
}

func (m *monitor) pinger(ctx context.Context, s *server, b *browser) {
	defer m.wg.Done()
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		at := time.Now()
		a, out := b.exec("ping", "PING", ordinary)
		p := ping{srv: s, at: at, uri: a.uri, client: a.took, ok: a.err == nil && a.status == 200 && out == "PONG"}
		if !p.ok {
			p.what = a.String()
		}
		m.mu.Lock()
		m.pings = append(m.pings, p)
		m.mu.Unlock()
	}
}

func (m *monitor) sampler(ctx context.Context) {
	defer m.wg.Done()
	tick := time.NewTicker(rssEvery)
	defer tick.Stop()
	for {
		m.sample()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sample notes the memory each server (with its workers) uses now.
func (m *monitor) sample() {
	for _, s := range m.servers {
		u, err := m.proc.TreeUsage(s.pid())
		if err != nil {
			continue
		}
		m.mu.Lock()
		m.peak[s.name] = max(m.peak[s.name], u.RSS)
		if m.cur != nil {
			m.cur.peak[s.name] = max(m.cur.peak[s.name], u.RSS)
		}
		m.mu.Unlock()
	}
}

// cpu returns the CPU time each server (with its workers) has used.
func (m *monitor) cpu() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range m.servers {
		if u, err := m.proc.TreeUsage(s.pid()); err == nil {
			out[s.name] = u.CPU
		}
	}
	return out
}

// run runs one attack as a subtest and a phase of the summary.
func (m *monitor) run(t *testing.T, name string, f func(t *testing.T)) {
	p := &phase{name: name, start: time.Now(), cpu0: m.cpu(), peak: map[string]int64{}}
	m.mu.Lock()
	m.cur = p
	m.phases = append(m.phases, p)
	m.mu.Unlock()
	m.sample()
	ok := t.Run(name, f)
	m.sample()
	cpu := m.cpu()
	m.mu.Lock()
	p.end, p.failed, p.cpu = time.Now(), !ok, map[string]time.Duration{}
	for k, v := range cpu {
		p.cpu[k] = v - p.cpu0[k]
	}
	m.cur = nil
	m.mu.Unlock()
}

// peakNow is the highest memory of s seen in the current phase.
func (m *monitor) peakNow(s *server) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return 0
	}
	return m.cur.peak[s.name]
}

// pingStats sums up the bystander's PINGs on s sent in [from, to).
type pingStats struct {
	n, failed    int
	p99, max     time.Duration // as the server measured them
	clientP99    time.Duration // as the client saw them (includes the client's own delays)
	firstFailure string
}

func (m *monitor) pingStats(s *server, from, to time.Time) pingStats {
	m.mu.Lock()
	var ps []ping
	for _, p := range m.pings {
		if p.srv == s && !p.at.Before(from) && p.at.Before(to) {
			ps = append(ps, p)
		}
	}
	m.mu.Unlock()
	var st pingStats
	var server, client []time.Duration
	for _, p := range ps {
		st.n++
		client = append(client, p.client)
		d := p.client
		if !p.ok {
			st.failed++
			if st.firstFailure == "" {
				st.firstFailure = p.what
			}
		} else if sd, ok := s.log.serverLatency(p.uri, 2*time.Second); ok {
			d = sd // else the client's time, which is longer
		}
		server = append(server, d)
	}
	st.p99, st.max, st.clientP99 = percentile(server, 0.99), percentile(server, 1), percentile(client, 0.99)
	return st
}

// minPings is how many PINGs a window needs for its p99 to be judged:
// with fewer, the 99th percentile is the slowest one, which one hiccup of
// the machine decides. The whole suite's p99 covers the short windows.
const minPings = 100

// checkPings fails t if the bystander on s was refused in [from, to), or
// slow: its p99 may exceed what the bystander on the idle control server
// saw in the same window by less than pingP99. The control's PINGs take
// what the machine itself adds (other programs, the test client), so the
// check measures what the attack costs, not how busy the machine is.
func (m *monitor) checkPings(t *testing.T, s *server, from, to time.Time, what string) pingStats {
	t.Helper()
	st := m.pingStats(s, from, to)
	if st.failed > 0 {
		t.Errorf("%s: %d of another learner's %d PINGs failed; first: %s", what, st.failed, st.n, st.firstFailure)
	}
	if st.n < minPings {
		return st
	}
	limit := pingP99
	if m.control != nil && s != m.control {
		limit += m.pingStats(m.control, from, to).p99
	}
	if st.p99 >= limit {
		t.Errorf("%s: another learner's PING p99 = %v (max %v, %d PINGs, server-side); want < %v (%v over the idle control server's)", what, st.p99, st.max, st.n, limit, pingP99)
	}
	return st
}

// percentile returns the q-th quantile of ds (nearest rank); 0 for none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// summary is the table the suite prints at the end: each attack's wall
// time, result, server CPU and peak memory, and the bystanders' PINGs.
func (m *monitor) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-22s %-4s %7s", "attack", "", "wall")
	for _, s := range m.servers {
		fmt.Fprintf(&b, " | %-7s %7s %8s %8s %8s", s.name, "cpu", "peakRSS", "ping99", "client99")
	}
	b.WriteString("\n")
	m.mu.Lock()
	phases := slices.Clone(m.phases)
	peak := m.peak
	m.mu.Unlock()
	row := func(name, result string, wall time.Duration, from, to time.Time, cpu map[string]time.Duration, rss map[string]int64) {
		fmt.Fprintf(&b, "%-22s %-4s %6.1fs", name, result, wall.Seconds())
		for _, s := range m.servers {
			st := m.pingStats(s, from, to)
			cpuS := "-"
			if cpu != nil {
				cpuS = fmt.Sprintf("%.1fs", cpu[s.name].Seconds())
			}
			fmt.Fprintf(&b, " | %-7s %7s %7dM %8s %8s", "", cpuS, rss[s.name]>>20, ms(st.p99), ms(st.clientP99))
		}
		b.WriteString("\n")
	}
	var first, last time.Time
	for _, p := range phases {
		result := "ok"
		if p.failed {
			result = "FAIL"
		}
		if first.IsZero() {
			first = p.start
		}
		last = p.end
		row(p.name, result, p.end.Sub(p.start), p.start, p.end, p.cpu, p.peak)
	}
	row("whole suite", "", last.Sub(first), time.Time{}, time.Now(), nil, peak)
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
