package playground

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// The server commands a lock learner meets, answered as Redis 7.0 answers
// them on a server of its own with no replicas, no subscribers and the
// default configuration: WAIT, PUBLISH, SELECT 0, CLIENT SETNAME and
// GETNAME, and OBJECT ENCODING, REFCOUNT and FREQ.

// serverCommand answers the commands above, and whether argv is one.
func (s *Sandbox) serverCommand(c *conn, name string, argv []string) (resp.Value, bool) {
	switch name {
	case "WAIT":
		return wait(argv), true
	case "PUBLISH":
		// Nobody can subscribe to a sandbox: no client receives it.
		return resp.Int(0), true
	case "SELECT":
		return selectDB(argv[1]), true
	case "CLIENT":
		return c.client(argv), true
	case "COMMAND":
		switch strings.ToUpper(argv[1]) {
		case "COUNT":
			return resp.Int(commandCount), true
		case "GETKEYS":
			v, _ := commandGetKeys(argv)
			return v, true
		case "HELP":
			lines := make([]resp.Value, len(commandHelpLines))
			for i, l := range commandHelpLines {
				lines[i] = resp.StatusValue(l)
			}
			return resp.Arr(lines...), true
		}
	case "OBJECT":
		switch strings.ToUpper(argv[1]) {
		case "ENCODING":
			return s.objectEncoding(argv[2]), true
		case "REFCOUNT":
			return s.objectRefcount(argv[2]), true
		case "FREQ":
			if !s.m.Exists(argv[2]) {
				return resp.Null(), true
			}
			return resp.Err(noLFU), true
		case "HELP":
			return objectHelp(), true
		}
	}
	return resp.Value{}, false
}

// wait is WAIT on a server with no replicas: no replica can acknowledge,
// so it answers 0, at once (Redis waits for the timeout first when asked
// for replicas; a sandbox has none to wait for).
func wait(argv []string) resp.Value {
	if _, ok := parseInt(argv[1]); !ok {
		return resp.Err(errNotInteger)
	}
	t, ok := parseInt(argv[2])
	if !ok {
		return resp.Err("ERR timeout is not an integer or out of range")
	}
	if t < 0 {
		return resp.Err("ERR timeout is negative")
	}
	return resp.Int(0)
}

// selectDB is SELECT: database 0 is the sandbox; the other fifteen a Redis
// server has are refused by check (selectRefusal).
func selectDB(arg string) resp.Value {
	n, ok := parseInt(arg)
	switch {
	case !ok:
		return resp.Err(errNotInteger)
	case n != int64(int32(n)):
		return resp.Err("ERR value is out of range, value must between -2147483648 and 2147483647")
	case n < 0 || n >= 16:
		return resp.Err("ERR DB index is out of range")
	}
	return resp.OK()
}

// selectRefused reports whether SELECT arg names one of the databases
// 1 to 15, which Redis has and a sandbox does not.
func selectRefused(arg string) bool {
	n, ok := parseInt(arg)
	return ok && n >= 1 && n < 16
}

// client is CLIENT SETNAME and GETNAME: the name belongs to the
// connection, client A's or B's.
func (c *conn) client(argv []string) resp.Value {
	if strings.EqualFold(argv[1], "GETNAME") {
		if c.name == "" {
			return resp.Null()
		}
		return resp.Str(c.name)
	}
	for i := 0; i < len(argv[2]); i++ {
		if b := argv[2][i]; b < '!' || b > '~' {
			return resp.Err("ERR Client names cannot contain spaces, newlines or special characters.")
		}
	}
	c.name = argv[2]
	return resp.OK()
}

// noLFU is OBJECT FREQ's error under the default maxmemory-policy.
const noLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."

// Redis 7.0's defaults for the compact encodings.
const (
	listpackEntries = 128 // hash-max-listpack-entries, zset-max-listpack-entries
	listpackValue   = 64  // hash-max-listpack-value, zset-max-listpack-value
	intsetEntries   = 512 // set-max-intset-entries
	embstrLimit     = 44  // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
	sharedIntegers  = 10000
)

// objectEncoding is OBJECT ENCODING, read from the value as Redis 7.0
// would have encoded it: a string as an integer, embedded or raw (raw
// after APPEND, SETRANGE or SETBIT changed it in place), a list as a
// quicklist, and hashes, sets and sorted sets in their compact encodings
// while they are small. A hash, set or sorted set that grew out of its
// compact encoding and shrank again keeps Redis's larger one in Redis; the
// sandbox reads the value as it is now.
func (s *Sandbox) objectEncoding(k string) resp.Value {
	switch s.m.Type(k) {
	case "string":
		v, _ := s.m.Get(k)
		if _, raw := s.rawStrings[k]; raw {
			return resp.Str("raw")
		}
		return resp.Str(stringEncoding(v))
	case "list":
		return resp.Str("quicklist")
	case "hash":
		fields, _ := s.m.HKeys(k)
		return resp.Str(compactOr(fields, func(f string) string { return s.m.HGet(k, f) }, "hashtable"))
	case "set":
		members, _ := s.m.Members(k)
		if isIntset(members) {
			return resp.Str("intset")
		}
		return resp.Str("hashtable")
	case "zset":
		members, _ := s.m.ZMembers(k)
		return resp.Str(compactOr(members, nil, "skiplist"))
	}
	return resp.Null()
}

// compactOr is "listpack" for a hash (with its values) or sorted set of
// these items while Redis 7.0 keeps it as one: at most 128 items, none of
// them, nor their values, longer than 64 bytes; else larger.
func compactOr(items []string, value func(string) string, larger string) string {
	if len(items) > listpackEntries {
		return larger
	}
	for _, it := range items {
		if len(it) > listpackValue || value != nil && len(value(it)) > listpackValue {
			return larger
		}
	}
	return "listpack"
}

// stringEncoding is how Redis's tryObjectEncoding keeps a string value.
func stringEncoding(v string) string {
	if _, ok := parseInt(v); ok {
		return "int"
	}
	if len(v) <= embstrLimit {
		return "embstr"
	}
	return "raw"
}

// objectRefcount is OBJECT REFCOUNT: Redis shares the integers 0 to 9999
// between all keys (and counts them as never freed); every other value
// has one reference.
func (s *Sandbox) objectRefcount(k string) resp.Value {
	switch s.m.Type(k) {
	case "":
		return resp.Null()
	case "string":
		v, _ := s.m.Get(k)
		if _, raw := s.rawStrings[k]; !raw {
			if n, ok := parseInt(v); ok && n >= 0 && n < sharedIntegers {
				return resp.Int(2147483647)
			}
		}
	}
	return resp.Int(1)
}

// isIntset reports whether Redis keeps a set of these members as an
// intset: at most 512 of them, each an integer as string2ll reads it.
func isIntset(members []string) bool {
	if len(members) > intsetEntries {
		return false
	}
	for _, m := range members {
		if _, ok := parseInt(m); !ok {
			return false
		}
	}
	return true
}

// numericOrder puts the members of a set reply in an intset's order,
// ascending numbers, when Redis would keep them as one; miniredis sorts
// them as strings. A larger set's order is its hash table's in Redis,
// which no client can rely on; the sandbox keeps them sorted.
func numericOrder(members []resp.Value) {
	strs := make([]string, len(members))
	for i, m := range members {
		if m.Kind != resp.Bulk {
			return
		}
		strs[i] = m.Str
	}
	if !isIntset(strs) {
		return
	}
	slices.SortFunc(members, func(a, b resp.Value) int {
		x, _ := strconv.ParseInt(a.Str, 10, 64)
		y, _ := strconv.ParseInt(b.Str, 10, 64)
		return cmp.Compare(x, y)
	})
}

// setOrder gives the set replies of SMEMBERS, SUNION, SINTER, SDIFF and
// SSCAN an intset's order (numericOrder).
func setOrder(name string, v resp.Value) {
	switch name {
	case "SMEMBERS", "SUNION", "SINTER", "SDIFF":
		if v.Kind == resp.Array {
			numericOrder(v.Elems)
		}
	case "SSCAN":
		if v.Kind == resp.Array && len(v.Elems) == 2 && v.Elems[1].Kind == resp.Array {
			numericOrder(v.Elems[1].Elems)
		}
	}
}

// objectHelp is OBJECT HELP's text, as Redis 7.0 prints it.
func objectHelp() resp.Value {
	lines := []string{
		"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
		"HELP",
		"    Prints this help.",
	}
	out := make([]resp.Value, len(lines))
	for i, l := range lines {
		out[i] = resp.StatusValue(l)
	}
	return resp.Arr(out...)
}

// rawMakers are the commands that change a string in place, which Redis
// then keeps raw, whatever it holds.
var rawMakers = map[string]bool{"APPEND": true, "SETRANGE": true, "SETBIT": true}

// noteEncoding keeps rawStrings up to date after a write: a string
// changed in place becomes raw (APPEND only when the key was there
// before: a new key's value is encoded as SET encodes it), and any other
// write to a key gives it a freshly encoded value.
func (s *Sandbox) noteEncoding(name string, cmd command, argv []string, existed bool) {
	if rawMakers[name] {
		k := argv[1]
		if (name != "APPEND" || existed) && s.m.Type(k) == "string" {
			s.markRaw(k)
		} else {
			delete(s.rawStrings, k)
		}
		return
	}
	if len(s.rawStrings) == 0 {
		return
	}
	if name == "FLUSHALL" || name == "FLUSHDB" {
		clear(s.rawStrings)
		return
	}
	for _, k := range cmd.keys(argv) {
		delete(s.rawStrings, k)
	}
}

// markRaw notes that string key k is raw. Keys that expired since they
// were noted are dropped first once the notes are as many as a sandbox may
// have keys, so that the notes never outnumber the keys.
func (s *Sandbox) markRaw(k string) {
	if s.rawStrings == nil {
		s.rawStrings = map[string]struct{}{}
	}
	if len(s.rawStrings) >= s.limits.MaxKeys {
		for old := range s.rawStrings {
			if !s.m.Exists(old) {
				delete(s.rawStrings, old)
			}
		}
	}
	// A copy: the argument may share its bytes with the whole line.
	s.rawStrings[strings.Clone(k)] = struct{}{}
}
