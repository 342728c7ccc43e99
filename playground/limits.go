package playground

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/locklab/locklab/luaredis"
)

// Limits bound what one sandbox accepts, so that no learner can take more
// than a fair share of the server. A zero field takes its default.
type Limits struct {
	MaxLineBytes int // bytes in one typed line; default 64 KiB
	// MaxArgs bounds the arguments of one command; default 8,192, room
	// for what Lua's unpack can give a script's redis.call (7,999) and a
	// few more.
	MaxArgs       int
	MaxValueBytes int // bytes in one argument or string value; default 64 KiB
	MaxKeys       int // keys in a sandbox; default 1,000
	MaxDataBytes  int // bytes of keys and values in a sandbox; default 4 MiB
	MaxKeyBytes   int // bytes of one key: its name and all its elements; default 256 KiB
	MaxCount      int // counts of SRANDMEMBER, HRANDFIELD, ZRANDMEMBER, SPOP; default 1,000
	MaxReplyLines int // lines of a reply shown; default 500
	MaxReplyBytes int // bytes of a reply shown; default 32 KiB
	// MaxReplyBuildBytes bounds the bytes (as Redis sends them) of the
	// replies one command builds, a transaction's all together, before
	// they are cut for showing; default 1 MiB.
	MaxReplyBuildBytes int
	// MaxWork bounds the elements a command that reads several keys
	// (SINTER, SUNION, ZUNION, ...) may visit, estimated from their sizes
	// before it runs; default 200,000.
	MaxWork        int
	MaxRepeat      int           // redis-cli's "N command" repeat prefix; default 100
	MaxQueued      int           // commands queued in one MULTI; default 1,000
	MaxQueuedBytes int           // bytes of the commands queued in one MULTI; default 1 MiB
	MaxAdvance     time.Duration // one clock advance; default 24 hours
	Script         luaredis.Limits
	// ScriptCacheLen bounds the scripts kept for EVALSHA and the function
	// libraries of a sandbox, together; default 100.
	ScriptCacheLen int
	// ScriptCacheBytes bounds those scripts and libraries by their source
	// and an estimate of their compiled code; default 256 KiB. They count
	// with the data against the Manager's budget (Options.MaxDataBytes).
	ScriptCacheBytes int
}

// defaultMaxLineBytes is the default of Limits.MaxLineBytes.
const defaultMaxLineBytes = 64 << 10

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxLineBytes, defaultMaxLineBytes)
	def(&l.MaxArgs, 8192)
	def(&l.MaxValueBytes, 64<<10)
	def(&l.MaxKeys, 1000)
	def(&l.MaxDataBytes, 4<<20)
	def(&l.MaxKeyBytes, 256<<10)
	def(&l.MaxCount, 1000)
	def(&l.MaxReplyLines, 500)
	def(&l.MaxReplyBytes, 32<<10)
	def(&l.MaxReplyBuildBytes, 1<<20)
	def(&l.MaxWork, 200_000)
	def(&l.MaxRepeat, 100)
	def(&l.MaxQueued, 1000)
	def(&l.MaxQueuedBytes, 1<<20)
	def(&l.ScriptCacheLen, 100)
	def(&l.ScriptCacheBytes, 256<<10)
	if l.MaxAdvance <= 0 {
		l.MaxAdvance = 24 * time.Hour
	}
	if l.Script.MaxStringBytes <= 0 {
		l.Script.MaxStringBytes = l.MaxValueBytes * 4
	}
	l.Script = l.Script.WithDefaults()
	return l
}

// helpLine is the last line of help: the sandbox's limits.
func (l Limits) helpLine() string {
	return fmt.Sprintf("Limits: lines of %s, %s arguments, values of %s, %s keys and %s of data, scripts of %s that hold at most %s.",
		sizeText(l.MaxLineBytes), thousands(l.MaxArgs), sizeText(l.MaxValueBytes), thousands(l.MaxKeys),
		sizeText(l.MaxDataBytes), durationText(l.Script.Timeout), sizeText(int(min(l.Script.MaxAllocBytes, math.MaxInt32))))
}

// thousands writes n with commas between thousands: 8,192.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// durationText writes a limit in time for people: "1 second", "500 ms".
func durationText(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return strconv.Itoa(int(d/time.Second)) + " seconds"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

// footprint is the most a sandbox holds: its data, the commands queued in
// its transactions (which count within MaxDataBytes) and its scripts.
func (l Limits) footprint() int { return l.MaxDataBytes + l.ScriptCacheBytes }

// sizeText writes a limit for people: "64 KiB" or "4 MiB" when it is a
// whole number of them, else in bytes.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
