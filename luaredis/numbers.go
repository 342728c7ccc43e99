package luaredis

import (
	"math"
	"strconv"
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
	case math.IsNaN(f):
		return "-nan" // what glibc prints for 0/0 on the machines Redis runs on
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
