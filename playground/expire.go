package playground

import (
	"math"
	"strings"
	"time"

	"github.com/locklab/locklab/resp"
)

// Redis keeps a key's expiry as a Unix time in milliseconds, so a TTL can
// reach hundreds of millions of years; miniredis keeps a time.Duration,
// which stops at about 292 years and wraps round past it (the key would
// vanish at once). The sandbox therefore keeps every expiry as Redis does,
// in milliseconds, and for the far ones (beyond farTTL) gives miniredis a
// stand-in TTL of farTTL and remembers the real expiry in Sandbox.far.
//
// The stand-in tells whether the entry still holds: miniredis counts it
// down with the clock, so while the key keeps it, its TTL is exactly
// farTTL less the time since the entry was made. Any command that drops or
// replaces the TTL (SET, PERSIST, DEL and the rest) breaks that equality,
// and the entry is forgotten when next read, without the sandbox having to
// know every such command. RENAME and COPY carry the stand-in to another
// key, and the entry with it (see carryFar).

// farTTL is the longest TTL given to miniredis as it is, and the stand-in
// for longer ones. The stand-in is renewed when half of it has run down,
// long before a clock advance (a day at most) could run it out.
const farTTL = 200 * 365 * 24 * time.Hour

// farExpiry is the real expiry of a key whose miniredis TTL is the
// stand-in.
type farExpiry struct {
	whenMS int64     // Unix milliseconds on the sandbox clock
	at     time.Time // the sandbox clock when miniredis was given farTTL
}

// nowMS is the sandbox clock as Redis reads its own (mstime), in whole
// milliseconds.
func (s *Sandbox) nowMS() int64 { return s.ticked.UnixMilli() }

// expireAt returns the expiry of key k in Unix milliseconds, -1 when it has
// none and -2 when there is no such key. The caller has ticked the clock.
func (s *Sandbox) expireAt(k string) int64 {
	if !s.m.Exists(k) {
		return -2
	}
	ttl := s.m.TTL(k)
	if ttl <= 0 {
		delete(s.far, k)
		return -1
	}
	if f, ok := s.far[k]; ok {
		if ttl == farTTL-s.ticked.Sub(f.at) {
			return f.whenMS
		}
		delete(s.far, k)
	}
	return s.nowMS() + (s.subMS() + ttl + 500*time.Microsecond).Milliseconds()
}

// subMS is how far the sandbox clock is past its last whole millisecond.
// Expiries are reckoned from whole milliseconds and this, not from Unix
// nanoseconds, which overflow in 2262.
func (s *Sandbox) subMS() time.Duration {
	return time.Duration(s.ticked.Nanosecond() % 1_000_000)
}

// ttlUntil is the miniredis TTL that runs out at whenMS, which is at most
// farTTL ahead.
func (s *Sandbox) ttlUntil(whenMS int64) time.Duration {
	return time.Duration(whenMS-s.nowMS())*time.Millisecond - s.subMS()
}

// setExpireAt gives key k, which exists, the expiry whenMS in Unix
// milliseconds, deleting it when that time has come already, as Redis's
// checkAlreadyExpired does.
func (s *Sandbox) setExpireAt(k string, whenMS int64) {
	delete(s.far, k)
	if whenMS <= s.nowMS() {
		s.dispatch(s.inner, "DEL", k)
		return
	}
	if whenMS-s.nowMS() <= farTTL.Milliseconds() {
		s.m.SetTTL(k, s.ttlUntil(whenMS))
		return
	}
	if len(s.far) >= 2*s.limits.MaxKeys+16 {
		s.pruneFar()
	}
	if len(s.far) == 0 {
		s.farBase = s.ticked
	}
	s.m.SetTTL(k, farTTL)
	s.far[k] = farExpiry{whenMS: whenMS, at: s.ticked}
}

// pruneFar forgets the entries that no longer hold, so that the map stays
// within the keys there are.
func (s *Sandbox) pruneFar() {
	for k := range s.far {
		s.expireAt(k)
	}
}

// renewFar gives the stand-ins their full farTTL again before the clock
// moves to now, and hands the expiries that have come within farTTL back
// to miniredis. It is called with miniredis still at s.ticked.
func (s *Sandbox) renewFar(now time.Time) {
	step := now.Sub(s.ticked)
	for k := range s.far {
		when := s.expireAt(k)
		if when < 0 {
			continue
		}
		if left := when - now.UnixMilli(); left <= farTTL.Milliseconds() {
			delete(s.far, k)
			s.m.SetTTL(k, s.ttlUntil(when))
			continue
		}
		s.m.SetTTL(k, farTTL+step)
		s.far[k] = farExpiry{whenMS: when, at: now}
	}
	s.farBase = now
}

// carryFar notes, before RENAME, RENAMENX or COPY runs, the far expiry of
// the source key, and returns what to do once the command has run: give
// the destination the same entry if the command moved the key.
func (s *Sandbox) carryFar(argv []string) func(resp.Value) {
	if len(s.far) == 0 || len(argv) < 3 {
		return nil
	}
	f, ok := s.far[argv[1]]
	if !ok || s.expireAt(argv[1]) < 0 {
		return nil
	}
	return func(v resp.Value) {
		if v.Kind == resp.Status || v.Kind == resp.Integer && v.Int == 1 {
			s.far[argv[2]] = f
		}
	}
}

// ttlReply answers TTL, PTTL, EXPIRETIME and PEXPIRETIME as Redis does
// from its millisecond expiry.
func (s *Sandbox) ttlReply(name, k string) resp.Value {
	s.tick()
	when := s.expireAt(k)
	if when < 0 {
		return resp.Int(when)
	}
	switch name {
	case "PEXPIRETIME":
		return resp.Int(when)
	case "EXPIRETIME":
		return resp.Int(when/1000 + (when%1000+500)/1000) // (when+500)/1000 without overflow
	case "PTTL":
		return resp.Int(max(when-s.nowMS(), 0))
	}
	ttl := max(when-s.nowMS(), 0)
	return resp.Int(ttl/1000 + (ttl%1000+500)/1000)
}

// stringOpts are the options of SET and GETEX, as Redis's
// parseExtendedStringArgumentsOrReply reads them.
type stringOpts struct {
	nx, xx, get, keepTTL, persist bool
	unit                          string // "EX", "PX", "EXAT" or "PXAT"; "" for none
	expire                        string
}

// parseStringOpts reads SET's options (getex false) or GETEX's. It follows
// Redis 7.0: a repeated option is fine, KEEPTTL or PERSIST excludes every
// expiry and one expiry every other, NX excludes XX, and an expiry without
// its value is a syntax error.
func parseStringOpts(args []string, getex bool) (stringOpts, bool) {
	var o stringOpts
	set := !getex
	for i := 0; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		hasNext := i+1 < len(args)
		switch {
		case opt == "NX" && set && !o.xx:
			o.nx = true
		case opt == "XX" && set && !o.nx:
			o.xx = true
		case opt == "GET" && set:
			o.get = true
		case opt == "KEEPTTL" && set && o.unit == "":
			o.keepTTL = true
		case opt == "PERSIST" && getex && o.unit == "":
			o.persist = true
		case (opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") &&
			!o.keepTTL && !o.persist && (o.unit == "" || o.unit == opt) && hasNext:
			o.unit, o.expire = opt, args[i+1]
			i++
		default:
			return o, false
		}
	}
	return o, true
}

// expireMillis turns an expiry argument into a Unix time in milliseconds as
// Redis 7.0's getExpireMillisecondsOrReply does: not an integer, not
// positive, or overflowing, it is an error reply naming the command.
func (s *Sandbox) expireMillis(cmd, unit, arg string) (int64, *resp.Value) {
	n, ok := parseInt(arg)
	if !ok {
		v := resp.Err(errNotInteger)
		return 0, &v
	}
	bad := resp.Err("ERR invalid expire time in '" + strings.ToLower(cmd) + "' command")
	seconds := unit == "EX" || unit == "EXAT"
	if n <= 0 || seconds && n > math.MaxInt64/1000 {
		return 0, &bad
	}
	if seconds {
		n *= 1000
	}
	if unit == "EX" || unit == "PX" {
		if n > math.MaxInt64-s.nowMS() {
			return 0, &bad
		}
		n += s.nowMS()
	}
	return n, nil
}

// errNotInteger is Redis's reply to an argument that string2ll refuses.
const errNotInteger = "ERR value is not an integer or out of range"

// set runs SET: options and expiry read as Redis 7.0 reads them, the
// expiry checked before anything else, NX/XX and GET decided here, and
// only the plain write left to miniredis.
func (s *Sandbox) set(c *conn, argv []string) resp.Value {
	o, ok := parseStringOpts(argv[3:], false)
	if !ok {
		return resp.Err("ERR syntax error")
	}
	s.tick()
	var when int64
	if o.unit != "" {
		var errv *resp.Value
		if when, errv = s.expireMillis("set", o.unit, o.expire); errv != nil {
			return *errv
		}
	}
	return s.setString(c, argv[1], argv[2], o, when)
}

// setString writes value to k with the options o (NX, XX, GET, KEEPTTL
// and an expiry when, in Unix milliseconds, when o.unit is set).
func (s *Sandbox) setString(c *conn, k, value string, o stringOpts, when int64) resp.Value {
	var old resp.Value
	if o.get {
		if old = s.dispatch(c, "GET", k); old.Kind == resp.Error {
			return old
		}
	}
	s.tick()
	found := s.m.Exists(k)
	if o.nx && found || o.xx && !found {
		if o.get {
			return old
		}
		return resp.Null()
	}
	wargv := []string{"SET", k, value}
	if o.keepTTL {
		wargv = append(wargv, "KEEPTTL")
	}
	v := s.dispatch(c, wargv...)
	if v.Kind == resp.Error {
		return v
	}
	if o.unit != "" {
		s.setExpireAt(k, when)
	}
	if o.get {
		return old
	}
	return v
}

// setex runs SETEX and PSETEX, SET with a relative expiry.
func (s *Sandbox) setex(c *conn, name string, argv []string) resp.Value {
	unit := "EX"
	if name == "PSETEX" {
		unit = "PX"
	}
	s.tick()
	when, errv := s.expireMillis(name, unit, argv[2])
	if errv != nil {
		return *errv
	}
	return s.setString(c, argv[1], argv[3], stringOpts{unit: unit}, when)
}

// getex runs GETEX as Redis 7.0 does: options first, then the key (nil
// when missing) and its type, then the expiry's value.
func (s *Sandbox) getex(c *conn, argv []string) resp.Value {
	o, ok := parseStringOpts(argv[2:], true)
	if !ok {
		return resp.Err("ERR syntax error")
	}
	k := argv[1]
	v := s.dispatch(c, "GET", k)
	if v.Kind != resp.Bulk {
		return v
	}
	switch {
	case o.unit != "":
		when, errv := s.expireMillis("getex", o.unit, o.expire)
		if errv != nil {
			return *errv
		}
		s.setExpireAt(k, when)
	case o.persist:
		s.dispatch(s.inner, "PERSIST", k)
	}
	return v
}

// expire runs EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT as Redis 7.0's
// expireGenericCommand does, with its order of checks and its overflow
// errors.
func (s *Sandbox) expire(name string, argv []string) resp.Value {
	var nx, xx, gt, lt bool
	for _, a := range argv[3:] {
		switch strings.ToUpper(a) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			return resp.Err("ERR Unsupported option " + a)
		}
	}
	switch {
	case nx && (xx || gt || lt):
		return resp.Err("ERR NX and XX, GT or LT options at the same time are not compatible")
	case gt && lt:
		return resp.Err("ERR GT and LT options at the same time are not compatible")
	}
	when, ok := parseInt(argv[2])
	if !ok {
		return resp.Err(errNotInteger)
	}
	bad := resp.Err("ERR invalid expire time in '" + strings.ToLower(name) + "' command")
	if name == "EXPIRE" || name == "EXPIREAT" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return bad
		}
		when *= 1000
	}
	s.tick()
	var base int64
	if name == "EXPIRE" || name == "PEXPIRE" {
		base = s.nowMS()
	}
	if when > math.MaxInt64-base {
		return bad
	}
	when += base
	k := argv[1]
	cur := s.expireAt(k)
	switch {
	case cur == -2,
		nx && cur != -1,
		xx && cur == -1,
		gt && (cur == -1 || when <= cur),
		lt && cur != -1 && when >= cur:
		return resp.Int(0)
	}
	s.setExpireAt(k, when)
	return resp.Int(1)
}
