package playground

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/resp"
)

// Redis 7.0 keeps a small hash (at most 128 fields, none of its fields or
// values longer than 64 bytes) as a listpack, in the order its fields were
// first set: HGETALL, HKEYS, HVALS and HSCAN list them in that order.
// miniredis sorts them. The sandbox notes the order of each small hash it
// saw created, and puts those replies in it. A hash that outgrows the
// listpack is a hash table in Redis, in no order a client can rely on; the
// sandbox forgets its order and lists it sorted, as it does a hash it did
// not see created (one carried from another replica).

// hashOrder is the field order of one small hash, and the bytes it holds.
type hashOrder struct {
	fields []string
	bytes  int
}

// orderEntryBytes is what a noted hash holds besides its fields' bytes;
// orderFieldBytes what each field holds besides its bytes.
const (
	orderEntryBytes = 64
	orderFieldBytes = 16
)

// hashWriters are the commands that set a hash's fields.
var hashWriters = map[string]bool{"HSET": true, "HMSET": true, "HSETNX": true, "HINCRBY": true, "HINCRBYFLOAT": true}

// keepsValue are the writes that leave a key's value as it is.
var keepsValue = map[string]bool{
	"EXPIRE": true, "PEXPIRE": true, "EXPIREAT": true, "PEXPIREAT": true, "PERSIST": true, "TOUCH": true,
}

// hashBefore reports, before a hash write runs, whether its key is a hash
// already.
func (s *Sandbox) hashBefore(name string, argv []string) bool {
	return hashWriters[name] && s.m.Type(argv[1]) == "hash"
}

// noteHashOrder keeps the field orders up to date after write command
// name ran and answered v; existed is hashBefore's answer.
func (s *Sandbox) noteHashOrder(name string, cmd command, argv []string, v resp.Value, existed bool) {
	if v.Kind == resp.Error || len(s.hashOrders) == 0 && !hashWriters[name] {
		return
	}
	switch {
	case hashWriters[name]:
		s.noteHashFields(name, argv, existed)
	case name == "HDEL":
		if o := s.hashOrders[argv[1]]; o != nil {
			for _, f := range argv[2:] {
				if i := slices.Index(o.fields, f); i >= 0 {
					o.fields = slices.Delete(o.fields, i, i+1)
					o.bytes -= len(f) + orderFieldBytes
					s.orderBytes -= len(f) + orderFieldBytes
				}
			}
		}
	case name == "FLUSHALL" || name == "FLUSHDB":
		clear(s.hashOrders)
		s.orderBytes = 0
	case name == "RENAME" || name == "RENAMENX":
		if v.Kind == resp.Integer && v.Int == 0 {
			return // RENAMENX did nothing
		}
		o := s.hashOrders[argv[1]]
		s.forgetOrder(argv[1])
		s.forgetOrder(argv[2])
		if o != nil {
			s.hashOrders[argv[2]] = o
			s.orderBytes += o.bytes
		}
	case name == "COPY":
		if v.Kind != resp.Integer || v.Int != 1 {
			return
		}
		s.forgetOrder(argv[2])
		if o := s.hashOrders[argv[1]]; o != nil {
			c := &hashOrder{fields: slices.Clone(o.fields), bytes: o.bytes}
			s.hashOrders[argv[2]] = c
			s.orderBytes += c.bytes
		}
	case keepsValue[name]:
	default:
		for _, k := range cmd.keys(argv) {
			s.forgetOrder(k)
		}
	}
}

// noteHashFields notes the fields a hash write set: a new hash's in the
// order given, new fields of a noted hash after its others. A hash that
// existed unnoted stays unnoted, and one that outgrows the listpack is
// forgotten.
func (s *Sandbox) noteHashFields(name string, argv []string, existed bool) {
	k := argv[1]
	o := s.hashOrders[k]
	if existed && o == nil {
		return
	}
	if !existed {
		s.forgetOrder(k)
		o = s.newOrder(k)
	}
	step := 2
	if name == "HINCRBY" || name == "HINCRBYFLOAT" || name == "HSETNX" {
		argv = argv[:4] // one field; its value is an increment or is kept
	}
	for i := 2; i+1 < len(argv); i += step {
		f, val := argv[i], argv[i+1]
		if len(f) > listpackValue || len(val) > listpackValue && name != "HINCRBY" && name != "HINCRBYFLOAT" {
			s.forgetOrder(k)
			return
		}
		if slices.Contains(o.fields, f) {
			continue
		}
		if len(o.fields) == listpackEntries {
			s.forgetOrder(k)
			return
		}
		f = strings.Clone(f) // the argument may share its bytes with the whole line
		o.fields = append(o.fields, f)
		o.bytes += len(f) + orderFieldBytes
		s.orderBytes += len(f) + orderFieldBytes
	}
}

// newOrder starts the order of hash k. Orders of hashes that expired are
// dropped first once there are as many as a sandbox may have keys.
func (s *Sandbox) newOrder(k string) *hashOrder {
	if s.hashOrders == nil {
		s.hashOrders = map[string]*hashOrder{}
	}
	if len(s.hashOrders) >= s.limits.MaxKeys {
		for old := range s.hashOrders {
			if s.m.Type(old) != "hash" {
				s.forgetOrder(old)
			}
		}
	}
	o := &hashOrder{bytes: orderEntryBytes}
	s.hashOrders[strings.Clone(k)] = o
	s.orderBytes += o.bytes
	return o
}

func (s *Sandbox) forgetOrder(k string) {
	if o := s.hashOrders[k]; o != nil {
		s.orderBytes -= o.bytes
		delete(s.hashOrders, k)
	}
}

// orderOf is the noted order of hash k while it still describes the hash
// (a noted hash may have expired and been made again unseen), else nil.
func (s *Sandbox) orderOf(k string) []string {
	o := s.hashOrders[k]
	if o == nil {
		return nil
	}
	have, _ := s.m.HKeys(k)
	if len(have) != len(o.fields) {
		return nil
	}
	for _, f := range o.fields {
		if _, found := slices.BinarySearch(have, f); !found {
			return nil
		}
	}
	return o.fields
}

// hashReplyOrder puts the fields of an HGETALL, HKEYS, HVALS or HSCAN
// reply in the hash's noted order.
func (s *Sandbox) hashReplyOrder(name string, argv []string, v resp.Value) resp.Value {
	if v.Kind != resp.Array {
		return v
	}
	switch name {
	case "HGETALL", "HKEYS", "HVALS", "HSCAN":
	default:
		return v
	}
	order := s.orderOf(argv[1])
	if order == nil {
		return v
	}
	switch name {
	case "HKEYS":
		return bulks(order)
	case "HVALS", "HGETALL":
		out := make([]resp.Value, 0, 2*len(order))
		for _, f := range order {
			if name == "HGETALL" {
				out = append(out, resp.Str(f))
			}
			out = append(out, resp.Str(s.m.HGet(argv[1], f)))
		}
		return resp.Arr(out...)
	}
	// HSCAN: cursor, then field-value pairs (MATCH may have left some out).
	if len(v.Elems) != 2 || v.Elems[1].Kind != resp.Array {
		return v
	}
	pairs := v.Elems[1].Elems
	n := len(pairs) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	pos := func(i int) int { return slices.Index(order, pairs[2*i].Str) }
	slices.SortStableFunc(idx, func(a, b int) int { return pos(a) - pos(b) })
	out := make([]resp.Value, 0, len(pairs))
	for _, i := range idx {
		out = append(out, pairs[2*i], pairs[2*i+1])
	}
	return resp.Arr(v.Elems[0], resp.Arr(out...))
}

func bulks(ss []string) resp.Value {
	out := make([]resp.Value, len(ss))
	for i, s := range ss {
		out[i] = resp.Str(s)
	}
	return resp.Arr(out...)
}
