package playground

import (
	"math"
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// The commands here read and write numbers as Redis 7.0 does where
// miniredis is laxer or formats otherwise: integers as string2ll reads
// them (no sign but minus, no leading zero, no space), increments in
// long double, and sorted-set scores with 17 significant digits.

const errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// incr runs INCR, DECR, INCRBY and DECRBY as Redis's incrDecrCommand:
// the increment first, then the key's type, then its value, then the
// overflow.
func (s *Sandbox) incr(c *conn, name string, argv []string) resp.Value {
	by := int64(1)
	switch name {
	case "DECR":
		by = -1
	case "INCRBY", "DECRBY":
		n, ok := parseInt(argv[2])
		if !ok {
			return resp.Err(errNotInteger)
		}
		by = n
		if name == "DECRBY" {
			if n == math.MinInt64 {
				return resp.Err("ERR decrement would overflow")
			}
			by = -n
		}
	}
	k := argv[1]
	s.tick()
	var cur int64
	switch s.m.Type(k) {
	case "":
	case "string":
		v, _ := s.m.Get(k)
		n, ok := parseInt(v)
		if !ok {
			return resp.Err(errNotInteger)
		}
		cur = n
	default:
		return resp.Err(errWrongType)
	}
	if by < 0 && cur < 0 && by < math.MinInt64-cur || by > 0 && cur > 0 && by > math.MaxInt64-cur {
		return resp.Err("ERR increment or decrement would overflow")
	}
	if v := s.dispatch(c, "SET", k, strconv.FormatInt(cur+by, 10), "KEEPTTL"); v.Kind == resp.Error {
		return v
	}
	return resp.Int(cur + by)
}

// hincrby runs HINCRBY as Redis's hincrbyCommand does.
func (s *Sandbox) hincrby(c *conn, argv []string) resp.Value {
	by, ok := parseInt(argv[3])
	if !ok {
		return resp.Err(errNotInteger)
	}
	old, errv := s.hashField(c, argv[1], argv[2])
	if errv != nil {
		return *errv
	}
	var cur int64
	if old.Kind == resp.Bulk {
		if cur, ok = parseInt(old.Str); !ok {
			return resp.Err("ERR hash value is not an integer")
		}
	}
	if by < 0 && cur < 0 && by < math.MinInt64-cur || by > 0 && cur > 0 && by > math.MaxInt64-cur {
		return resp.Err("ERR increment or decrement would overflow")
	}
	if v := s.dispatch(c, "HSET", argv[1], argv[2], strconv.FormatInt(cur+by, 10)); v.Kind == resp.Error {
		return v
	}
	return resp.Int(cur + by)
}

// hashField reads field f of hash k: nil when either is missing, a
// WRONGTYPE error when k is not a hash.
func (s *Sandbox) hashField(c *conn, k, f string) (resp.Value, *resp.Value) {
	s.tick()
	if t := s.m.Type(k); t != "" && t != "hash" {
		v := resp.Err(errWrongType)
		return resp.Value{}, &v
	}
	v := s.dispatch(c, "HGET", k, f)
	if v.Kind == resp.Error {
		return resp.Value{}, &v
	}
	return v, nil
}

// incrbyfloat runs INCRBYFLOAT as Redis's incrbyfloatCommand does: the
// type, the value held, the increment, the sum in long double.
func (s *Sandbox) incrbyfloat(c *conn, argv []string) resp.Value {
	k := argv[1]
	s.tick()
	cur := "0"
	switch s.m.Type(k) {
	case "":
	case "string":
		cur, _ = s.m.Get(k)
	default:
		return resp.Err(errWrongType)
	}
	a, ok := parseLongDouble(cur)
	if !ok {
		return resp.Err("ERR value is not a valid float")
	}
	b, ok := parseLongDouble(argv[2])
	if !ok {
		return resp.Err("ERR value is not a valid float")
	}
	sum, ok := addLongDouble(a, b)
	if !ok {
		return resp.Err("ERR increment would produce NaN or Infinity")
	}
	out := formatLongDouble(sum)
	if v := s.dispatch(c, "SET", k, out, "KEEPTTL"); v.Kind == resp.Error {
		return v
	}
	return resp.Str(out)
}

// hincrbyfloat runs HINCRBYFLOAT as Redis's hincrbyfloatCommand does.
func (s *Sandbox) hincrbyfloat(c *conn, argv []string) resp.Value {
	b, ok := parseLongDouble(argv[3])
	if !ok {
		return resp.Err("ERR value is not a valid float")
	}
	if b.IsInf() {
		return resp.Err("ERR value is NaN or Infinity")
	}
	old, errv := s.hashField(c, argv[1], argv[2])
	if errv != nil {
		return *errv
	}
	a, _ := parseLongDouble("0")
	if old.Kind == resp.Bulk {
		if a, ok = parseLongDouble(old.Str); !ok {
			return resp.Err("ERR hash value is not a float")
		}
	}
	sum, ok := addLongDouble(a, b)
	if !ok {
		return resp.Err("ERR increment would produce NaN or Infinity")
	}
	out := formatLongDouble(sum)
	if v := s.dispatch(c, "HSET", argv[1], argv[2], out); v.Kind == resp.Error {
		return v
	}
	return resp.Str(out)
}

// scoreArgs checks the scores of ZADD and ZINCRBY as Redis reads them
// (strtod: hexadecimal is fine, NaN is not) and returns argv with each
// score as miniredis can read it, or the error Redis gives. A ZADD whose
// options or pairs are wrong is left to miniredis, which words those
// errors as Redis does.
func (s *Sandbox) scoreArgs(name string, argv []string) ([]string, *resp.Value) {
	var scores []int
	incr := name == "ZINCRBY"
	if incr {
		scores = []int{2}
	} else {
		i := 2
		for ; i < len(argv); i++ {
			o := strings.ToUpper(argv[i])
			if o == "INCR" {
				incr = true
			} else if o != "NX" && o != "XX" && o != "CH" && o != "GT" && o != "LT" {
				break
			}
		}
		if n := len(argv) - i; n == 0 || n%2 != 0 || incr && n != 2 {
			return argv, nil
		}
		for ; i < len(argv); i += 2 {
			scores = append(scores, i)
		}
	}
	out := argv
	for _, i := range scores {
		sc, ok := parseScore(argv[i])
		if !ok {
			v := resp.Err("ERR value is not a valid float")
			return nil, &v
		}
		if sc != argv[i] {
			if &out[0] == &argv[0] {
				out = append([]string(nil), argv...)
			}
			out[i] = sc
		}
	}
	if incr {
		// inf plus -inf: Redis refuses what miniredis would store as NaN.
		by, _ := strconv.ParseFloat(out[scores[0]], 64)
		s.tick()
		if s.m.Type(argv[1]) == "zset" {
			if cur, err := s.m.ZScore(argv[1], out[scores[0]+1]); err == nil && math.IsNaN(cur+by) {
				v := resp.Err("ERR resulting score is not a number (NaN)")
				return nil, &v
			}
		}
	}
	return out, nil
}

// fixScores prints the scores in a sorted-set reply as Redis 7.0 does
// (formatScore); miniredis prints the shortest form.
func fixScores(name string, argv []string, v resp.Value) resp.Value {
	if v.Kind != resp.Bulk && v.Kind != resp.Array || name[0] != 'Z' {
		return v
	}
	switch name {
	case "ZSCORE", "ZINCRBY", "ZADD":
		return score(v)
	case "ZMSCORE":
		return mapElems(v, 0, 1)
	case "ZPOPMIN", "ZPOPMAX":
		return mapElems(v, 1, 2)
	case "ZRANGE", "ZRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZUNION", "ZINTER", "ZDIFF", "ZRANDMEMBER":
		for _, a := range argv[2:] {
			if strings.EqualFold(a, "WITHSCORES") {
				return mapElems(v, 1, 2)
			}
		}
	case "ZSCAN":
		if v.Kind == resp.Array && len(v.Elems) == 2 {
			v.Elems = append([]resp.Value(nil), v.Elems...)
			v.Elems[1] = mapElems(v.Elems[1], 1, 2)
		}
	case "ZMPOP":
		if v.Kind == resp.Array && len(v.Elems) == 2 && v.Elems[1].Kind == resp.Array {
			v.Elems = append([]resp.Value(nil), v.Elems...)
			pairs := append([]resp.Value(nil), v.Elems[1].Elems...)
			for i := range pairs {
				pairs[i] = mapElems(pairs[i], 1, 2)
			}
			v.Elems[1].Elems = pairs
		}
	}
	return v
}

// mapElems reformats the scores of an array reply: every step-th element
// from first.
func mapElems(v resp.Value, first, step int) resp.Value {
	if v.Kind != resp.Array {
		return v
	}
	elems := append([]resp.Value(nil), v.Elems...)
	for i := first; i < len(elems); i += step {
		elems[i] = score(elems[i])
	}
	v.Elems = elems
	return v
}

// score reformats one score.
func score(v resp.Value) resp.Value {
	if v.Kind != resp.Bulk {
		return v
	}
	if f, err := strconv.ParseFloat(v.Str, 64); err == nil {
		v.Str = formatScore(f)
	}
	return v
}

// intArgs are the arguments that Redis reads with string2ll, for the
// commands where miniredis reads them with strconv (which takes "+5" and
// "007"), and the error Redis gives for them: pos are positions, opts the
// values of options, which come at or after from (a function of argv,
// for the commands whose options follow a count of keys).
type intRule struct {
	pos  []int
	msg  string
	opts map[string]string
	from func(argv []string) int
}

var intArgs = map[string]intRule{
	"LRANGE":          {pos: []int{2, 3}, msg: errNotInteger},
	"LTRIM":           {pos: []int{2, 3}, msg: errNotInteger},
	"GETRANGE":        {pos: []int{2, 3}, msg: errNotInteger},
	"SETRANGE":        {pos: []int{2}, msg: errNotInteger},
	"ZREMRANGEBYRANK": {pos: []int{2, 3}, msg: errNotInteger},
	"SRANDMEMBER":     {pos: []int{2}, msg: errNotInteger},
	"HRANDFIELD":      {pos: []int{2}, msg: errNotInteger},
	"ZRANDMEMBER":     {pos: []int{2}, msg: errNotInteger},
	"LPOP":            {pos: []int{2}, msg: errNotPositive},
	"RPOP":            {pos: []int{2}, msg: errNotPositive},
	"SPOP":            {pos: []int{2}, msg: errNotPositive},
	"ZREVRANGE":       {pos: []int{2, 3}, msg: errNotInteger},
	"SETBIT":          {pos: []int{2}, msg: "ERR bit offset is not an integer or out of range"},
	"GETBIT":          {pos: []int{2}, msg: "ERR bit offset is not an integer or out of range"},
	// LINDEX and LSET read the index after the key: see strictInts.
	"LINDEX":           {pos: []int{2}, msg: errNotInteger},
	"LSET":             {pos: []int{2}, msg: errNotInteger},
	"ZRANGE":           {pos: []int{2, 3}, msg: errNotInteger, opts: limitOpt, from: at(4)},
	"ZRANGEBYSCORE":    {opts: limitOpt, from: at(4)},
	"ZREVRANGEBYSCORE": {opts: limitOpt, from: at(4)},
	"LPOS": {from: at(3), opts: map[string]string{
		"RANK": errNotInteger, "COUNT": "ERR COUNT can't be negative", "MAXLEN": "ERR MAXLEN can't be negative"}},
	"LMPOP":       {pos: []int{1}, msg: errNumKeys, opts: countOpt, from: afterKeys(1, 1)},
	"ZMPOP":       {pos: []int{1}, msg: errNumKeys, opts: countOpt, from: afterKeys(1, 1)},
	"SINTERCARD":  {pos: []int{1}, msg: errNumKeys, opts: map[string]string{"LIMIT": "ERR LIMIT can't be negative"}, from: afterKeys(1, 0)},
	"SCAN":        {opts: scanOpt, from: at(2)},
	"SSCAN":       {opts: scanOpt, from: at(3)},
	"HSCAN":       {opts: scanOpt, from: at(3)},
	"ZSCAN":       {opts: scanOpt, from: at(3)},
	"ZUNION":      {pos: []int{1}, msg: errNotInteger},
	"ZINTER":      {pos: []int{1}, msg: errNotInteger},
	"ZUNIONSTORE": {pos: []int{2}, msg: errNotInteger},
	"ZINTERSTORE": {pos: []int{2}, msg: errNotInteger},
}

var readsKeyFirst = map[string]string{"LINDEX": "list", "LSET": "list", "SSCAN": "set", "HSCAN": "hash", "ZSCAN": "zset"}

const (
	errNotPositive = "ERR value is out of range, must be positive"
	errNumKeys     = "ERR numkeys should be greater than 0"
)

var (
	limitOpt = map[string]string{"LIMIT": errNotInteger}
	countOpt = map[string]string{"COUNT": "ERR count should be greater than 0"}
	scanOpt  = map[string]string{"COUNT": errNotInteger}
)

func at(i int) func([]string) int { return func([]string) int { return i } }

// afterKeys finds the options after a count of keys at position n and
// skip more arguments.
func afterKeys(n, skip int) func([]string) int {
	return func(argv []string) int {
		k, ok := parseInt(argv[n])
		if !ok || k < 0 || k > int64(len(argv)) {
			return len(argv)
		}
		return n + 1 + int(k) + skip
	}
}

// strictInts returns the error Redis gives for an integer argument that
// miniredis would take but string2ll does not.
func (s *Sandbox) strictInts(name string, argv []string) *resp.Value {
	rule, ok := intArgs[name]
	if !ok {
		return nil
	}
	pos := rule.pos
	if name == "ZRANGE" {
		for _, a := range argv[4:] {
			if u := strings.ToUpper(a); u == "BYSCORE" || u == "BYLEX" {
				pos = nil
			}
		}
	}
	// These read the key first: a missing key (or one of another type)
	// answers without the argument being read.
	if typ, ok := readsKeyFirst[name]; ok {
		s.tick()
		if s.m.Type(argv[1]) != typ {
			return nil
		}
	}
	for _, i := range pos {
		if i < len(argv) && laxInt(argv[i]) {
			v := resp.Err(rule.msg)
			return &v
		}
	}
	if rule.from == nil {
		return nil
	}
	for i := rule.from(argv); i+1 < len(argv); i++ {
		msg, ok := rule.opts[strings.ToUpper(argv[i])]
		if !ok {
			continue
		}
		n := 1
		if strings.EqualFold(argv[i], "LIMIT") && rule.opts["LIMIT"] == errNotInteger {
			n = 2 // LIMIT offset count
		}
		for j := i + 1; j <= i+n && j < len(argv); j++ {
			if laxInt(argv[j]) {
				v := resp.Err(msg)
				return &v
			}
		}
		i += n
	}
	return nil
}

// laxInt reports whether miniredis would read s as an integer and Redis
// would not.
func laxInt(s string) bool {
	if _, lax := atoi(s); !lax {
		return false
	}
	_, ok := parseInt(s)
	return !ok
}
