package playground

import "strconv"

// parseInt parses an integer as Redis's string2ll does: an optional minus
// sign, then digits without leading zeros; no plus sign or spaces.
func parseInt(s string) (int64, bool) {
	if s == "" || s[0] == '+' || len(s) > 1 && s[0] == '0' || len(s) > 2 && s[:2] == "-0" || s == "-0" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// strtol mimics C's strtol(s, &end, 10) as redis-cli uses it for its repeat
// prefix: isNum reports whether the whole string was read (*end == '\0'),
// which is also true for an empty string, read as 0. An out-of-range
// number gives 0, which redis-cli refuses like any count below 1.
func strtol(s string) (n int64, isNum bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && '0' <= s[k] && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, s == ""
	}
	if k != len(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s[i:k], 10, 64)
	if err != nil {
		return 0, true
	}
	return n, true
}

// atoi parses an integer as miniredis does (strconv.Atoi): a sign and
// leading zeros are allowed.
func atoi(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
