package limit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// AdminLimits bound how fast anyone can guess the admin token (or the
// metrics token): failed sign-ins are metered per client address and over
// all addresses, and a guess is refused while either has none left, except
// that an address with no failures of its own is not held back by the
// others': guessers spread over many addresses must not lock the
// instructor out.
// Sign-ins that succeed cost nothing. Unlike the write limits, these fail
// closed: if the meter cannot be read (Redis down), no guess is checked
// at all.
type AdminLimits struct {
	// PerAddress and Overall hold the failures still allowed; nil is no
	// limit.
	PerAddress, Overall Meter
	// AddressPerMinute and OverallPerMinute are how many failures each
	// forgives a minute, for the wait.
	AddressPerMinute, OverallPerMinute int
	// AddressBurst is PerAddress's burst: an address that holds all of it
	// has failed lately not at all, and skips the overall limit. Zero
	// makes every address subject to it.
	AddressBurst int
	// Name keeps these limits' counts apart from others made by the same
	// maker: "" is the admin token's; NewMetricsLimits names the metrics
	// token's, so that a misconfigured scraper does not lock the
	// instructor out.
	Name string
}

// Wrong admin tokens forgiven a minute per address and overall, and the
// bursts allowed before that. They hold whatever the other limits say:
// they guard the instructor, not the server's load.
const (
	AdminFailuresPerAddress, AdminFailuresAddressBurst = 5, 10
	AdminFailuresOverall, AdminFailuresOverallBurst    = 50, 50
)

// NewAdminLimits returns the admin guess limits, made by m.
func NewAdminLimits(m Maker) AdminLimits {
	return AdminLimits{
		PerAddress:       m.MeterPer(AdminFailuresPerAddress, time.Minute, AdminFailuresAddressBurst),
		Overall:          m.MeterPer(AdminFailuresOverall, time.Minute, AdminFailuresOverallBurst),
		AddressPerMinute: AdminFailuresPerAddress, OverallPerMinute: AdminFailuresOverall,
		AddressBurst: AdminFailuresAddressBurst,
	}
}

// NewMetricsLimits returns the same limits for wrong metrics tokens, counted
// apart from the admin token's.
func NewMetricsLimits(m Maker) AdminLimits {
	l := NewAdminLimits(m)
	l.Name = "metrics"
	return l
}

// ErrGuessesUnknown is the error of Check when the meters cannot be read:
// the guess must not be checked.
var ErrGuessesUnknown = errors.New("limit: wrong admin tokens cannot be counted now")

// Check decides whether a token from addr may be checked now: refused by
// "admin_signin_per_address" or "admin_signin" when too many wrong ones
// came lately, from this address or from everyone. It fails closed: an
// error (wrapping ErrGuessesUnknown) means no guess may be checked.
func (a AdminLimits) Check(ctx context.Context, addr string) (Decision, error) {
	for i, m := range a.meters(addr) {
		if m.meter == nil {
			continue
		}
		have, err := m.meter.Available(ctx, m.key)
		if err != nil {
			return Decision{}, fmt.Errorf("%w: %w", ErrGuessesUnknown, err)
		}
		if i == 0 && a.AddressBurst > 0 && have >= a.AddressBurst {
			break // no failures of its own: the overall count is others'
		}
		if have < 1 {
			secs := math.Ceil(60 / float64(max(m.perMinute, 1)))
			return Decision{Limit: m.limit, Wait: time.Duration(secs) * time.Second}, nil
		}
	}
	return Decision{}, nil
}

// Failed counts a wrong token from addr, even if ctx has ended.
func (a AdminLimits) Failed(ctx context.Context, addr string) error {
	var errs error
	for _, m := range a.meters(addr) {
		errs = errors.Join(errs, take(ctx, m.meter, m.key, 1))
	}
	return errs
}

type adminMeter struct {
	meter     Meter
	key       string
	perMinute int
	limit     string
}

func (a AdminLimits) meters(addr string) [2]adminMeter {
	if a.Name != "" {
		return [2]adminMeter{
			{a.PerAddress, a.Name + ":addr:" + addr, a.AddressPerMinute, a.Name + "_token_per_address"},
			{a.Overall, a.Name + ":all", a.OverallPerMinute, a.Name + "_token"},
		}
	}
	return [2]adminMeter{
		{a.PerAddress, "admin:addr:" + addr, a.AddressPerMinute, "admin_signin_per_address"},
		{a.Overall, "admin:all", a.OverallPerMinute, "admin_signin"},
	}
}
