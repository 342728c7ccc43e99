package limit

import (
	"context"
	"time"
)

// DefaultNewcomersPerDay is how many learners new to the progress store
// one client address may have saved a day unless configured otherwise:
// a class of a few hundred behind one address arrives at once, a script
// that mints a cookie per request does not fill the disk.
const DefaultNewcomersPerDay = 500

// Newcomers limits the learners new to the progress store whose progress
// is saved, per client address: perDay a day, all of which may come at
// once, refilled evenly over the day. A learner whose progress is saved
// already is not a newcomer and is never counted. A refused newcomer can
// still use the course; only their progress is not kept. It fails open,
// as the write limits do.
type Newcomers struct {
	meter  Meter
	perDay int
}

// NewNewcomers returns the limit of perDay newcomers per address a day,
// kept by m; none when perDay is 0 or r.Writes is 0 (no limits at all).
func NewNewcomers(m Maker, r Rates, perDay int) Newcomers {
	if perDay <= 0 || r.Writes == 0 {
		return Newcomers{}
	}
	return Newcomers{meter: m.MeterPer(perDay, 24*time.Hour, perDay), perDay: perDay}
}

// PerDay is the limit's allowance a day; 0 is no limit.
func (n Newcomers) PerDay() int { return n.perDay }

// Admit takes one newcomer from addr's allowance, or refuses with
// "newcomers_per_address" until the next one is refilled.
func (n Newcomers) Admit(ctx context.Context, addr string) (Decision, error) {
	if n.meter == nil {
		return Decision{}, nil
	}
	key := newcomerKey(addr)
	have, err := n.meter.Available(ctx, key)
	if err != nil {
		return Decision{}, err
	}
	if have < 1 {
		return Decision{Limit: "newcomers_per_address", Wait: 24 * time.Hour / time.Duration(n.perDay)}, nil
	}
	return Decision{}, take(ctx, n.meter, key, 1)
}

func newcomerKey(addr string) string { return "n:addr:" + addr }
