package luaredis

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// Redis's cjson.encode and cmsgpack.pack write a table's keys, and a
// script's {map=...} and {set=...} replies list them, in the order C
// Lua 5.1's lua_next visits them: the array part, then the hash part's
// nodes in turn, where a key sits at its hash or, after a collision, in
// the last free node. gopher-lua keeps keys in the order they were first
// set, which no Redis gives, and ranges over Go maps in an order that
// changes from call to call. lua51Order rebuilds C Lua's layout (ltable.c
// of Lua 5.1.5, which Redis 7.0 embeds) by setting the table's keys, in
// the order gopher-lua keeps them, into an empty C Lua table, rehashes
// and all, and reads its nodes in turn.
//
// That is C Lua's order exactly for a table built one key at a time
// (t.k = v, cjson.decode, a reply Redis converted) and for a constructor
// ({a=1, b=2}) whose keys do not collide. A constructor sizes its table
// once, so where keys collide it may place them otherwise than a table
// that grew; the order is then still the same on every call, only not
// always Redis's. Keys that are tables, functions or userdata hash by
// address in C Lua, which no one can reproduce: they take the order in
// which they were set.

// lua51Node is a node of the simulated hash part.
type lua51Node struct {
	key  lua.LValue
	used bool
	next int // the next node of its chain, or -1
}

// lua51Table is the layout of a C Lua 5.1 table: which array slots hold a
// value, and the hash part's nodes.
type lua51Table struct {
	array    []bool
	nodes    []lua51Node // empty for Lua's dummy node
	lastfree int
	// others numbers the keys C Lua hashes by address, in the order
	// they were set, to stand in for their address.
	others map[lua.LValue]uint32
}

// lua51Order returns t's keys in C Lua 5.1's traversal order. Keys whose
// value was set to nil are set in the simulated table too, as C Lua keeps
// them in their nodes (until a rehash), where they move others aside.
func (lay *layout) lua51Order(t *lua.LTable) []lua.LValue {
	parts := lay.table(t)
	var keys []lua.LValue
	for i, v := range parts.array {
		if v != lua.LNil {
			keys = append(keys, lua.LNumber(i+1))
		}
	}
	keys = append(keys, parts.keys...)
	if len(keys) < 2 {
		return keys
	}
	var s lua51Table
	for _, k := range keys {
		s.set(k)
	}
	out := make([]lua.LValue, 0, len(keys))
	for i, ok := range s.array {
		if ok && t.RawGetInt(i+1) != lua.LNil {
			out = append(out, lua.LNumber(i+1))
		}
	}
	for _, n := range s.nodes {
		if n.used && t.RawGet(n.key) != lua.LNil {
			out = append(out, n.key)
		}
	}
	return out
}

// set is luaH_set for a key the table does not hold yet.
func (s *lua51Table) set(k lua.LValue) {
	if i, ok := arrayIndex(k); ok && i <= len(s.array) {
		s.array[i-1] = true
		return
	}
	s.newKey(k)
}

// newKey is ltable.c's newkey.
func (s *lua51Table) newKey(k lua.LValue) {
	if len(s.nodes) == 0 {
		s.rehash(k)
		s.set(k)
		return
	}
	mp := s.mainPosition(k)
	if s.nodes[mp].used {
		free := s.freePos()
		if free < 0 {
			s.rehash(k)
			s.set(k)
			return
		}
		other := s.mainPosition(s.nodes[mp].key)
		if other != mp {
			// The node in k's place is not in its own: move it to
			// the free node and take its place.
			for s.nodes[other].next != mp {
				other = s.nodes[other].next
			}
			s.nodes[other].next = free
			s.nodes[free] = s.nodes[mp]
			s.nodes[mp] = lua51Node{next: -1}
		} else {
			// It is in its own: k goes to the free node, chained
			// after it.
			s.nodes[free].next = s.nodes[mp].next
			s.nodes[mp].next = free
			mp = free
		}
	}
	s.nodes[mp].key, s.nodes[mp].used = k, true
}

// freePos is getfreepos: the last free node below lastfree.
func (s *lua51Table) freePos() int {
	for s.lastfree > 0 {
		s.lastfree--
		if !s.nodes[s.lastfree].used {
			return s.lastfree
		}
	}
	return -1
}

// lua51MaxBits is MAXBITS: array parts of up to 2^26 slots.
const lua51MaxBits = 26

// rehash is ltable.c's rehash: it sizes the array part for the integer
// keys (the largest power of two more than half full) and the hash part
// for the rest, counting the key k about to be set, and resizes.
func (s *lua51Table) rehash(k lua.LValue) {
	var nums [lua51MaxBits + 1]int
	nasize := 0
	for i, ok := range s.array {
		if ok {
			nums[ceilLog2(i+1)]++
			nasize++
		}
	}
	total := nasize
	for _, n := range s.nodes {
		if n.used {
			nasize += countInt(n.key, &nums)
			total++
		}
	}
	nasize += countInt(k, &nums)
	total++
	na := computeSizes(&nums, &nasize)
	s.resize(nasize, total-na)
}

func countInt(k lua.LValue, nums *[lua51MaxBits + 1]int) int {
	if i, ok := arrayIndex(k); ok && i <= 1<<lua51MaxBits {
		nums[ceilLog2(i)]++
		return 1
	}
	return 0
}

// computeSizes is ltable.c's computesizes.
func computeSizes(nums *[lua51MaxBits + 1]int, narray *int) int {
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; i <= lua51MaxBits && twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n, na = twotoi, a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

// resize is ltable.c's resize: a new array part and hash part, into which
// the array's vanishing slots and then the old nodes, last first, are set
// again.
func (s *lua51Table) resize(nasize, nhsize int) {
	oldArray, oldNodes := s.array, s.nodes
	if nasize > len(oldArray) {
		s.array = append(append([]bool(nil), oldArray...), make([]bool, nasize-len(oldArray))...)
	}
	s.nodes = nil
	if nhsize > 0 {
		s.nodes = make([]lua51Node, 1<<ceilLog2(nhsize))
		for i := range s.nodes {
			s.nodes[i].next = -1
		}
	}
	s.lastfree = len(s.nodes)
	if nasize < len(oldArray) {
		s.array = oldArray[:nasize]
		for i := nasize; i < len(oldArray); i++ {
			if oldArray[i] {
				s.set(lua.LNumber(i + 1))
			}
		}
	}
	for i := len(oldNodes) - 1; i >= 0; i-- {
		if oldNodes[i].used {
			s.set(oldNodes[i].key)
		}
	}
}

// mainPosition is the node where k belongs: a string's hash, a number's
// bits, a boolean's value, modulo the size.
func (s *lua51Table) mainPosition(k lua.LValue) int {
	size := uint32(len(s.nodes))
	switch k := k.(type) {
	case lua.LString:
		return int(lua51StringHash(string(k)) & (size - 1))
	case lua.LNumber:
		f := float64(k)
		if f == 0 {
			return 0
		}
		b := math.Float64bits(f)
		return int((uint32(b) + uint32(b>>32)) % ((size - 1) | 1))
	case lua.LBool:
		if k {
			return int(1 & (size - 1))
		}
		return 0
	}
	if s.others == nil {
		s.others = map[lua.LValue]uint32{}
	}
	n, ok := s.others[k]
	if !ok {
		n = uint32(len(s.others))
		s.others[k] = n
	}
	return int(n % ((size - 1) | 1))
}

// lua51StringHash is luaS_newlstr's hash, seeded with the length. Stock
// Lua 5.1 hashes only every (len/32+1)th byte of a long string; Redis's
// Lua hashes them all, so that long keys cannot be made to collide.
func lua51StringHash(str string) uint32 {
	h := uint32(len(str))
	for i := len(str); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(str[i-1])
	}
	return h
}

// arrayIndex is the key as an array index if it is a positive integer.
func arrayIndex(k lua.LValue) (int, bool) {
	n, ok := k.(lua.LNumber)
	if !ok || float64(n) < 1 || float64(n) > 1<<lua51MaxBits || math.Floor(float64(n)) != float64(n) {
		return 0, false
	}
	return int(n), true
}

// ceilLog2 is ⌈log2 x⌉ for x ≥ 1.
func ceilLog2(x int) int {
	return bits.Len(uint(x - 1))
}
