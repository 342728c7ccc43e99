package store

import "time"

// DefaultProgressTTL is how long a learner's progress is kept after they
// were last seen: as long as the session cookie lives.
const DefaultProgressTTL = 400 * 24 * time.Hour

// options are the settings every back end shares.
type options struct {
	progressTTL time.Duration
	now         func() time.Time
}

// Option changes how a store is opened.
type Option func(*options)

// ProgressTTL drops a learner's progress after d without a read or a
// write (DefaultProgressTTL if d is not positive).
func ProgressTTL(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.progressTTL = d
		}
	}
}

// Clock sets the clock the bolt store dates records by, for tests. Redis
// keys expire by Redis's own clock.
func Clock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

func newOptions(opts []Option) options {
	o := options{progressTTL: DefaultProgressTTL, now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	return o
}
