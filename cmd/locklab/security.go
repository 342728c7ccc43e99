package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// securityConfig is how the server guards itself against its clients.
type securityConfig struct {
	// writeRate is state-changing requests per second per learner; 0 turns
	// every rate limit off (for benchmarks).
	writeRate int
	// addressRate is state-changing requests per second per client address.
	addressRate int
	// scriptRate is playground lines that run Lua per second per learner;
	// ten times as many are allowed per address.
	scriptRate int
	// raceRate is race simulations per second per client address (in
	// limit.RaceUnit of CPU time each, so a costly one counts as several).
	raceRate int
	// scriptTimeout is how long one playground script may run.
	scriptTimeout time.Duration
	// trustedProxies may name the client in X-Forwarded-For.
	trustedProxies proxyList
	// behindTLS: the site is served over HTTPS by a proxy in front.
	behindTLS bool
}

// addSecurityFlags defines the proxy and TLS flags; the rate limits are
// declared with the other limits (limits.go).
func addSecurityFlags(fset *flag.FlagSet, sc *securityConfig) {
	fset.Var(&sc.trustedProxies, "trusted-proxies", "comma-separated addresses or CIDR ranges of load balancers whose X-Forwarded-For header names the client; none by default, so the header is ignored (env LOCKLAB_TRUSTED_PROXIES)")
	fset.BoolVar(&sc.behindTLS, "behind-tls", false, "the site is served over HTTPS (by a proxy in front): cookies become Secure and the session cookie gets the __Host- prefix (env LOCKLAB_BEHIND_TLS)")
}

// rates are the limits the flags set.
func (sc securityConfig) rates() limit.Rates {
	return limit.Rates{
		Writes: sc.writeRate, WritesPerAddress: sc.addressRate, Scripts: sc.scriptRate,
		Races: sc.raceRate, ScriptTimeout: sc.scriptTimeout,
	}
}

// limits builds the rate limiters: shared through Redis when the store is
// Redis, else in this process. -rate-limit 0 turns them all off.
func limits(st *store.Store, sc securityConfig) limit.Limits {
	return limit.New(st, sc.rates())
}

// proxyList is a flag of comma-separated addresses and CIDR ranges.
type proxyList []netip.Prefix

func (p *proxyList) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(*p))
	for i, pr := range *p {
		s[i] = pr.String()
	}
	return strings.Join(s, ",")
}

func (p *proxyList) Set(v string) error {
	var list proxyList
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if pr, err := netip.ParsePrefix(f); err == nil {
			list = append(list, pr.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return fmt.Errorf("%q is neither an address nor a CIDR range", f)
		}
		list = append(list, netip.PrefixFrom(a, a.BitLen()))
	}
	*p = list
	return nil
}

// minAdminToken is the shortest LOCKLAB_ADMIN_TOKEN accepted: 128 bits in
// base64.
const minAdminToken = 22

// adminLimits meters wrong admin tokens, shared by every replica when the
// store is Redis. They hold whatever -rate-limit says: they guard the
// instructor, not the server's load.
func adminLimits(st *store.Store) limit.AdminLimits {
	return limit.NewAdminLimits(st)
}
