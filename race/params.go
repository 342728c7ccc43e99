package race

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrBadParams is wrapped by every error about invalid parameters.
var ErrBadParams = errors.New("bad scenario parameters")

// ReleaseMode is how a client gives its lock back.
type ReleaseMode string

// The release modes.
const (
	// ReleaseScript is the compare-and-delete script: delete only our token.
	ReleaseScript ReleaseMode = "script"
	// ReleaseDel is a plain DEL, whoever holds the key.
	ReleaseDel ReleaseMode = "del"
)

// RenewMode is how the watchdog scenario's client renews its lock.
type RenewMode string

// The renew modes.
const (
	// RenewTimer renews on a timer for as long as the process lives.
	RenewTimer RenewMode = "timer"
	// RenewProgress renews only after the work made progress, and at
	// most a fixed number of times.
	RenewProgress RenewMode = "progress"
)

// The names of the parameters, as in JSON and in Info.Applies.
const (
	ParamTTL          = "ttl_ms"
	ParamPause        = "pause_ms"
	ParamWork         = "work_ms"
	ParamFencing      = "fencing"
	ParamRelease      = "release"
	ParamClockJump    = "clock_jump_ms"
	ParamRestartDelay = "restart_delay_ms"
	// ParamReplicationLag is how long the replica takes to copy a write
	// from the primary (failover scenario).
	ParamReplicationLag = "replication_lag_ms"
	// ParamWait makes the failover scenario's clients run WAIT 1 after
	// taking the lock.
	ParamWait = "wait"
	// ParamRenew is the watchdog scenario's renewal mode.
	ParamRenew = "renew"
	ParamSeed  = "seed"
	// ParamFault is the repeatable query parameter of added faults, in
	// the text form of Fault; in JSON, "faults" is a list of them.
	ParamFault = "fault"
)

// The limits that Validate enforces.
const (
	MinTTL      = 100 * time.Millisecond
	MaxTTL      = 120 * time.Second
	MaxDuration = 10 * time.Minute // for pause, work, clock jump, restart delay, replication lag and faults
)

// Params are the knobs of a scenario. A scenario ignores the ones that do
// not apply to it (see Info.Applies). In JSON, durations are whole
// milliseconds under the names of the Param constants.
type Params struct {
	TTL          time.Duration // time to live of the lock
	Pause        time.Duration // how long client 1 stops (a GC pause, say)
	Work         time.Duration // how long a client works while holding the lock
	Fencing      bool          // whether the storage rejects older fencing tokens
	Release      ReleaseMode   // how clients release the lock
	ClockJump    time.Duration // how far a Redlock node's clock jumps ahead
	RestartDelay time.Duration // how long a crashed Redlock node stays down
	// ReplicationLag is how long the failover scenario's replica takes
	// to copy each write of the primary.
	ReplicationLag time.Duration
	// Wait makes the failover scenario's clients wait, with WAIT 1, for
	// the replica to have their lock before they use it.
	Wait   bool
	Renew  RenewMode // how the watchdog scenario renews; "" in the others
	Seed   uint64    // seeds tokens and retry delays
	Faults []Fault   // added by the learner, applied in order at their times
}

// Validate checks every field against its limits and returns an error
// wrapping ErrBadParams that names the first bad one.
func (p Params) Validate() error {
	durations := []struct {
		name     string
		d        time.Duration
		min, max time.Duration
	}{
		{ParamTTL, p.TTL, MinTTL, MaxTTL},
		{ParamPause, p.Pause, 0, MaxDuration},
		{ParamWork, p.Work, 0, MaxDuration},
		{ParamClockJump, p.ClockJump, 0, MaxDuration},
		{ParamRestartDelay, p.RestartDelay, 0, MaxDuration},
		{ParamReplicationLag, p.ReplicationLag, 0, MaxDuration},
	}
	for _, f := range durations {
		if f.d < f.min || f.d > f.max {
			return fmt.Errorf("%s = %d: must be between %d and %d: %w",
				f.name, f.d.Milliseconds(), f.min.Milliseconds(), f.max.Milliseconds(), ErrBadParams)
		}
		if f.d%time.Millisecond != 0 {
			return fmt.Errorf("%s = %v: must be a whole number of milliseconds: %w", f.name, f.d, ErrBadParams)
		}
	}
	if p.Release != ReleaseScript && p.Release != ReleaseDel {
		return fmt.Errorf("%s = %q: must be %q or %q: %w", ParamRelease, p.Release, ReleaseScript, ReleaseDel, ErrBadParams)
	}
	if p.Renew != "" && p.Renew != RenewTimer && p.Renew != RenewProgress {
		return fmt.Errorf("%s = %q: must be %q or %q: %w", ParamRenew, p.Renew, RenewTimer, RenewProgress, ErrBadParams)
	}
	if len(p.Faults) > MaxFaults {
		return fmt.Errorf("%d faults: at most %d: %w", len(p.Faults), MaxFaults, ErrBadParams)
	}
	for _, f := range p.Faults {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("fault %q: %w", f, err)
		}
	}
	return nil
}

// paramsJSON is the wire form of Params.
type paramsJSON struct {
	TTL          int64       `json:"ttl_ms"`
	Pause        int64       `json:"pause_ms"`
	Work         int64       `json:"work_ms"`
	Fencing      bool        `json:"fencing"`
	Release      ReleaseMode `json:"release"`
	ClockJump    int64       `json:"clock_jump_ms"`
	RestartDelay int64       `json:"restart_delay_ms"`
	Lag          int64       `json:"replication_lag_ms"`
	Wait         bool        `json:"wait"`
	Renew        RenewMode   `json:"renew,omitempty"`
	Seed         uint64      `json:"seed"`
	Faults       []Fault     `json:"faults,omitempty"`
}

// MarshalJSON writes durations as whole milliseconds.
func (p Params) MarshalJSON() ([]byte, error) {
	return json.Marshal(paramsJSON{
		TTL: p.TTL.Milliseconds(), Pause: p.Pause.Milliseconds(), Work: p.Work.Milliseconds(),
		Fencing: p.Fencing, Release: p.Release,
		ClockJump: p.ClockJump.Milliseconds(), RestartDelay: p.RestartDelay.Milliseconds(),
		Lag: p.ReplicationLag.Milliseconds(), Wait: p.Wait, Renew: p.Renew,
		Seed: p.Seed, Faults: p.Faults,
	})
}

// UnmarshalJSON reads durations as milliseconds. It does not validate the
// durations; a fault is checked as it is read.
func (p *Params) UnmarshalJSON(b []byte) error {
	var j paramsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("decode params: %w", err)
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	*p = Params{
		TTL: ms(j.TTL), Pause: ms(j.Pause), Work: ms(j.Work),
		Fencing: j.Fencing, Release: j.Release,
		ClockJump: ms(j.ClockJump), RestartDelay: ms(j.RestartDelay),
		ReplicationLag: ms(j.Lag), Wait: j.Wait, Renew: j.Renew,
		Seed: j.Seed, Faults: j.Faults,
	}
	return nil
}
