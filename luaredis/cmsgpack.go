package luaredis

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Redis scripts have lua-cmsgpack as cmsgpack. Its encoding is its own
// choice among MessagePack's (the smallest integer form, a float32 when
// the number survives it, str8 for strings of 32 to 255 bytes, tables as
// arrays only when their keys are exactly 1..n, nesting past 16 as nil),
// which a general MessagePack library does not reproduce byte for byte,
// so it is written here. pack stops at the playground's string limit as
// it writes; unpack reads at most what the input holds.

// cmsgpackMaxNesting is lua-cmsgpack's LUACMSGPACK_MAX_NESTING: deeper
// tables are packed as nil.
const cmsgpackMaxNesting = 16

// cmsgpackMaxDepth bounds unpacking, which C does on its stack.
const cmsgpackMaxDepth = 1000

func cmsgpackTable(L *lua.LState, lim libLimits) *lua.LTable {
	t := L.CreateTable(0, 8)
	t.RawSetString("_NAME", lua.LString("lua-cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	t.RawSetString("pack", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			argError(L, 0, "pack", "MessagePack pack needs input.")
		}
		lim.work(L)
		p := msgPacker{L: L, max: lim.maxBytes, order: lim.order}
		for i := 1; i <= L.GetTop(); i++ {
			p.value(L.Get(i), 0)
		}
		L.Push(lua.LString(p.b))
		return 1
	}))
	// unpack, unpack_one and unpack_limit are lua-cmsgpack's
	// mp_unpack_full with a limit and an offset; with neither it returns
	// all the values, else the offset to go on from (-1 at the end) first.
	unpack := func(name string, args func(L *lua.LState) (limit, offset int)) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			s, ok := L.Get(1).(lua.LString)
			if !ok {
				if n, isNum := L.Get(1).(lua.LNumber); isNum {
					s = lua.LString(formatNumber(float64(n)))
				} else {
					argTypeError(L, 1, name, "string")
				}
			}
			limit, offset := args(L)
			switch {
			case limit < 0 || offset < 0:
				L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
			case offset > len(s):
				L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
			}
			all := limit == 0 && offset == 0
			if all {
				limit = math.MaxInt
			}
			lim.work(L)
			u := msgUnpacker{L: L, s: string(s), pos: offset, pad: lim.pad}
			var out []lua.LValue
			for u.pos < len(u.s) && len(out) < limit {
				out = append(out, u.value(0))
			}
			if !all {
				next := u.pos
				if next >= len(u.s) {
					next = -1
				}
				L.Push(lua.LNumber(next))
			}
			for _, v := range out {
				L.Push(v)
			}
			return len(out) + btoi(!all)
		}))
	}
	unpack("unpack", func(*lua.LState) (int, int) { return 0, 0 })
	unpack("unpack_one", func(L *lua.LState) (int, int) { return 1, L.OptInt(2, 0) })
	unpack("unpack_limit", func(L *lua.LState) (int, int) { return L.OptInt(2, 0), L.OptInt(3, 0) })
	return t
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// msgPacker writes one cmsgpack.pack result.
type msgPacker struct {
	L   *lua.LState
	b   []byte
	max int
	// order lists a table's keys in C Lua's order.
	order func(t *lua.LTable) []lua.LValue
}

func (p *msgPacker) write(b ...byte) {
	if len(p.b)+len(b) > p.max {
		p.L.RaiseError("resulting string too large: the playground allows %d bytes", p.max)
	}
	p.b = append(p.b, b...)
}

func (p *msgPacker) value(v lua.LValue, level int) {
	switch v := v.(type) {
	case lua.LString:
		p.bytes(string(v))
	case lua.LBool:
		if v {
			p.write(0xc3)
		} else {
			p.write(0xc2)
		}
	case lua.LNumber:
		p.number(float64(v))
	case *lua.LTable:
		if level == cmsgpackMaxNesting {
			p.write(0xc0)
			return
		}
		p.table(v, level)
	default:
		p.write(0xc0)
	}
}

func (p *msgPacker) number(f float64) {
	if !math.IsInf(f, 0) && !math.IsNaN(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && float64(int64(f)) == f {
		p.int(int64(f))
		return
	}
	if f32 := float32(f); float64(f32) == f {
		p.write(0xca)
		p.write(binary.BigEndian.AppendUint32(nil, math.Float32bits(f32))...)
		return
	}
	p.write(0xcb)
	p.write(binary.BigEndian.AppendUint64(nil, math.Float64bits(f))...)
}

func (p *msgPacker) int(n int64) {
	switch {
	case n >= 0 && n <= 127:
		p.write(byte(n))
	case n >= 0 && n <= 0xff:
		p.write(0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		p.write(binary.BigEndian.AppendUint16([]byte{0xcd}, uint16(n))...)
	case n >= 0 && n <= 0xffffffff:
		p.write(binary.BigEndian.AppendUint32([]byte{0xce}, uint32(n))...)
	case n >= 0:
		p.write(binary.BigEndian.AppendUint64([]byte{0xcf}, uint64(n))...)
	case n >= -32:
		p.write(byte(int8(n)))
	case n >= -128:
		p.write(0xd0, byte(int8(n)))
	case n >= -32768:
		p.write(binary.BigEndian.AppendUint16([]byte{0xd1}, uint16(int16(n)))...)
	case n >= -2147483648:
		p.write(binary.BigEndian.AppendUint32([]byte{0xd2}, uint32(int32(n)))...)
	default:
		p.write(binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(n))...)
	}
}

func (p *msgPacker) bytes(s string) {
	n := len(s)
	switch {
	case n < 32:
		p.write(0xa0 | byte(n))
	case n <= 0xff:
		p.write(0xd9, byte(n))
	case n <= 0xffff:
		p.write(binary.BigEndian.AppendUint16([]byte{0xda}, uint16(n))...)
	default:
		p.write(binary.BigEndian.AppendUint32([]byte{0xdb}, uint32(n))...)
	}
	if len(p.b)+n > p.max {
		p.L.RaiseError("resulting string too large: the playground allows %d bytes", p.max)
	}
	p.b = append(p.b, s...)
}

// header writes an array or map header of n entries: fix, 16 or 32 bits.
func (p *msgPacker) header(n int, fix, b16, b32 byte) {
	switch {
	case n <= 15:
		p.write(fix | byte(n))
	case n <= 0xffff:
		p.write(binary.BigEndian.AppendUint16([]byte{b16}, uint16(n))...)
	default:
		p.write(binary.BigEndian.AppendUint32([]byte{b32}, uint32(n))...)
	}
}

// table packs t as an array when its keys are exactly 1..n (an empty
// table too), else as a map.
func (p *msgPacker) table(t *lua.LTable, level int) {
	count, maxKey, isArray := 0, 0.0, true
	t.ForEach(func(k, _ lua.LValue) {
		count++
		n, ok := k.(lua.LNumber)
		if !ok || n <= 0 || math.Floor(float64(n)) != float64(n) {
			isArray = false
			return
		}
		maxKey = max(maxKey, float64(n))
	})
	if isArray && float64(count) == maxKey {
		p.header(count, 0x90, 0xdc, 0xdd)
		for i := 1; i <= count; i++ {
			p.value(t.RawGetInt(i), level+1)
		}
		return
	}
	p.header(count, 0x80, 0xde, 0xdf)
	for _, k := range p.order(t) {
		p.value(k, level+1)
		p.value(t.RawGet(k), level+1)
	}
}

// msgUnpacker reads values from one cmsgpack.unpack input.
type msgUnpacker struct {
	L   *lua.LState
	s   string
	pos int
	pad func(L *lua.LState, t *lua.LTable, key lua.LValue) // see vm.padTo
}

func (u *msgUnpacker) take(n int) string {
	if n < 0 || len(u.s)-u.pos < n {
		u.L.RaiseError("Missing bytes in input.")
	}
	b := u.s[u.pos : u.pos+n]
	u.pos += n
	return b
}

// str takes a string of n bytes: a copy if small beside the input, which
// it would otherwise keep alive (see keepPart).
func (u *msgUnpacker) str(n int) lua.LValue {
	return lua.LString(keepPart(u.take(n), len(u.s)))
}

func (u *msgUnpacker) uint(n int) uint64 {
	b := u.take(n)
	var v uint64
	for i := 0; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func (u *msgUnpacker) value(depth int) lua.LValue {
	if depth > cmsgpackMaxDepth {
		u.L.RaiseError("Bad data format in input.")
	}
	c := u.take(1)[0]
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c >= 0xa0 && c <= 0xbf:
		return u.str(int(c & 0x1f))
	case c >= 0x90 && c <= 0x9f:
		return u.array(int(c&0x0f), depth)
	case c >= 0x80 && c <= 0x8f:
		return u.mapping(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(u.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(u.uint(8)))
	case 0xcc:
		return lua.LNumber(u.uint(1))
	case 0xcd:
		return lua.LNumber(u.uint(2))
	case 0xce:
		return lua.LNumber(u.uint(4))
	case 0xcf:
		return lua.LNumber(u.uint(8))
	case 0xd0:
		return lua.LNumber(int8(u.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(u.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(u.uint(4)))
	case 0xd3:
		return lua.LNumber(int64(u.uint(8)))
	case 0xd9:
		return u.str(int(u.uint(1)))
	case 0xda:
		return u.str(int(u.uint(2)))
	case 0xdb:
		return u.str(int(u.uint(4)))
	case 0xdc:
		return u.array(int(u.uint(2)), depth)
	case 0xdd:
		return u.array(int(u.uint(4)), depth)
	case 0xde:
		return u.mapping(int(u.uint(2)), depth)
	case 0xdf:
		return u.mapping(int(u.uint(4)), depth)
	}
	u.L.RaiseError("Bad data format in input.")
	return nil
}

// array reads n elements; every element takes a byte at least, so a
// count larger than the input runs out of bytes, not of memory.
func (u *msgUnpacker) array(n, depth int) lua.LValue {
	t := u.L.CreateTable(min(n, len(u.s)-u.pos), 0)
	for i := 1; i <= n; i++ {
		t.RawSetInt(i, u.value(depth+1))
	}
	return t
}

func (u *msgUnpacker) mapping(n, depth int) lua.LValue {
	t := u.L.CreateTable(0, min(n, (len(u.s)-u.pos)/2))
	for range n {
		k := u.value(depth + 1)
		v := u.value(depth + 1)
		if k != lua.LNil {
			u.pad(u.L, t, k)
			t.RawSet(k, v)
		}
	}
	return t
}
