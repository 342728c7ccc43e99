package playground

import (
	"strings"

	"github.com/locklab/locklab/resp"
)

// guard refuses a command that would take the sandbox over one of its
// limits, before it runs, so that the sandbox stays as it was. It checks
// arguments that make Redis allocate or reply a lot (bit and byte offsets,
// random-member counts), and for write commands the number of keys and the
// bytes of data. The data bound is kept cheaply: growth estimates are upper
// bounds, and the exact size is only measured when the bound reaches the
// limit.
func (s *Sandbox) guard(cmd command, argv []string) *RefusedError {
	s.pendingSize, s.pendingKeys = 0, 0
	name := strings.ToUpper(argv[0])
	l := s.limits
	switch name {
	// Offsets and counts are read as miniredis reads them (strconv.Atoi),
	// which is laxer than Redis, so that nothing slips past the guard.
	case "SETBIT":
		if off, ok := atoi(argv[2]); ok && off/8 >= int64(l.MaxValueBytes) {
			return overLimit("ERR the playground keeps strings under %s, so bit offsets stop at %d", sizeText(l.MaxValueBytes), l.MaxValueBytes*8-1)
		}
	case "SETRANGE":
		if off, ok := atoi(argv[2]); ok && off > int64(l.MaxValueBytes-len(argv[3])) {
			return overLimit("ERR the playground keeps strings under %s", sizeText(l.MaxValueBytes))
		}
	case "APPEND":
		if cur, err := s.m.Get(argv[1]); err == nil && len(cur)+len(argv[2]) > l.MaxValueBytes {
			return overLimit("ERR the playground keeps strings under %s", sizeText(l.MaxValueBytes))
		}
	case "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER", "SPOP":
		if len(argv) > 2 {
			if n, ok := atoi(argv[2]); ok && (n > int64(l.MaxCount) || n < -int64(l.MaxCount)) {
				return overLimit("ERR the playground limits the count of %s to %d", name, l.MaxCount)
			}
		}
	}
	// miniredis slices with a negative cursor and panics.
	switch name {
	case "SCAN", "HSCAN", "SSCAN", "ZSCAN":
		cur := argv[1]
		if name != "SCAN" && len(argv) > 2 {
			cur = argv[2]
		}
		if n, ok := atoi(cur); ok && n < 0 {
			return notAllowed("ERR invalid cursor")
		}
	}
	if ref := s.guardCost(name, argv); ref != nil {
		return ref
	}
	for _, p := range patternArgs(name, argv) {
		p = forwardRange(p)
		if !patternOK(p) {
			return notAllowed("ERR the playground cannot match with the pattern %s: use UTF-8 text and character classes such as [a-z]", Quote(p))
		}
		if n := s.matchWork(name, argv, p); n > maxMatchWork {
			return overLimit("ERR the playground matches patterns of at most a few wildcards against its keys, and this one would take about %d steps; use fewer * ? and [ ]", n)
		}
	}
	if cmd.flags&flagWrite == 0 {
		return nil
	}
	growth := s.growth(name, argv)
	// The commands queued in transactions hold memory as data does, and
	// scripts count against the allowance too.
	queued := s.queuedBytes()
	if allow := min(l.MaxDataBytes, s.allow-s.engine.ScriptBytes()) - queued; growth > 0 && s.sizeBound+growth > allow {
		s.measure()
		switch {
		case s.sizeBound+growth+queued > l.MaxDataBytes:
			return overLimit("ERR the playground keeps at most %s of data in a sandbox; delete some keys (DEL, FLUSHDB)", sizeText(l.MaxDataBytes))
		case s.sizeBound+growth > allow:
			return overLimit("ERR the playground is full right now and cannot take more data in your sandbox; try again in a few minutes, or make room in it (DEL, FLUSHDB)")
		}
	}
	keys := cmd.keys(argv)
	if ref := s.guardKeySize(name, argv, keys, growth); ref != nil {
		return ref
	}
	if name == "RENAME" || name == "RENAMENX" || shrinking[name] {
		keys = nil // a rename adds no key, nor does DEL or EXPIRE
	}
	if s.keysBound+len(keys) > l.MaxKeys {
		all := s.m.Keys()
		s.keysBound = len(all)
		if s.keysBound+s.newKeys(keys) > l.MaxKeys {
			return overLimit("ERR the playground keeps at most %d keys in a sandbox; delete some (DEL, FLUSHDB)", l.MaxKeys)
		}
	}
	s.pendingSize, s.pendingKeys = growth, len(keys)
	return nil
}

// account adds what the command that just ran may have grown the sandbox
// by to the bounds.
func (s *Sandbox) account(cmd command, argv []string) {
	switch strings.ToUpper(argv[0]) {
	case "FLUSHDB", "FLUSHALL":
		s.sizeBound, s.keysBound, s.sizeMeasured = 0, 0, 0
		return
	}
	added := s.pendingKeys
	s.sizeBound += s.pendingSize
	s.keysBound += s.pendingKeys
	s.pendingSize, s.pendingKeys = 0, 0
	// Overwrites leave the key bound above the keys there are too. Past a
	// few, it is set to their count, which costs little while the clock
	// stands still (runFrozen): the worker runs a sandbox's quick commands
	// inline only while it has few keys (KeysAtMost), and a learner who
	// sets one key again and again has one.
	if added > 0 && s.keysBound > exactKeysAbove {
		s.keysBound = s.countKeys()
	}
	// Overwrites and deletes leave the bound above the data. Measuring
	// again once it has grown by as much as was measured, or 256 KiB,
	// keeps it within twice the data plus that, for a cost that is linear
	// in the bytes written since: the Manager counts sandboxes by it.
	if s.sizeBound-s.sizeMeasured > max(s.sizeMeasured, 256<<10) {
		s.measure()
	}
}

// exactKeysAbove is the key bound past which account sets it to the
// count of keys.
const exactKeysAbove = 32

// countKeys returns the number of keys in the sandbox (DBSIZE), or the
// bound if miniredis does not answer with one.
func (s *Sandbox) countKeys() int {
	if v := s.dispatch(s.inner, "DBSIZE"); v.Kind == resp.Integer {
		return int(v.Int)
	}
	return s.keysBound
}

// measure sets the data bound to the data's exact size.
func (s *Sandbox) measure() {
	s.sizeBound = s.dataSize()
	s.sizeMeasured = s.sizeBound
}

// guardKeySize refuses a write that could take one key past
// Limits.MaxKeyBytes, so that a small edit to a key never has to copy a
// large value: the changes a worker reports, the Mirror and the replicas'
// copies all carry whole keys. growth bounds what the write adds to any
// one key. Sizes are only measured when the whole sandbox could be past
// the limit.
func (s *Sandbox) guardKeySize(name string, argv, keys []string, growth int) *RefusedError {
	max := s.limits.MaxKeyBytes
	if growth == 0 || s.sizeBound+growth <= max {
		return nil
	}
	switch name {
	case "RENAME", "RENAMENX":
		return nil // moves a key as it is
	case "COPY":
		keys = argv[2:3] // growth counts the source already
	case "SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		keys = keys[:min(1, len(keys))]
	}
	for _, k := range keys {
		if growth > max || s.keySize(k)+growth > max {
			return overLimit("ERR the playground keeps each key under %s, all its elements together, and %s could grow past that; use several smaller keys", sizeText(max), Quote(k))
		}
	}
	return nil
}

// growth is an upper bound of the bytes a write command can add: its
// arguments with some overhead for each, and for the commands that copy
// keys or write at an offset, those too.
func (s *Sandbox) growth(name string, argv []string) int {
	if shrinking[name] {
		return 0
	}
	n := 64
	for _, a := range argv {
		n += len(a) + 8
	}
	switch name {
	case "SETRANGE":
		if off, ok := atoi(argv[2]); ok && off > 0 {
			n += int(off)
		}
	case "SETBIT":
		if off, ok := atoi(argv[2]); ok && off > 0 {
			n += int(off/8) + 1
		}
	case "COPY":
		n += s.keySize(argv[1])
	case "SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE":
		for _, k := range argv[2:] {
			n += s.keySize(k)
		}
	case "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		keys := movableKeys(argv)
		for _, k := range keys[min(1, len(keys)):] {
			n += s.keySize(k)
		}
	}
	return n
}

// shrinking are the write commands that can only remove data, or leave
// it as it is: a learner at a data limit can always run them to make
// room.
var shrinking = map[string]bool{
	"DEL": true, "UNLINK": true, "FLUSHDB": true, "FLUSHALL": true, "GETDEL": true,
	"HDEL": true, "SREM": true, "ZREM": true, "LREM": true, "LTRIM": true,
	"LPOP": true, "RPOP": true, "SPOP": true, "ZPOPMIN": true, "ZPOPMAX": true,
	"ZREMRANGEBYSCORE": true, "ZREMRANGEBYRANK": true, "ZREMRANGEBYLEX": true,
	"EXPIRE": true, "PEXPIRE": true, "EXPIREAT": true, "PEXPIREAT": true, "PERSIST": true,
}

// newKeys counts the distinct keys that do not exist yet.
func (s *Sandbox) newKeys(keys []string) int {
	seen := map[string]bool{}
	n := 0
	for _, k := range keys {
		if !seen[k] && !s.m.Exists(k) {
			n++
		}
		seen[k] = true
	}
	return n
}

// dataSize measures the bytes of keys and values in the sandbox.
func (s *Sandbox) dataSize() int {
	n := 0
	for _, k := range s.m.Keys() {
		n += s.keySize(k)
	}
	return n
}

// elementOverhead is what each element of a list, set, hash or sorted set
// counts for besides its bytes, as each argument does in growth: without
// it, millions of empty elements would count as nothing.
const elementOverhead = 8

// keySize is the bytes of a key's name and value: string bytes, fields and
// values, elements, each with elementOverhead, and 8 bytes for each
// sorted-set score.
func (s *Sandbox) keySize(k string) int {
	n := len(k)
	switch s.m.Type(k) {
	case "string":
		v, _ := s.m.Get(k)
		n += len(v)
	case "hash":
		fields, _ := s.m.HKeys(k)
		for _, f := range fields {
			n += len(f) + len(s.m.HGet(k, f)) + elementOverhead
		}
	case "list":
		l, _ := s.m.List(k)
		for _, e := range l {
			n += len(e) + elementOverhead
		}
	case "set":
		m, _ := s.m.Members(k)
		for _, e := range m {
			n += len(e) + elementOverhead
		}
	case "zset":
		z, _ := s.m.SortedSet(k)
		for e := range z {
			n += len(e) + 8 + elementOverhead
		}
	}
	return n
}

// guardCost refuses, before it runs, a command whose reply or work would
// be far larger than the line that asks for it: the commands that name
// keys (or fields) many times over. What one key holds is bounded by
// Limits.MaxKeyBytes, so a command that reads one key once is bounded
// already; the reply buffer (see dispatch) catches the rest.
func (s *Sandbox) guardCost(name string, argv []string) *RefusedError {
	l := s.limits
	switch name {
	case "MGET", "HMGET":
		if n := s.replySize(name, argv); n > l.MaxReplyBuildBytes {
			return overLimit("%s", s.replyLimitText())
		}
	}
	if n := s.work(name, argv); n > l.MaxWork {
		return overLimit("ERR the playground runs commands that visit at most %d elements, and this one would visit about %d (each key counts its elements every time it is named); use fewer or smaller keys", l.MaxWork, n)
	}
	return nil
}

// maxMatchWork bounds the work of matching one glob pattern: miniredis
// turns it into a regular expression, whose cost is the bytes it reads
// times the wildcards it juggles, in one call nothing can interrupt. A
// pattern of a few wildcards over a full sandbox stays well under it; one
// of thousands over a 60 KB key name took seconds.
const maxMatchWork = 2_000_000

// matchWork estimates the steps of matching pattern p: the bytes it is
// matched against (every key name for KEYS and SCAN, the key's elements
// for HSCAN, SSCAN and ZSCAN) times one more than its wildcards.
func (s *Sandbox) matchWork(name string, argv []string, p string) int {
	wild := 1 + strings.Count(p, "*") + strings.Count(p, "?") + strings.Count(p, "[")
	if wild == 1 {
		return 0 // a literal: matched as a string
	}
	text := 0
	switch name {
	case "KEYS", "SCAN":
		for _, k := range s.m.Keys() {
			text += len(k)
		}
	default:
		text = s.keySize(argv[1])
	}
	return text * wild
}

// replySize is the bytes of MGET's or HMGET's reply, as Redis sends it,
// from the lengths of the values it would return.
func (s *Sandbox) replySize(name string, argv []string) int {
	n := 16
	switch name {
	case "MGET":
		for _, k := range argv[1:] {
			v, _ := s.m.Get(k)
			n += len(v) + 16
		}
	case "HMGET":
		if s.m.Type(argv[1]) != "hash" {
			return n
		}
		for _, f := range argv[2:] {
			n += len(s.m.HGet(argv[1], f)) + 16
		}
	}
	return n
}

// work estimates the elements a command that reads several keys visits:
// the elements of each key it reads, every time it is named (miniredis
// reads a key again each time, and Redis's work grows the same way). Each
// distinct key is measured once, so that the estimate costs at most what
// the data is.
func (s *Sandbox) work(name string, argv []string) int {
	var keys []string
	switch name {
	case "SINTER", "SUNION", "SDIFF":
		keys = argv[1:]
	case "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE":
		keys = argv[2:]
	case "SINTERCARD", "ZINTER", "ZUNION", "ZDIFF", "ZINTERCARD":
		keys = movableKeys(argv)
	case "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		keys = movableKeys(argv)
		keys = keys[min(1, len(keys)):]
	case "SORT", "SORT_RO":
		// Every element is read, and looked up again by each BY or GET
		// pattern (counted by the words BY and GET, wherever they are).
		n := 1
		for _, a := range argv[2:] {
			if strings.EqualFold(a, "BY") || strings.EqualFold(a, "GET") {
				n++
			}
		}
		return s.elements(argv[1]) * n
	default:
		return 0
	}
	sizes := make(map[string]int, min(len(keys), 16))
	n := 0
	for _, k := range keys {
		c, ok := sizes[k]
		if !ok {
			c = s.elements(k)
			sizes[k] = c
		}
		n += c
	}
	return n
}

// elements counts the elements of a key.
func (s *Sandbox) elements(k string) int {
	switch s.m.Type(k) {
	case "set":
		m, _ := s.m.Members(k)
		return len(m)
	case "zset":
		z, _ := s.m.SortedSet(k)
		return len(z)
	case "list":
		l, _ := s.m.List(k)
		return len(l)
	case "hash":
		f, _ := s.m.HKeys(k)
		return len(f)
	}
	return 0
}
