package limit

import (
	"context"
	"math"
	"time"
)

// JoinRates are the workshop join limits an operator sets; a rate of 0
// is no limit of that kind.
type JoinRates struct {
	// Joins is joins per second per client address, with bursts of
	// twice that: a room of learners behind one address joins within a
	// minute, while one address cannot fill a workshop in seconds.
	Joins int
	// WrongCodes is wrong join codes per minute per client address,
	// with bursts of as many, so that codes cannot be guessed.
	WrongCodes int
}

// Defaults of JoinRates: 300 learners behind one address join in 30 s;
// with 31^6 codes, ten guesses a minute find nothing.
const (
	DefaultJoinRate       = 10
	DefaultWrongJoinCodes = 10
)

// JoinLimits meter workshop joins per client address: every join
// attempt (Join), and the codes an address looks up that name no workshop
// (CheckCode, WrongCode). They fail open, as the write limits do.
type JoinLimits struct {
	Joins Limiter
	// Wrong holds the wrong codes an address may still try, refilled
	// WrongPerMinute a minute.
	Wrong          Meter
	WrongPerMinute int
}

// NewJoinLimits returns the join limits made by m.
func NewJoinLimits(m Maker, r JoinRates) JoinLimits {
	var l JoinLimits
	if r.Joins > 0 {
		l.Joins = m.Limiter(r.Joins, burstFactor*r.Joins)
	}
	if r.WrongCodes > 0 {
		l.Wrong, l.WrongPerMinute = m.MeterPer(r.WrongCodes, time.Minute, r.WrongCodes), r.WrongCodes
	}
	return l
}

// Join checks a join from addr, and counts it: refused by
// "joins_per_address" when the address has joined too often lately.
func (l JoinLimits) Join(ctx context.Context, addr string) (Decision, error) {
	ok, err := allow(ctx, l.Joins, "j:addr:"+addr)
	if !ok {
		return Decision{Limit: "joins_per_address", Wait: limiterWait}, err
	}
	return Decision{}, err
}

// CheckCode decides whether addr may look a join code up now: refused by
// "join_codes" while it has typed too many codes that name no workshop.
func (l JoinLimits) CheckCode(ctx context.Context, addr string) (Decision, error) {
	if l.Wrong == nil {
		return Decision{}, nil
	}
	have, err := l.Wrong.Available(ctx, wrongCodeKey(addr))
	if err != nil || have >= 1 {
		return Decision{}, err
	}
	secs := math.Ceil(60 / float64(max(l.WrongPerMinute, 1)))
	return Decision{Limit: "join_codes", Wait: time.Duration(secs) * time.Second}, nil
}

// WrongCode counts a code from addr that names no workshop, even if ctx
// has ended.
func (l JoinLimits) WrongCode(ctx context.Context, addr string) error {
	return take(ctx, l.Wrong, wrongCodeKey(addr), 1)
}

func wrongCodeKey(addr string) string { return "jc:addr:" + addr }
