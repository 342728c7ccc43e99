package playground

import "github.com/locklab/locklab/resp"

// miniredis's LPUSH puts values at the head one at a time, copying the
// whole list for each: k values on a list of n cost about k·n copies, a
// quarter of a second for 990 values on a list of 20,000, and seconds
// for a repeated line. Past lpushDirect copies, lpush builds the new list
// once and puts it in the list's place, with its TTL, which costs n+k.

// lpushDirect is the most copies a LPUSH is left to miniredis for.
const lpushDirect = 1 << 16

// lpush answers LPUSH and LPUSHX when miniredis would copy the list more
// than lpushDirect times; ok is false otherwise, and for a key of another
// type or an LPUSHX of no list, which miniredis answers.
func (s *Sandbox) lpush(name string, argv []string) (v resp.Value, ok bool) {
	key, vals := argv[1], argv[2:]
	switch s.m.Type(key) {
	case "list":
	case "":
		if name == "LPUSHX" {
			return resp.Value{}, false
		}
	default:
		return resp.Value{}, false
	}
	old, _ := s.m.List(key)
	if len(vals)*(len(old)+len(vals)) <= lpushDirect {
		return resp.Value{}, false
	}
	list := make([]string, 0, len(old)+len(vals))
	for i := len(vals) - 1; i >= 0; i-- {
		list = append(list, vals[i])
	}
	list = append(list, old...)
	ttl := s.m.TTL(key)
	s.m.Del(key)
	if _, err := s.m.Push(key, list...); err != nil {
		return resp.Err("ERR " + err.Error()), true
	}
	if ttl > 0 {
		s.m.SetTTL(key, ttl)
	}
	return resp.Int(int64(len(list))), true
}
