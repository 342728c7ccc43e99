package playground

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// sortCmd is Redis 7.0's SORT and SORT_RO key [BY pattern] [LIMIT offset
// count] [GET pattern ...] [ASC|DESC] [ALPHA], which miniredis lacks:
// numbers or, with ALPHA, bytes; by the values of other keys (BY
// weight_*, or a hash's field, weight_*->f); GET # for the element and
// GET pattern for another key's value; a BY pattern without * for no
// sorting at all. STORE is refused (storeRefusal): what it would write
// is bounded by no single argument, where every other write's growth is.
func (s *Sandbox) sortCmd(c *conn, name string, argv []string) resp.Value {
	var (
		desc, alpha, dontSort bool
		by                    string
		hasBy                 bool
		gets                  []string
		offset, count         int64 = 0, -1
	)
	for j := 2; j < len(argv); j++ {
		left := len(argv) - j - 1
		switch opt := strings.ToUpper(argv[j]); {
		case opt == "ASC":
			desc = false
		case opt == "DESC":
			desc = true
		case opt == "ALPHA":
			alpha = true
		case opt == "LIMIT" && left >= 2:
			o, ok1 := parseInt(argv[j+1])
			n, ok2 := parseInt(argv[j+2])
			if !ok1 || !ok2 {
				return resp.Err(errNotInteger)
			}
			offset, count = o, n
			j += 2
		case opt == "STORE" && left >= 1 && name == "SORT":
			return resp.Err("ERR the playground does not support SORT ... STORE: " + storeRefusal)
		case opt == "BY" && left >= 1:
			by, hasBy = argv[j+1], true
			// A pattern without * names one key for every element:
			// there is nothing to sort by, and the order is kept.
			dontSort = !strings.Contains(by, "*")
			j++
		case opt == "GET" && left >= 1:
			gets = append(gets, argv[j+1])
			j++
		default:
			return resp.Err("ERR syntax error")
		}
	}
	key := argv[1]
	typ := s.m.Type(key)
	switch typ {
	case "", "list", "set", "zset":
	default:
		return resp.Err(errWrongType)
	}
	// A set's order without sorting is its hash table's; in a script,
	// Redis sorts it as ALPHA instead, so that the script's writes are
	// the same on its replicas.
	if dontSort && typ == "set" && c == s.inner {
		dontSort, alpha, hasBy = false, true, false
	}
	var elems []string
	switch typ {
	case "list":
		elems, _ = s.m.List(key)
	case "set":
		elems, _ = s.m.Members(key)
		if isIntset(elems) {
			slices.SortFunc(elems, func(a, b string) int {
				x, _ := strconv.ParseInt(a, 10, 64)
				y, _ := strconv.ParseInt(b, 10, 64)
				return cmp.Compare(x, y)
			})
		}
	case "zset":
		elems, _ = s.m.ZMembers(key)
		if dontSort && desc {
			slices.Reverse(elems)
		}
	}
	if !dontSort {
		if errv := s.sortElems(elems, by, hasBy, alpha, desc); errv != nil {
			return *errv
		}
	}
	start, end := sortLimit(offset, count, len(elems))
	out := make([]resp.Value, 0, max(end-start+1, 0)*max(len(gets), 1))
	for _, e := range elems[start : end+1] {
		if len(gets) == 0 {
			out = append(out, resp.Str(e))
			continue
		}
		for _, g := range gets {
			if v, ok := s.byPattern(g, e); ok {
				out = append(out, resp.Str(v))
			} else {
				out = append(out, resp.Null())
			}
		}
	}
	return resp.Arr(out...)
}

// storeRefusal says why SORT ... STORE is refused.
const storeRefusal = "what it writes is not bounded by its arguments, and the playground checks every write against your sandbox's limits before it runs; use SORT, then RPUSH what you want to keep"

// sortElems sorts elems as SORT does: by their own value, or by the
// value byPattern finds for each, as numbers (ties broken by the
// elements' bytes) or, with alpha, as bytes; a missing value sorts as 0,
// or before every other with alpha. It returns Redis's error if a value
// is not a number.
func (s *Sandbox) sortElems(elems []string, by string, hasBy, alpha, desc bool) *resp.Value {
	type item struct {
		elem  string
		score float64
		alpha string
		found bool
	}
	items := make([]item, len(elems))
	for i, e := range elems {
		it := item{elem: e, found: true}
		val := e
		if hasBy {
			val, it.found = s.byPattern(by, e)
		}
		switch {
		case !it.found:
		case alpha:
			it.alpha = val
		default:
			// strtod as Redis calls it: leading space is skipped, and
			// nothing may follow the number.
			f, err := strconv.ParseFloat(strings.TrimLeft(val, " \t\n\v\f\r"), 64)
			if err != nil || math.IsNaN(f) {
				return ptr(resp.Err("ERR One or more scores can't be converted into double"))
			}
			it.score = f
		}
		items[i] = it
	}
	slices.SortStableFunc(items, func(a, b item) int {
		var c int
		switch {
		case !alpha:
			c = cmp.Compare(a.score, b.score)
			if c == 0 {
				c = strings.Compare(a.elem, b.elem)
			}
		case hasBy && (!a.found || !b.found):
			switch {
			case a.found == b.found:
			case !a.found:
				c = -1
			default:
				c = 1
			}
		case hasBy:
			c = bytes.Compare([]byte(a.alpha), []byte(b.alpha))
		default:
			c = strings.Compare(a.elem, b.elem)
		}
		if desc {
			return -c
		}
		return c
	})
	for i := range items {
		elems[i] = items[i].elem
	}
	return nil
}

// byPattern is Redis's lookupKeyByPattern: # is the element itself; else
// the first * of the pattern is replaced by the element, and the key so
// named is read as a string, or, if "->field" follows the *, as a hash's
// field. A pattern without * names nothing.
func (s *Sandbox) byPattern(pattern, elem string) (string, bool) {
	if pattern == "#" {
		return elem, true
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return "", false
	}
	keyPat, field := pattern, ""
	if f := strings.Index(pattern[star+1:], "->"); f >= 0 && star+1+f+2 < len(pattern) {
		keyPat, field = pattern[:star+1+f], pattern[star+1+f+2:]
	}
	key := keyPat[:star] + elem + keyPat[star+1:]
	switch t := s.m.Type(key); {
	case field != "" && t == "hash":
		if !slices.Contains(mustKeys(s.m.HKeys(key)), field) {
			return "", false
		}
		return s.m.HGet(key, field), true
	case field == "" && t == "string":
		v, _ := s.m.Get(key)
		return v, true
	}
	return "", false
}

// sortLimit is SORT's LIMIT as Redis applies it: the first and last
// positions to answer, end < start for none.
func sortLimit(offset, count int64, n int) (start, end int) {
	s := max(offset, 0)
	e := int64(n - 1)
	if count >= 0 {
		e = s + count - 1
	}
	if s >= int64(n) {
		s, e = int64(n-1), int64(n-2)
	}
	if e >= int64(n) {
		e = int64(n - 1)
	}
	if n == 0 {
		return 0, -1
	}
	return int(s), int(e)
}

func ptr(v resp.Value) *resp.Value { return &v }

func mustKeys(keys []string, _ error) []string { return keys }
