package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// keepConfig is how long the server keeps what learners leave behind, and
// where its links point.
type keepConfig struct {
	// carryTTL is how long a "continue on another device" code works.
	carryTTL time.Duration
	// progressTTL drops a learner's progress after this long unseen.
	progressTTL time.Duration
	// publicURL is the site's address for links; empty takes the request's.
	publicURL string
}

func addKeepFlags(fset *flag.FlagSet, kc *keepConfig) {
	fset.DurationVar(&kc.carryTTL, "carry-ttl", carry.DefaultTTL, "how long a code that carries progress to another device works (it works once) (env LOCKLAB_CARRY_TTL)")
	fset.DurationVar(&kc.progressTTL, "progress-ttl", store.DefaultProgressTTL, "drop a learner's progress after this long without a visit (env LOCKLAB_PROGRESS_TTL)")
	fset.StringVar(&kc.publicURL, "public-url", "", "the site's address for the links it shows, such as https://locks.example.org; without it the request's Host is used (env LOCKLAB_PUBLIC_URL)")
}

func checkKeepFlags(kc *keepConfig) error {
	if kc.carryTTL < time.Minute || kc.carryTTL > 24*time.Hour {
		return fmt.Errorf("-carry-ttl must be between 1m and 24h")
	}
	if kc.progressTTL < 24*time.Hour {
		return fmt.Errorf("-progress-ttl must be at least 24h")
	}
	if kc.publicURL != "" {
		u, err := url.Parse(kc.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("-public-url %q: want a scheme and host only, such as https://locks.example.org", kc.publicURL)
		}
		kc.publicURL = u.Scheme + "://" + u.Host
	}
	return nil
}

// carryLimits meters transfer codes (limit.NewCarryLimits), shared
// through Redis when the store is Redis; -rate-limit 0 turns them off too.
// docs/workshops.md says why they make guessing hopeless.
func carryLimits(st *store.Store, sc securityConfig) limit.CarryLimits {
	return limit.NewCarryLimits(st, sc.rates())
}
