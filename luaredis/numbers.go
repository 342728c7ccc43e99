package luaredis

import (
	"math"
	"strconv"
	"strings"
)

// formatNumber renders a Lua number as Lua 5.1 does ("%.14g"), which is
// what tostring and .. give in Redis: 1e+15, 0.33333333333333, -nan.
func formatNumber(f float64) string {
	return formatG(f, 14)
}

// formatArg renders a number passed to redis.call as Redis 7.0 does
// ("%.17g"), so that redis.call('SET', k, 0.1) stores 0.10000000000000001.
func formatArg(f float64) string {
	return formatG(f, 17)
}

func formatG(f float64, prec int) string {
	switch {
	case math.IsNaN(f) && math.Signbit(f):
		return "-nan" // what glibc prints for 0/0 on the machines Redis runs on
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}

// toInteger converts a Lua number to a Redis integer reply as C's
// (long long) cast does on x86: truncation toward zero, and the minimum
// int64 for NaN and values out of range.
func toInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775807.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// strtodPrefix reads the longest prefix of s that C's strtod reads (after
// no leading space): a sign, then inf, infinity or nan in any case, a
// hexadecimal number with an optional binary exponent, or a decimal one
// with an optional exponent. It returns the value and the bytes read, 0
// when strtod would read nothing.
func strtodPrefix(s string) (float64, int) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	neg := i > 0 && s[0] == '-'
	low := strings.ToLower(s[i:min(len(s), i+8)]) // enough for "infinity" and "0x.": s may be long
	switch {
	case strings.HasPrefix(low, "infinity"):
		return math.Inf(sign(neg)), i + 8
	case strings.HasPrefix(low, "inf"):
		return math.Inf(sign(neg)), i + 3
	case strings.HasPrefix(low, "nan"):
		return math.NaN(), i + 3
	}
	hex := strings.HasPrefix(low, "0x") && len(low) > 2 && (isHex(low[2]) || low[2] == '.' && len(low) > 3 && isHex(low[3]))
	digit, exp, start := isDec, byte('e'), i
	if hex {
		digit, exp, i = isHex, 'p', i+2
	}
	n := 0
	for i < len(s) && digit(s[i]) {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && digit(s[j]) {
			j, n = j+1, n+1
		}
		if n > 0 {
			i = j
		}
	}
	if n == 0 {
		return 0, 0
	}
	end := i
	if i < len(s) && s[i]|0x20 == exp {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for j < len(s) && isDec(s[j]) {
			j++
		}
		if j > k {
			end = j
		}
	}
	text := s[:end]
	if hex && !strings.ContainsAny(strings.ToLower(s[start:end]), "p") {
		text += "p0"
	}
	f, _ := strconv.ParseFloat(text, 64) // out of range: ±Inf or 0, as strtod gives
	return f, end
}

func sign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func isDec(c byte) bool   { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDec(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
func isDigit(c byte) bool { return isDec(c) }

// parseLuaNumber converts a string to a number as Lua 5.1's luaO_str2d
// does: strtod (which skips leading space and reads hexadecimal too),
// then nothing but space.
func parseLuaNumber(s string) (float64, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	f, n := strtodPrefix(t)
	if n == 0 || strings.TrimRight(t[n:], " \t\n\v\f\r") != "" {
		return 0, strconv.ErrSyntax
	}
	return f, nil
}

// strtoul reads s as C's strtoul in base does for Lua 5.1's tonumber:
// leading space, a sign (a minus wraps round), a 0x prefix in base 16,
// at least one digit, then nothing but space.
func strtoul(s string, base int) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if base == 16 && len(t) > 2 && t[0] == '0' && t[1]|0x20 == 'x' && digitValue(t[2]) < 16 {
		t = t[2:]
	}
	var n uint64
	i, over := 0, false
	for ; i < len(t) && digitValue(t[i]) < base; i++ {
		d := uint64(digitValue(t[i]))
		if n > (math.MaxUint64-d)/uint64(base) {
			over = true
		}
		n = n*uint64(base) + d
	}
	if i == 0 || strings.TrimRight(t[i:], " \t\n\v\f\r") != "" {
		return 0, false
	}
	if over {
		n = math.MaxUint64
	} else if neg {
		n = -n
	}
	return float64(n), true
}

// digitValue is the value of c as a digit in bases up to 36, or 99.
func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'z':
		return int(c|0x20-'a') + 10
	}
	return 99
}
