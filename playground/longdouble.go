package playground

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// INCRBYFLOAT and HINCRBYFLOAT compute in C's long double, which on the
// x86-64 machines Redis runs on is the 80-bit extended type: a 64-bit
// mantissa and an exponent up to 16384. Their results differ from float64
// arithmetic in the last digits (0.1 plus 1e20 is 1e20, and 1e400 is a
// number), so the sandbox computes them as such, with big.Float at 64 bits
// of precision, and prints them as Redis's ld2string does ("%.17Lf", with
// the trailing zeros cut).

// longDoublePrec is the mantissa of x87 extended precision.
const longDoublePrec = 64

// Extended precision's exponent range, as big.Float's MantExp counts it
// (mantissa in [0.5, 1)): the largest finite value is below 2^16384, the
// smallest subnormal is 2^-16445.
const (
	longDoubleMaxExp = 16384
	longDoubleMinExp = -16444
)

// parseLongDouble reads s as Redis's string2ld does with glibc's strtold:
// decimal or hexadecimal, "inf" and "infinity" in any case, no leading
// space, nothing left over, no NaN, and nothing that overflows or
// underflows to zero.
func parseLongDouble(s string) (*big.Float, bool) {
	if s == "" || len(s) >= 5*1024 || !strtodSyntax(s) {
		return nil, false
	}
	body := strings.TrimLeft(s, "+-")
	neg := s[0] == '-'
	switch strings.ToLower(body) {
	case "inf", "infinity":
		return new(big.Float).SetInf(neg), true
	case "nan":
		return nil, false
	}
	base := 10
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		base = 0
	}
	f, _, err := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Parse(s, base)
	if err != nil || !longDoubleRange(f) {
		return nil, false
	}
	return f, true
}

// longDoubleRange reports whether f, finite, is within extended
// precision's range: neither past its largest value nor a non-zero number
// too small for it.
func longDoubleRange(f *big.Float) bool {
	if f.Sign() == 0 || f.IsInf() {
		return true
	}
	exp := f.MantExp(nil)
	return exp <= longDoubleMaxExp && exp >= longDoubleMinExp
}

// strtodSyntax reports whether strtod would read all of s: a sign, then
// decimal digits with an optional point and exponent, a hexadecimal number
// with an optional binary exponent, or inf, infinity or nan.
func strtodSyntax(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := strings.ToLower(s[i:])
	switch rest {
	case "inf", "infinity", "nan":
		return true
	}
	digits := isDigit
	exp := byte('e')
	if strings.HasPrefix(rest, "0x") {
		rest, digits, exp = rest[2:], isHexDigit, 'p'
	}
	n, j := 0, 0
	for j < len(rest) && digits(rest[j]) {
		j, n = j+1, n+1
	}
	if j < len(rest) && rest[j] == '.' {
		j++
		for j < len(rest) && digits(rest[j]) {
			j, n = j+1, n+1
		}
	}
	if n == 0 {
		return false
	}
	if j < len(rest) && rest[j] == exp {
		j++
		if j < len(rest) && (rest[j] == '+' || rest[j] == '-') {
			j++
		}
		k := j
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j == k {
			return false
		}
	}
	return j == len(rest)
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

// addLongDouble returns a+b rounded to extended precision, and false when
// the sum is NaN or infinite, as C's isnan/isinf would find it.
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false // inf+x is inf, and inf-inf NaN: refused either way
	}
	sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(a, b)
	if sum.Sign() != 0 && sum.MantExp(nil) > longDoubleMaxExp {
		return nil, false
	}
	return sum, true
}

// formatLongDouble prints f as ld2string's LD_STR_HUMAN mode: "%.17Lf"
// without trailing zeros or point, and "-0" as "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// parseScore reads a sorted-set score as Redis's getDoubleFromObject does
// with strtod: as parseLongDouble reads, but into a double, where an
// overflow is an error and NaN is refused. It returns the score as
// miniredis reads it back without loss.
func parseScore(s string) (string, bool) {
	if s == "" || isSpace(s[0]) || !strtodSyntax(s) {
		return "", false
	}
	body := strings.ToLower(strings.TrimLeft(s, "+-"))
	if body == "nan" {
		return "", false
	}
	if body == "inf" || body == "infinity" {
		if s[0] == '-' {
			return "-inf", true
		}
		return "inf", true
	}
	if !strings.HasPrefix(body, "0x") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f == 0 && strings.ContainsAny(mantissa(body), "123456789") {
			return "", false // overflow, or underflow to zero: ERANGE
		}
		return s, true
	}
	f, _, err := new(big.Float).SetPrec(53).Parse(s, 0)
	if err != nil {
		return "", false
	}
	d, acc := f.Float64()
	if math.IsInf(d, 0) || d == 0 && acc != big.Exact {
		return "", false
	}
	return strconv.FormatFloat(d, 'g', -1, 64), true
}

// mantissa is a decimal number without its exponent.
func mantissa(s string) string {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return s[:i]
	}
	return s
}

// formatScore prints a score as Redis 7.0's addReplyDouble does: "%.17g",
// so 0.1 is 0.10000000000000001, and "inf", "-inf". A negative zero is
// printed "0", as Redis stores it.
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		return "0"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}
