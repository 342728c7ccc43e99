package playground

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// KeyInfo describes one key for the key inspector.
type KeyInfo struct {
	Key  string `json:"key"`
	Type string `json:"type"` // as TYPE names it: string, hash, list, set, zset
	// Value is a short, readable rendering: "3f9a1c" for a string,
	// {"f": "v"} for a hash, ["a", "b"] for a list, {"a", "b"} for a set,
	// {"a": 1.5} for a sorted set, cut to valueWidth characters.
	Value string `json:"value"`
	// PTTLMS is the time to live left in milliseconds, -1 for none.
	PTTLMS int64 `json:"pttl_ms"`
	// Node is the learner's node the key is on, 1 to MaxNodes; a
	// Manager sets it, a Sandbox leaves it 0.
	Node int `json:"node,omitempty"`
}

// keyWidth is how many characters of a key's name the inspector shows: a
// sandbox may hold names of 64 KiB, which would make the listing
// megabytes.
const keyWidth = 120

// valueWidth is how many characters of a value the inspector shows.
const valueWidth = 60

// previewItems is how many elements a preview can hold at most: render
// stops past 2*valueWidth bytes, and each element takes 4 or more.
const previewItems = valueWidth*2/4 + 2

// Keys lists every key of the sandbox, sorted, as the key inspector shows
// them.
func (s *Sandbox) Keys() ([]KeyInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.tick()
	keys := s.m.Keys()
	out := make([]KeyInfo, 0, len(keys))
	for _, k := range keys {
		ki := KeyInfo{Key: shorten(k, keyWidth), Type: s.m.Type(k), PTTLMS: -1}
		if when := s.expireAt(k); when >= 0 {
			ki.PTTLMS = max(when-s.nowMS(), 0)
		}
		v, ok := s.previews[k]
		if !ok {
			v = shorten(s.render(k, ki.Type), valueWidth)
			if s.previews == nil {
				s.previews = map[string]string{}
			}
			s.previews[k] = v
		}
		ki.Value = v
		out = append(out, ki)
	}
	return out, nil
}

// render writes a value as the inspector shows it, quoting strings as
// redis-cli does so that unprintable bytes stay visible.
func (s *Sandbox) render(k, typ string) string {
	switch typ {
	case "string":
		v, _ := s.m.Get(k)
		return Quote(v)
	case "list":
		l, _ := s.m.List(k)
		return previewList("[", "]", l)
	case "set":
		m, _ := s.m.Members(k) // sorted
		return previewList("{", "}", m)
	case "hash":
		fields, _ := s.m.HKeys(k) // sorted
		return previewHash(fields, func(f string) string { return s.m.HGet(k, f) })
	case "zset":
		z, _ := s.m.SortedSet(k)
		return previewZSet(z)
	}
	return "(" + typ + ")"
}

// renderDump is render for a key of a Snapshot or a Mirror.
func renderDump(d KeyDump) string {
	switch d.Type {
	case "string":
		return Quote(d.String)
	case "list":
		return previewList("[", "]", d.List)
	case "set":
		return previewList("{", "}", d.Set) // sorted
	case "hash":
		fields := make([]string, 0, len(d.Hash))
		for f := range d.Hash {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		return previewHash(fields, func(f string) string { return d.Hash[f] })
	case "zset":
		return previewZSet(d.ZSet)
	}
	return "(" + d.Type + ")"
}

// previewList writes items between open and close, stopping once the
// text is past what the inspector shows.
func previewList(open, close string, items []string) string {
	var b strings.Builder
	b.WriteString(open)
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Quote(it))
		if b.Len() > valueWidth*2 {
			break
		}
	}
	b.WriteString(close)
	return b.String()
}

// previewHash writes a hash's sorted fields with their values.
func previewHash(fields []string, get func(string) string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", Quote(f), Quote(get(f)))
		if b.Len() > valueWidth*2 {
			break
		}
	}
	b.WriteString("}")
	return b.String()
}

// previewZSet writes a sorted set's first members by score.
func previewZSet(z map[string]float64) string {
	var b strings.Builder
	members := firstByScore(z, previewItems)
	b.WriteString("{")
	for i, m := range members {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", Quote(m), strconv.FormatFloat(z[m], 'g', -1, 64))
		if b.Len() > valueWidth*2 {
			break
		}
	}
	b.WriteString("}")
	return b.String()
}

// firstByScore returns the n first members of a sorted set, by score and
// then by name as ZRANGE orders them, keeping only n at a time rather than
// sorting the whole set.
func firstByScore(z map[string]float64, n int) []string {
	less := func(a, b string) bool {
		if z[a] != z[b] {
			return z[a] < z[b]
		}
		return a < b
	}
	first := make([]string, 0, n+1)
	for m := range z {
		if len(first) == n && !less(m, first[n-1]) {
			continue
		}
		i := sort.Search(len(first), func(i int) bool { return less(m, first[i]) })
		first = slices.Insert(first, i, m)
		if len(first) > n {
			first = first[:n]
		}
	}
	return first
}

// shorten cuts s to width characters, ending with "…" when it cuts.
func shorten(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}
