package store

import "time"

// DefaultProgressTTL is how long a learner's progress is kept after they
// were last seen: as long as the session cookie lives.
const DefaultProgressTTL = 400 * 24 * time.Hour

// DefaultMaxSize is how many bytes the file store's records may use
// unless configured otherwise (MaxSize).
const DefaultMaxSize = 1 << 30

// options are the settings every back end shares.
type options struct {
	progressTTL time.Duration
	now         func() time.Time
	// maxSize caps the bolt file's records (size.go); Redis has its own
	// maxmemory.
	maxSize int64
	// writeFault fails the bolt file's writes, for tests (boltDB).
	writeFault func() error
	// observeRedis is told of each Redis round trip (ObserveRedis).
	observeRedis RedisObserver
	// redisMode is the kind of Redis the URL names (RedisMode).
	redisMode string
	// warn is told of what goes wrong without failing a call (Warn).
	warn func(error)
	// callTimeout, for tests whose writes wait longer for a replica,
	// bounds each Redis call and each read of its replies instead of
	// defaultOpTimeout and readTimeout; 0 keeps those.
	callTimeout time.Duration
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

// MaxSize caps the bytes the file store's records may use, at n
// (DefaultMaxSize if n is not positive): beyond it, the longest idle
// anonymous learners are dropped to make room (size.go). Redis keeps to
// its own maxmemory instead, so there MaxSize does nothing.
func MaxSize(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSize = n
		}
	}
}

// Clock sets the clock the bolt store dates records by, and the Redis
// store times its round trips by (ObserveRedis), for tests. Redis keys
// expire by Redis's own clock.
func Clock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

func newOptions(opts []Option) options {
	o := options{progressTTL: DefaultProgressTTL, now: time.Now, maxSize: DefaultMaxSize}
	for _, f := range opts {
		f(&o)
	}
	return o
}
