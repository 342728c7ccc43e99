package loadgen

import (
	"encoding/json"
	"strings"
)

// hostilePayloads returns what a hostile learner tries against the
// playground: scripts that never end, eat memory or build recursive
// replies, huge offsets and argument lists, and a body over the API's
// size limit. Each is fine to refuse; none may hurt other learners.
func hostilePayloads() []step {
	execLine := func(name, line string) step {
		return step{
			method: "POST", path: "/api/playground/exec", hostile: name,
			body: map[string]string{"line": line, "client": "A"},
		}
	}
	huge, _ := json.Marshal(map[string]string{"line": "SET hostile:big " + strings.Repeat("x", 100_000), "client": "A"})
	return []step{
		execLine("while true", `EVAL "while true do end" 0`),
		execLine("self-referencing table", `EVAL "local t={} t[1]=t return t" 0`),
		execLine("string.rep 2^31", `EVAL "return string.rep('x', 2^31)" 0`),
		execLine("string doubling", `EVAL "local s='x' for i=1,40 do s=s..s end return #s" 0`),
		execLine("table of 1e8", `EVAL "local t={} for i=1,1e8 do t[i]=i end return #t" 0`),
		execLine("unbounded recursion", `EVAL "local function f() return f() + 1 end return f()" 0`),
		execLine("redis.call loop", `EVAL "for i=1,1e8 do redis.call('INCR','hostile:n') end" 0`),
		execLine("SETRANGE 512 MB", "SETRANGE hostile:k 536870911 x"),
		execLine("SETRANGE 4 GB", "SETRANGE hostile:k 4294967295 x"),
		execLine("10,000 arguments", "RPUSH hostile:list"+strings.Repeat(" x", 10_000)),
		{method: "POST", path: "/api/playground/exec", hostile: "100 KB body", raw: huge},
	}
}
