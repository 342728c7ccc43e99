package playground

import (
	"strings"
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
			return overLimit("ERR the playground keeps strings under %d bytes, so bit offsets stop at %d", l.MaxValueBytes, l.MaxValueBytes*8-1)
		}
	case "SETRANGE":
		if off, ok := atoi(argv[2]); ok && off > int64(l.MaxValueBytes-len(argv[3])) {
			return overLimit("ERR the playground keeps strings under %d bytes", l.MaxValueBytes)
		}
	case "APPEND":
		if cur, err := s.m.Get(argv[1]); err == nil && len(cur)+len(argv[2]) > l.MaxValueBytes {
			return overLimit("ERR the playground keeps strings under %d bytes", l.MaxValueBytes)
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
	for _, p := range patternArgs(name, argv) {
		if !patternOK(p) {
			return notAllowed("ERR the playground cannot match with the pattern %s: use UTF-8 text and character classes such as [a-z]", Quote(p))
		}
	}
	if cmd.flags&flagWrite == 0 {
		return nil
	}
	growth := s.growth(name, argv)
	if s.sizeBound+growth > l.MaxDataBytes {
		s.sizeBound = s.dataSize()
		if s.sizeBound+growth > l.MaxDataBytes {
			return overLimit("ERR the playground keeps at most %d bytes of data in a sandbox; delete some keys (DEL, FLUSHDB)", l.MaxDataBytes)
		}
	}
	keys := cmd.keys(argv)
	if name == "RENAME" || name == "RENAMENX" {
		keys = nil // a rename does not add a key
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
		s.sizeBound, s.keysBound = 0, 0
		return
	}
	s.sizeBound += s.pendingSize
	s.keysBound += s.pendingKeys
	s.pendingSize, s.pendingKeys = 0, 0
}

// growth is an upper bound of the bytes a write command can add: its
// arguments with some overhead for each, and for the commands that copy
// keys or write at an offset, those too.
func (s *Sandbox) growth(name string, argv []string) int {
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
