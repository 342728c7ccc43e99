package luaredis

import (
	"fmt"
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// Redis scripts have LuaBitOp's bit library: 32-bit operations whose
// results are signed (bit.bnot(0) is -1). The Go modules for gopher-lua
// give Lua 5.2's bit32 (unsigned results) or Go's 64-bit operators, which
// print other numbers, so the library is written here, after LuaBitOp's
// documented behaviour.

// bitTable builds the bit library.
func bitTable(L *lua.LState) *lua.LTable {
	t := L.CreateTable(0, 12)
	fn := func(name string, f func(L *lua.LState) int32) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(f(L)))
			return 1
		}))
	}
	arg := func(L *lua.LState, n int, name string) uint32 {
		return uint32(toBit(checkNumber(L, n, name)))
	}
	fold := func(name string, op func(a, b uint32) uint32) {
		fn(name, func(L *lua.LState) int32 {
			r := arg(L, 1, name)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, arg(L, i, name))
			}
			return int32(r)
		})
	}
	fn("tobit", func(L *lua.LState) int32 { return int32(arg(L, 1, "tobit")) })
	fn("bnot", func(L *lua.LState) int32 { return int32(^arg(L, 1, "bnot")) })
	fold("band", func(a, b uint32) uint32 { return a & b })
	fold("bor", func(a, b uint32) uint32 { return a | b })
	fold("bxor", func(a, b uint32) uint32 { return a ^ b })
	shift := func(name string, op func(x uint32, n uint) uint32) {
		fn(name, func(L *lua.LState) int32 {
			x := arg(L, 1, name)
			n := uint(arg(L, 2, name) & 31)
			return int32(op(x, n))
		})
	}
	shift("lshift", func(x uint32, n uint) uint32 { return x << n })
	shift("rshift", func(x uint32, n uint) uint32 { return x >> n })
	shift("arshift", func(x uint32, n uint) uint32 { return uint32(int32(x) >> n) })
	shift("rol", func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, int(n)) })
	shift("ror", func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, -int(n)) })
	fn("bswap", func(L *lua.LState) int32 { return int32(bits.ReverseBytes32(arg(L, 1, "bswap"))) })
	t.RawSetString("tohex", L.NewFunction(func(L *lua.LState) int {
		x := arg(L, 1, "tohex")
		n := int32(8)
		if L.GetTop() >= 2 {
			n = int32(arg(L, 2, "tohex"))
		}
		format := "%08x"
		if n < 0 {
			n, format = -n, "%08X"
		}
		n = min(n, 8)
		s := fmt.Sprintf(format, x)
		L.Push(lua.LString(s[8-n:]))
		return 1
	}))
	return t
}

// toBit normalizes a number to 32 bits as LuaBitOp does: rounded to the
// nearest integer (ties to even, as adding 2^52+2^51 rounds), then its low
// 32 bits.
func toBit(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	r := math.RoundToEven(f)
	if math.Abs(r) >= 1<<63 {
		return int32(uint32(uint64(math.Mod(r, 1<<32))))
	}
	return int32(uint32(int64(r)))
}

// checkNumber is luaL_checknumber with Lua 5.1's message for function
// name: strings that look like numbers are numbers too.
func checkNumber(L *lua.LState, n int, name string) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, err := parseLuaNumber(string(v)); err == nil {
			return f
		}
	}
	argTypeError(L, n, name, "number")
	return 0
}

// argTypeError raises Lua 5.1's "bad argument #n to 'name' (want
// expected, got type)".
func argTypeError(L *lua.LState, n int, name, want string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	argError(L, n, name, want+" expected, got "+got)
}

// argError raises Lua 5.1's "bad argument #n to 'name' (msg)".
func argError(L *lua.LState, n int, name, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, name, msg)
}
