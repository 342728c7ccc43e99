package luaredis

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Redis scripts have Roberto Ierusalimschy's struct library: pack,
// unpack and size over a format of options (> < = ! endianness and
// alignment, x b B h H l L T i I f d s c). No Go module provides it for
// gopher-lua, so it is written here after the library's rules, on the
// x86-64 sizes (int 4, long and size_t 8) Redis is built with. What pack
// builds is bounded by the format's length and the strings given, and
// checked against the playground's string limit.

// structMaxIntSize is the library's MAXINTSIZE.
const structMaxIntSize = 32

// structFormat walks a format string.
type structFormat struct {
	L     *lua.LState
	fmt   string
	i     int
	big   bool
	align int
	name  string
}

// next returns the next option and its size, skipping the endianness and
// alignment options; ok is false at the end.
func (f *structFormat) next() (opt byte, size int, ok bool) {
	for f.i < len(f.fmt) {
		opt = f.fmt[f.i]
		f.i++
		switch opt {
		case ' ':
			continue
		case '>':
			f.big = true
			continue
		case '<', '=':
			f.big = false
			continue
		case '!':
			f.align = f.num(8)
			continue
		case 'x', 'b', 'B':
			return opt, 1, true
		case 'h', 'H':
			return opt, 2, true
		case 'l', 'L', 'T', 'd':
			return opt, 8, true
		case 'f':
			return opt, 4, true
		case 's':
			return opt, 0, true
		case 'c':
			return opt, f.num(1), true
		case 'i', 'I':
			n := f.num(4)
			if n > structMaxIntSize {
				f.L.RaiseError("integral size %d is larger than limit of %d", n, structMaxIntSize)
			}
			return opt, n, true
		default:
			argError(f.L, 1, f.name, "invalid format option '"+string(opt)+"'")
		}
	}
	return 0, 0, false
}

// num reads the optional size after an option.
func (f *structFormat) num(def int) int {
	if f.i >= len(f.fmt) || !isDec(f.fmt[f.i]) {
		return def
	}
	n := 0
	for f.i < len(f.fmt) && isDec(f.fmt[f.i]) && n < 1<<20 {
		n = n*10 + int(f.fmt[f.i]-'0')
		f.i++
	}
	return n
}

// pad is the library's gettoalign: the padding before an option of size
// at offset pos.
func (f *structFormat) pad(pos int, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	size = min(size, f.align)
	if size <= 1 {
		return 0
	}
	return (size - pos&(size-1)) & (size - 1)
}

func structTable(L *lua.LState, lim libLimits) *lua.LTable {
	maxBytes := lim.maxBytes
	t := L.CreateTable(0, 3)
	t.RawSetString("pack", L.NewFunction(func(L *lua.LState) int {
		lim.work(L)
		f := structFormat{L: L, fmt: L.CheckString(1), align: 1, name: "pack"}
		var b bytes.Buffer
		grow := func(n int) {
			if b.Len()+n > maxBytes {
				L.RaiseError("resulting string too large: the playground allows %d bytes", maxBytes)
			}
		}
		arg := 2
		for {
			opt, size, ok := f.next()
			if !ok {
				break
			}
			p := f.pad(b.Len(), opt, size)
			grow(p + size)
			b.Write(make([]byte, p))
			switch opt {
			case 'x':
				b.WriteByte(0)
			case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
				n := structNumber(L, arg, "pack")
				arg++
				var v uint64
				if n < 0 {
					v = uint64(int64(n))
				} else {
					v = uint64(n)
				}
				b.Write(structInt(v, size, f.big))
			case 'f', 'd':
				n := structNumber(L, arg, "pack")
				arg++
				var raw []byte
				if opt == 'f' {
					raw = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(n)))
				} else {
					raw = binary.LittleEndian.AppendUint64(nil, math.Float64bits(n))
				}
				if f.big {
					reverse(raw)
				}
				b.Write(raw)
			case 'c', 's':
				s, ok := L.Get(arg).(lua.LString)
				if !ok {
					argTypeError(L, arg, "pack", "string")
				}
				arg++
				if opt == 's' {
					size = len(s) + 1
				} else if size == 0 {
					size = len(s)
				}
				if opt == 'c' && len(s) < size {
					argError(L, arg, "pack", "string too short")
				}
				grow(size)
				b.WriteString(string(s)[:min(size, len(s))])
				if opt == 's' {
					b.WriteByte(0)
				}
			}
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		lim.work(L)
		f := structFormat{L: L, fmt: L.CheckString(1), align: 1, name: "unpack"}
		data := L.CheckString(2)
		pos := L.OptInt(3, 1)
		if pos <= 0 {
			argError(L, 3, "unpack", "offset must be 1 or greater")
		}
		pos--
		n := 0
		push := func(v lua.LValue) { L.Push(v); n++ }
		for {
			opt, size, ok := f.next()
			if !ok {
				break
			}
			pos += f.pad(pos, opt, size)
			if opt != 's' && (pos+size > len(data) || pos+size < pos) {
				argError(L, 2, "unpack", "data string too short")
			}
			switch opt {
			case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
				raw := []byte(data[pos : pos+size])
				if f.big {
					reverse(raw)
				}
				var v uint64
				for i := min(size, 8) - 1; i >= 0; i-- {
					v = v<<8 | uint64(raw[i])
				}
				if opt == 'b' || opt == 'h' || opt == 'l' || opt == 'i' {
					if size < 8 && v&(1<<(size*8-1)) != 0 {
						v |= ^uint64(0) << (size * 8)
					}
					push(lua.LNumber(int64(v)))
				} else {
					push(lua.LNumber(v))
				}
			case 'f', 'd':
				raw := []byte(data[pos : pos+size])
				if f.big {
					reverse(raw)
				}
				if opt == 'f' {
					push(lua.LNumber(math.Float32frombits(binary.LittleEndian.Uint32(raw))))
				} else {
					push(lua.LNumber(math.Float64frombits(binary.LittleEndian.Uint64(raw))))
				}
			case 'c':
				if size == 0 {
					prev, isNum := L.Get(L.GetTop()).(lua.LNumber)
					if n == 0 || !isNum {
						L.RaiseError("format 'c0' needs a previous size")
					}
					L.Pop(1)
					n--
					size = int(prev)
					if size < 0 || pos+size > len(data) {
						argError(L, 2, "unpack", "data string too short")
					}
				}
				push(lua.LString(keepPart(data[pos:pos+size], len(data))))
			case 's':
				end := strings.IndexByte(data[pos:], 0)
				if end < 0 {
					L.RaiseError("unfinished string in data")
				}
				push(lua.LString(keepPart(data[pos:pos+end], len(data))))
				size = end + 1
			}
			pos += size
		}
		push(lua.LNumber(pos + 1))
		return n
	}))
	t.RawSetString("size", L.NewFunction(func(L *lua.LState) int {
		f := structFormat{L: L, fmt: L.CheckString(1), align: 1, name: "size"}
		pos := 0
		for {
			opt, size, ok := f.next()
			if !ok {
				break
			}
			if opt == 's' || opt == 'c' && size == 0 {
				name := string(opt)
				if opt == 'c' {
					name = "c0"
				}
				argError(L, 1, "size", "option '"+name+"' has no fixed size")
			}
			pos += f.pad(pos, opt, size) + size
		}
		L.Push(lua.LNumber(pos))
		return 1
	}))
	return t
}

// structNumber is the library's luaL_checknumber, with "got nil" for a
// missing argument as struct words it.
func structNumber(L *lua.LState, n int, name string) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, err := parseLuaNumber(string(v)); err == nil {
			return f
		}
	}
	argError(L, n, name, "number expected, got "+L.Get(n).Type().String())
	return 0
}

// structInt writes the low size bytes of v, zeros past its 8 bytes as
// the library's shifts of an unsigned long long give.
func structInt(v uint64, size int, big bool) []byte {
	out := make([]byte, size)
	for i := range min(size, 8) {
		out[i] = byte(v >> (8 * i))
	}
	if big {
		reverse(out)
	}
	return out
}

func reverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
