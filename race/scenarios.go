package race

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// ErrUnknownScenario is wrapped by Run when no scenario has the given id.
var ErrUnknownScenario = errors.New("unknown scenario")

// Info describes a scenario for a menu.
type Info struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Setup is what a learner may know before a run with the defaults:
	// who, the TTL, pauses, fencing, one sentence each (see Setup).
	Setup    []string `json:"setup"`
	Defaults Params   `json:"defaults"`
	Applies  []string `json:"applies"` // the Param names the scenario uses
	// Targets are the fault targets the scenario has: its clients, then
	// its nodes ("redis" for a single one).
	Targets []string `json:"targets"`
}

// scenario is an Info and the code that sets up its clients and faults.
type scenario struct {
	Info
	nodes   int
	clients int  // 2 unless set
	primary bool // one node at a time is the primary, which "redis" names
	setup   func(s *runner)
	// plan is the setup in words for learners (see Setup): the same
	// times and lengths as setup, and no outcome.
	plan func(p Params) []string
}

// defaults returns the parameters most scenarios start from.
func defaults() Params {
	return Params{TTL: 10 * time.Second, Work: 2 * time.Second, Release: ReleaseScript, Seed: 1}
}

// scenarios returns every scenario, in teaching order.
func scenarios() []scenario {
	single := []string{ParamTTL, ParamPause, ParamWork, ParamFencing, ParamSeed}
	with := func(f func(*Params)) Params {
		p := defaults()
		f(&p)
		return p
	}
	return []scenario{
		{
			Info: Info{
				ID:       "normal",
				Title:    "The normal case",
				Defaults: defaults(),
				Applies:  []string{ParamTTL, ParamWork, ParamSeed},
			},
			nodes: 1,
			plan:  planNormal,
			setup: func(s *runner) {
				s.presetFence()
				s.startJob(s.addClient(1), 0, job{work: s.p.Work})
				s.startJob(s.addClient(2), s.p.TTL/20, job{work: s.p.Work})
			},
		},
		{
			Info: Info{
				ID:       "gc-pause",
				Title:    "A pause longer than the TTL",
				Defaults: with(func(p *Params) { p.Pause = 15 * time.Second }),
				Applies:  single,
			},
			nodes: 1,
			plan:  planPause,
			setup: setupPause,
		},
		{
			Info: Info{
				ID:       "fencing",
				Title:    "The same pause, with fencing tokens",
				Defaults: with(func(p *Params) { p.Pause = 15 * time.Second; p.Fencing = true }),
				Applies:  single,
			},
			nodes: 1,
			plan:  planPause,
			setup: setupPause,
		},
		{
			Info: Info{
				ID:    "release-del",
				Title: "Releasing with a plain DEL",
				Defaults: with(func(p *Params) {
					p.Work, p.Pause, p.Release = 4*time.Second, 10*time.Second, ReleaseDel
				}),
				Applies: []string{ParamTTL, ParamPause, ParamWork, ParamFencing, ParamRelease, ParamSeed},
			},
			nodes: 1, clients: 3,
			plan: planReleaseDel,
			setup: func(s *runner) {
				s.presetFence()
				s.startJob(s.addClient(1), 0, job{work: s.p.Work, pause: s.p.Pause, where: pauseBeforeRelease})
				s.startJob(s.addClient(2), s.p.TTL/2, job{work: s.p.Work})
				s.startJob(s.addClient(3), s.p.Work+s.p.Pause+s.p.TTL/100, job{work: s.p.Work})
			},
		},
		{
			Info: Info{
				ID:    "renewal",
				Title: "Renewing the lock",
				Defaults: with(func(p *Params) {
					p.Work, p.Pause = 15*time.Second, 15*time.Second
				}),
				Applies: []string{ParamTTL, ParamPause, ParamWork, ParamSeed},
			},
			nodes: 1,
			plan:  planRenewal,
			setup: func(s *runner) {
				s.presetFence()
				s.startJob(s.addClient(1), 0, job{work: s.p.Work, pause: s.p.Pause, renew: renewTimer})
				s.startJob(s.addClient(2), s.p.TTL, job{work: s.p.Work, renew: renewTimer})
			},
		},
		{
			Info: Info{
				ID:    "redlock-clock-jump",
				Title: "Redlock: a node's clock jumps",
				Defaults: with(func(p *Params) {
					p.Work, p.ClockJump = 5*time.Second, 10*time.Second
				}),
				Applies: []string{ParamTTL, ParamWork, ParamClockJump, ParamSeed},
			},
			nodes: 5,
			plan:  planClockJump,
			setup: func(s *runner) {
				at := s.p.TTL / 10
				s.startRedlockClients(at + s.p.TTL/20)
				s.at(at, func() { s.clockJump(s.nodes[2], s.p.ClockJump) })
			},
		},
		{
			Info: Info{
				ID:    "redlock-crash",
				Title: "Redlock: a node restarts without its data",
				Defaults: with(func(p *Params) {
					p.Work, p.RestartDelay = 5*time.Second, time.Second
				}),
				Applies: []string{ParamTTL, ParamWork, ParamRestartDelay, ParamSeed},
			},
			nodes: 5,
			plan:  planRedlockCrash,
			setup: func(s *runner) {
				at := s.p.TTL / 10
				s.startRedlockClients(at + s.p.TTL/20)
				s.at(at, func() { s.crash(s.nodes[2], false) })
				s.at(at+s.p.RestartDelay, func() { s.restart(s.nodes[2], false) })
			},
		},
		{
			Info: Info{
				ID:    "failover",
				Title: "Failover to an asynchronous replica",
				Defaults: with(func(p *Params) {
					p.Work, p.ReplicationLag, p.RestartDelay = 8*time.Second, time.Second, 3*time.Second
				}),
				Applies: []string{ParamTTL, ParamWork, ParamFencing, ParamReplicationLag, ParamWait, ParamRestartDelay, ParamSeed},
			},
			nodes: 2, primary: true,
			plan: planFailover,
			setup: func(s *runner) {
				s.redlock = false // two nodes, but one primary at a time
				s.failover = &failover{primary: s.nodes[0], replica: s.nodes[1], lag: s.p.ReplicationLag, downAfter: s.p.TTL / 10}
				s.presetFence()
				s.startJob(s.addClient(1), 0, job{work: s.p.Work})
				s.startJob(s.addClient(2), s.p.TTL/20, job{work: s.p.Work / 2})
				// The crash comes halfway through the copy of client 1's
				// key: acknowledged to client 1, not yet on the replica.
				// The old primary comes back after restart_delay_ms, as a
				// replica of the new one.
				old := s.failover.primary
				s.at(s.p.ReplicationLag/2, func() { s.crash(old, false) })
				s.at(s.p.ReplicationLag/2+s.p.RestartDelay, func() {
					if !old.up {
						s.restart(old, false)
					}
				})
			},
		},
		{
			Info: Info{
				ID:       "watchdog",
				Title:    "A watchdog that renews a stuck client",
				Defaults: with(func(p *Params) { p.Work = 4 * time.Second; p.Renew = RenewTimer }),
				Applies:  []string{ParamTTL, ParamWork, ParamRenew, ParamSeed},
			},
			nodes: 1,
			plan:  planWatchdog,
			setup: func(s *runner) {
				s.presetFence()
				mode := renewTimer
				if s.p.Renew == RenewProgress {
					mode = renewProgress
				}
				// The run lasts until client 2 has waited three TTLs after
				// client 1 hangs. Client 1's work would take longer than
				// that; it hangs after work_ms.
				s.horizon = watchdogHorizon(s.p)
				s.startJob(s.addClient(1), 0, job{work: s.horizon + s.p.TTL, renew: mode, stuckAt: s.p.Work})
				s.startJob(s.addClient(2), s.p.TTL/2, job{work: s.p.TTL / 5})
				s.at(s.horizon, func() { s.giveUp(s.clients[1]) })
			},
		},
	}
}

// watchdogHorizon is when the watchdog run with p ends.
func watchdogHorizon(p Params) time.Duration { return p.Work + 3*p.TTL }

// giveUp ends the watchdog run: whoever still waits stops waiting.
func (s *runner) giveUp(c *client) {
	if c.got {
		return
	}
	c.stopped = true
	s.emit(Event{Actor: c.name, Kind: KindStop, Text: fmt.Sprintf("After %s %s still has not got the lock and gives up: as long as client 1's process lives, its timer keeps the lock alive, though the work it protects has stopped.", sim.Dur(s.now-s.p.TTL/2), c.name)})
}

// setupPause is scenarios 2 and 3: client 1 freezes halfway through its
// work; client 2 arrives halfway through the TTL.
func setupPause(s *runner) {
	s.presetFence()
	s.startJob(s.addClient(1), 0, job{work: s.p.Work, pause: s.p.Pause})
	s.startJob(s.addClient(2), s.p.TTL/2, job{work: s.p.Work})
}

// presetFence sets the fencing counter so that the first grants get tokens
// 33 and 34, as in the usual drawing of this race. A failover replica has
// it too, copied long ago.
func (s *runner) presetFence() {
	for _, n := range s.nodes {
		if err := n.m.Set(lockKey+":fence", "32"); err != nil {
			s.fail(fmt.Errorf("preset fencing counter: %w", err))
		}
	}
}

// startRedlockClients sets up the network split of both Redlock scenarios:
// client 1 reaches nodes 1-3 and client 2 nodes 3-5, so node 3 decides.
func (s *runner) startRedlockClients(second time.Duration) {
	s.startJob(s.addClient(1, 4, 5), 0, job{work: s.p.Work})
	s.startJob(s.addClient(2, 1, 2), second, job{work: s.p.Work})
}

// List returns every scenario's description, in teaching order.
func List() []Info {
	all := scenarios()
	out := make([]Info, len(all))
	for i, sc := range all {
		out[i] = sc.Info
		out[i].Setup = sc.describe(sc.Defaults)
		for c := range max(sc.clients, 2) {
			out[i].Targets = append(out[i].Targets, fmt.Sprintf("client%d", c+1))
		}
		if sc.nodes == 1 || sc.primary {
			out[i].Targets = append(out[i].Targets, "redis")
		}
		if sc.nodes > 1 {
			for n := range sc.nodes {
				out[i].Targets = append(out[i].Targets, fmt.Sprintf("node%d", n+1))
			}
		}
	}
	return out
}

// scenarioByID returns the scenario called id.
func scenarioByID(id string) (scenario, bool) {
	for _, sc := range scenarios() {
		if sc.ID == id {
			return sc, true
		}
	}
	return scenario{}, false
}

// Run plays scenario id with p and returns its timeline. The same id and
// p, seed included, always give the same timeline. Errors wrap
// ErrUnknownScenario or ErrBadParams.
func Run(id string, p Params) (Timeline, error) {
	sc, ok := scenarioByID(id)
	if !ok {
		return Timeline{}, fmt.Errorf("run %q: %w", id, ErrUnknownScenario)
	}
	if err := p.Validate(); err != nil {
		return Timeline{}, fmt.Errorf("run %q: %w", id, err)
	}
	s := newSim(p, sc.nodes)
	defer s.close()
	sc.setup(s)
	if err := s.addFaults(id, p.Faults); err != nil {
		return Timeline{}, fmt.Errorf("run %q: %w", id, err)
	}
	if err := s.run(); err != nil {
		return Timeline{}, fmt.Errorf("run %q: %w", id, err)
	}
	s.judgeEnd()
	found := s.outcomes()
	return Timeline{Scenario: id, Params: p, Events: s.events, Outcomes: found, Verdict: found[0].Outcome, Summary: found[0].Text}, nil
}
