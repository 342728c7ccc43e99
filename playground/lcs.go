package playground

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// ownCommands are the commands the playground answers itself, miniredis
// having none of them (override sends them here).
var ownCommands = map[string]bool{"LCS": true, "SORT": true, "SORT_RO": true}

// maxLCSCells bounds LCS's table, its two strings' lengths multiplied:
// the algorithm Redis uses costs that much time and memory (four bytes a
// cell), where everything else a line does grows with its input only.
const maxLCSCells = 1 << 20

// lcs is Redis 7.0's LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len]
// [WITHMATCHLEN]: the longest common subsequence of two strings (a
// missing key is the empty string), its length, or the ranges that match,
// walked from the ends back as Redis walks them.
func (s *Sandbox) lcs(argv []string) resp.Value {
	var vals [2]string
	for i, k := range argv[1:3] {
		switch s.m.Type(k) {
		case "":
		case "string":
			vals[i], _ = s.m.Get(k)
		default:
			return resp.Err("ERR The specified keys must contain string values")
		}
	}
	var getLen, getIdx, withLen bool
	minLen := int64(0)
	for j := 3; j < len(argv); j++ {
		opt := strings.ToUpper(argv[j])
		switch {
		case opt == "IDX":
			getIdx = true
		case opt == "LEN":
			getLen = true
		case opt == "WITHMATCHLEN":
			withLen = true
		case opt == "MINMATCHLEN" && j+1 < len(argv):
			n, err := strconv.ParseInt(argv[j+1], 10, 64)
			if err != nil {
				return resp.Err(errNotInteger)
			}
			minLen = max(n, 0)
			j++
		default:
			return resp.Err("ERR syntax error")
		}
	}
	if getLen && getIdx {
		return resp.Err("ERR If you want both the length and indexes, please just use IDX.")
	}
	a, b := vals[0], vals[1]
	if cells := (len(a) + 1) * (len(b) + 1); cells > maxLCSCells {
		return resp.Err(fmt.Sprintf("ERR the playground runs LCS on strings whose lengths, each plus one, multiply to at most %d; these are %d and %d bytes", maxLCSCells, len(a), len(b)))
	}
	// dp[i*(len(b)+1)+j] is the LCS length of a[:i] and b[:j].
	w := len(b) + 1
	dp := make([]uint32, (len(a)+1)*w)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				dp[i*w+j] = dp[(i-1)*w+j-1] + 1
			} else {
				dp[i*w+j] = max(dp[(i-1)*w+j], dp[i*w+j-1])
			}
		}
	}
	n := int(dp[len(a)*w+len(b)])
	if getLen {
		return resp.Int(int64(n))
	}
	result := make([]byte, n)
	var matches []resp.Value
	// Walk back from the ends, as Redis does, noting each run of
	// matching bytes as a pair of ranges when it ends.
	idx, i, j := n, len(a), len(b)
	aStart, aEnd, bStart, bEnd := len(a), 0, 0, 0 // aStart == len(a): no run
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case aStart == len(a):
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j:
				aStart, bStart = aStart-1, bStart-1
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx, i, j = idx-1, i-1, j-1
		} else {
			if dp[(i-1)*w+j] > dp[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != len(a) {
				emit = true
			}
		}
		if emit {
			matchLen := int64(aEnd - aStart + 1)
			if getIdx && (minLen == 0 || matchLen >= minLen) {
				m := []resp.Value{
					resp.Arr(resp.Int(int64(aStart)), resp.Int(int64(aEnd))),
					resp.Arr(resp.Int(int64(bStart)), resp.Int(int64(bEnd))),
				}
				if withLen {
					m = append(m, resp.Int(matchLen))
				}
				matches = append(matches, resp.Arr(m...))
			}
			aStart = len(a)
		}
	}
	if getIdx {
		return resp.Arr(resp.Str("matches"), resp.Arr(matches...), resp.Str("len"), resp.Int(int64(n)))
	}
	return resp.Str(string(result))
}
