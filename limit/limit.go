// Package limit keeps one client from starving the others: rate limits on
// writes, scripts and workshop joins, the script time budget, the race
// meter, the guess limits on admin tokens, carry codes and join codes,
// the running-scripts gate, the lab's fair queue, the caps on event
// streams, and the circuit breaker that keeps a shared limiter that is
// down from slowing requests.
//
// It decides; it does not speak HTTP. A check returns a Decision, which
// the web layer turns into 429 with Retry-After. Limiters and meters are
// small interfaces: this package holds the in-process ones (Memory), and
// the store implements them on Redis so that every replica shares them.
//
// Most limits fail open: when a limiter cannot be asked (Redis down), the
// request goes through, since the course staying usable matters more than
// the limit, and the error is returned beside the Decision for the caller
// to log. Admin token guesses fail closed (AdminLimits.Check).
package limit

import (
	"context"
	"time"
)

// Limiter lets at most a set number of events per second through for each
// key (a learner, an address), with short bursts.
type Limiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// Meter measures something that is only known afterwards, such as how long
// a script ran, in units per key: each key has up to a burst of units,
// refilled at a set rate. Callers look before (Available) and take what
// was used after (Take).
type Meter interface {
	// Available returns the units key has now.
	Available(ctx context.Context, key string) (int, error)
	// Take takes n units from key, or all it has if that is fewer.
	Take(ctx context.Context, key string, n int) error
}

// Maker makes limiters and meters: Memory in this process, or the store's,
// shared by every replica through Redis.
type Maker interface {
	// Limiter lets perSecond events a second through per key, with bursts
	// of burst.
	Limiter(perSecond, burst int) Limiter
	// Meter refills perSecond units a second per key, up to burst.
	Meter(perSecond, burst int) Meter
	// MeterPer refills n units every per, for things counted per minute
	// or hour.
	MeterPer(n int, per time.Duration, burst int) Meter
}

// Decision is a limit's answer to one request: allowed (the zero
// Decision), or refused by the limit named Limit until Wait has passed.
type Decision struct {
	// Limit names the limit that refused, such as "writes_per_address";
	// it is also the label of the refusal in the metrics.
	Limit string
	// Wait is how long the client should wait before trying again.
	Wait time.Duration
}

// Allowed reports whether the request may go.
func (d Decision) Allowed() bool { return d.Limit == "" }

// limiterWait is the Wait of a Limiter's refusal: limiters allow bursts
// of twice their rate a second, so a second always frees some.
const limiterWait = time.Second

// allow asks l about key, failing open: a nil l is no limit, and an l that
// fails lets the request through, with the error for the caller to log.
func allow(ctx context.Context, l Limiter, key string) (bool, error) {
	if l == nil {
		return true, nil
	}
	ok, err := l.Allow(ctx, key)
	if err != nil {
		return true, err
	}
	return ok, nil
}

// wait returns how long key must wait until m holds need units, one
// coming back every per; zero if it holds them now, if m is nil, or if m
// fails (then with the error).
func wait(ctx context.Context, m Meter, key string, need int, per time.Duration) (time.Duration, error) {
	if m == nil {
		return 0, nil
	}
	have, err := m.Available(ctx, key)
	if err != nil {
		return 0, err
	}
	if have >= need {
		return 0, nil
	}
	return time.Duration(need-have) * per, nil
}

// unitEvery is the time a unit takes to come back to a meter that
// refills refill units a second.
func unitEvery(refill int) time.Duration { return time.Second / time.Duration(max(refill, 1)) }

// take takes n units from key's meter, if there is one. The charge must
// land even if the client went away, so it does not end with ctx.
func take(ctx context.Context, m Meter, key string, n int) error {
	if m == nil {
		return nil
	}
	return m.Take(context.WithoutCancel(ctx), key, n)
}
