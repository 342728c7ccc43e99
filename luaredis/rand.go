package luaredis

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// lrand48 is Redis's PRNG for scripts (src/rand.c): the 48-bit linear
// congruential generator of the drand48 family, x = 0x5DEECE66D*x + 0xB
// mod 2^48, whose next value is the top 31 bits of x. Redis 7 keeps one
// for the whole server and never reseeds it by itself (scripts' effects,
// not the scripts, are replicated), so math.random gives a new value on
// each call until a script calls math.randomseed. An Engine keeps one, so
// a sandbox's sequence is a fresh server's.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	// lrandInit is the state before any seeding: X0, X1, X2 of rand.c.
	lrandInit = 0x1234ABCD330E
	// lrandMax is REDIS_LRAND48_MAX, INT32_MAX.
	lrandMax = math.MaxInt32
)

func newLrand48() lrand48 { return lrand48{x: lrandInit} }

// next is redisLrand48.
func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

// seed is redisSrand48: the seed's 32 bits above 0x330E.
func (r *lrand48) seed(s int32) {
	r.x = uint64(uint32(s))<<16 | 0x330E
}

// installRandom replaces math.random and math.randomseed with Redis's,
// on the engine's generator.
func (v *vm) installRandom(e *Engine) {
	L := v.L
	m := v.globals.RawGetString("math").(*lua.LTable)
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		// As Redis's math_random: the number is drawn before the
		// arguments are checked.
		r := float64(e.rand.next()%lrandMax) / lrandMax
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(r))
		case 1:
			u := checkInt(L, 1, "random")
			if u < 1 {
				argError(L, 1, "random", "interval is empty")
			}
			L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
		case 2:
			l := checkInt(L, 1, "random")
			u := checkInt(L, 2, "random")
			if l > u {
				argError(L, 2, "random", "interval is empty")
			}
			// u-l+1 is computed in C's int: it wraps.
			L.Push(lua.LNumber(math.Floor(r*float64(int32(u-l+1))) + float64(l)))
		default:
			L.RaiseError("wrong number of arguments")
		}
		return 1
	}))
	m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		e.rand.seed(int32(checkInt(L, 1, "randomseed")))
		return 0
	}))
}
