package luaredis

import (
	"reflect"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Type errors: gopher-lua words them its own way ("attempt to call a
// non-function object", "attempt to index a non-table object(nil) with
// key 'x'", "cannot perform add operation between nil and number", "__len
// undefined"), where Lua 5.1 says what the value was and, when the code
// named it, how: "attempt to call field 'cal' (a nil value)", "attempt to
// index local 't' (a nil value)", "attempt to perform arithmetic on
// global 'n' (a string value)", or "attempt to call a nil value" for a
// call's result.
// typeError works that out as Lua 5.1's luaG_typeerror does, from the
// frame that raised the error: the instruction at its pc, the value in
// the register it used, and the name found from the instructions before
// it (getobjname in Lua's ldebug.c).
//
// gopher-lua does not export a frame's pc or registers, so typeError
// reads them with reflect, from fields of gopher-lua v1.1.2 (the version
// go.mod names). If they are not found it gives up and lua51Message
// rewords the message without a name; TestTypeErrorNames fails first.

// callErrorText is gopher-lua's message for a call of a non-function.
const callErrorText = "attempt to call a non-function object"

// The other type errors, as gopher-lua words them at the end of the
// message.
var (
	indexErrorAt  = regexp.MustCompile(`attempt to index a non-table object\(\w+\) with key '.*'$`)
	concatErrorAt = regexp.MustCompile(`attempt to concatenate a \w+ value$`)
	arithErrorAt  = regexp.MustCompile(`cannot perform \w+ operation (between (\w+) and \w+|on \w+)$`)
)

// typeError rewords msg, gopher-lua's error raised at dbg's frame, as
// Lua 5.1's, if it is a type error raised by one of the frame's
// instructions; otherwise it returns msg.
func typeError(L *lua.LState, msg string) string {
	var prefix, op string
	level := 1 // the frame that raised, under the handler's own
	if m := concatErrorAt.FindStringIndex(msg); m != nil {
		// .. is a call of concatFunc (see rewriteConcat), which raised
		// the error: the frame of the code is the one below it.
		prefix, op, level = msg[:m[0]], "concatenate", 2
	} else if p, ok := strings.CutSuffix(msg, callErrorText); ok {
		prefix, op = p, "call"
	} else if m := indexErrorAt.FindStringIndex(msg); m != nil {
		prefix, op = msg[:m[0]], "index"
	} else if m := arithErrorAt.FindStringIndex(msg); m != nil {
		prefix, op = msg[:m[0]], "perform arithmetic on"
	} else if p, ok := strings.CutSuffix(msg, "__unm undefined"); ok {
		prefix, op = p, "perform arithmetic on"
	} else if p, ok := strings.CutSuffix(msg, "__len undefined"); ok {
		prefix, op = p, "get length of"
	} else {
		return msg
	}
	dbg, ok := L.GetStack(level)
	if !ok {
		return msg
	}
	frame := reflect.ValueOf(dbg).Elem().FieldByName("frame")
	if !frame.IsValid() || frame.IsNil() {
		return msg
	}
	frame = frame.Elem()
	pcField, baseField := frame.FieldByName("Pc"), frame.FieldByName("LocalBase")
	if !pcField.IsValid() || !baseField.IsValid() {
		return msg
	}
	fn, err := L.GetInfo("f", dbg, lua.LNil)
	lf, isFn := fn.(*lua.LFunction)
	if err != nil || !isFn || lf.IsG || lf.Proto == nil {
		return msg
	}
	p := lf.Proto
	pc := int(pcField.Int()) - 1 // the instruction that raised: Pc is past it
	if pc < 0 || pc >= len(p.Code) {
		return msg
	}
	base := int(baseField.Int())
	reg, named, ok := operand(L, base, p.Code[pc], op)
	if !ok {
		return msg
	}
	typ, ok := registerType(L, base+reg)
	if !ok {
		return msg
	}
	if kind, name := objName(p, pc, reg); named && kind != "" {
		return prefix + "attempt to " + op + " " + kind + " '" + name + "' (a " + typ + " value)"
	}
	return prefix + "attempt to " + op + " a " + typ + " value"
}

// operand is the register of the value inst failed on, for an error of
// op; named is false where Lua 5.1 gives no name. ok is false if inst
// does not raise such an error, or the value is a constant: then Lua
// names nothing either, and lua51Message words the error.
func operand(L *lua.LState, base int, inst uint32, op string) (reg int, named, ok bool) {
	switch code := opOf(inst); {
	case op == "call" && (code == lua.OP_CALL || code == lua.OP_TAILCALL):
		return argA(inst), true, true
	case op == "call" && code == lua.OP_TFORLOOP: // a generic for's generator
		return argA(inst), false, true
	case op == "index" && (code == lua.OP_GETTABLE || code == lua.OP_GETTABLEKS || code == lua.OP_SELF):
		return argB(inst), true, argB(inst) < rkConstant
	case op == "index" && (code == lua.OP_SETTABLE || code == lua.OP_SETTABLEKS):
		return argA(inst), true, true
	case op == "concatenate" && (code == lua.OP_CALL || code == lua.OP_TAILCALL) && argB(inst) > 2:
		return concatOperand(L, base, argA(inst)+1, argB(inst)-1)
	case op == "get length of" && code == lua.OP_LEN:
		return argB(inst), true, true
	case op != "perform arithmetic on":
		return 0, false, false
	case code == lua.OP_UNM:
		return argB(inst), true, true
	case code >= lua.OP_ADD && code <= lua.OP_POW:
		// Lua blames the first operand unless it is a number (or a
		// string that reads as one), then the second.
		rk := argB(inst)
		if rk >= rkConstant || registerNumeric(L, base+rk) {
			rk = argC(inst)
		}
		return rk, true, rk < rkConstant
	}
	return 0, false, false
}

// concatOperand is the register of the operand Lua 5.1's luaV_concat
// fails on, of n operands from register first: it joins from the right,
// so it meets the rightmost operand that is neither a string nor a
// number first, and of the last two it blames the left one if both are
// wrong.
func concatOperand(L *lua.LState, base, first, n int) (reg int, named, ok bool) {
	joinable := func(r int) bool {
		t, ok := registerType(L, base+r)
		return ok && (t == "string" || t == "number")
	}
	for r := first + n - 1; r >= first; r-- {
		if joinable(r) {
			continue
		}
		if r == first+n-1 && r > first && !joinable(r-1) {
			r--
		}
		return r, true, true
	}
	return 0, false, false
}

// registerType is the Lua type name of the value in register i of L's
// stack.
func registerType(L *lua.LState, i int) (string, bool) {
	v, ok := register(L, i)
	if !ok {
		return "", false
	}
	if v.IsNil() {
		return "nil", true
	}
	switch v.Elem().Type() {
	case reflect.TypeOf(lua.LNil):
		return "nil", true
	case reflect.TypeOf(lua.LNumber(0)):
		return "number", true
	case reflect.TypeOf(lua.LString("")):
		return "string", true
	case reflect.TypeOf(lua.LTrue):
		return "boolean", true
	case reflect.TypeOf(&lua.LTable{}):
		return "table", true
	case reflect.TypeOf(&lua.LUserData{}):
		return "userdata", true
	case reflect.TypeOf(&lua.LState{}):
		return "thread", true
	}
	return "", false
}

// register is register i of L's stack, an LValue read through reflect.
func register(L *lua.LState, i int) (reflect.Value, bool) {
	reg := reflect.ValueOf(L).Elem().FieldByName("reg")
	if !reg.IsValid() || reg.IsNil() {
		return reflect.Value{}, false
	}
	arr := reg.Elem().FieldByName("array")
	if !arr.IsValid() || arr.Kind() != reflect.Slice || i < 0 || i >= arr.Len() {
		return reflect.Value{}, false
	}
	v := arr.Index(i)
	return v, v.Kind() == reflect.Interface
}

// registerNumeric reports whether the value in register i of L's stack
// is a number or a string that reads as one, as Lua's tonumber.
func registerNumeric(L *lua.LState, i int) bool {
	v, ok := register(L, i)
	if !ok || v.IsNil() {
		return false
	}
	switch v = v.Elem(); v.Type() {
	case reflect.TypeOf(lua.LNumber(0)):
		return true
	case reflect.TypeOf(lua.LString("")):
		_, err := parseLuaNumber(v.String())
		return err == nil
	}
	return false
}

// The fields of an instruction (see gopher-lua's opcode.go).
func opOf(i uint32) int  { return int(i >> 26) }
func argA(i uint32) int  { return int(i>>18) & 0xff }
func argB(i uint32) int  { return int(i & 0x1ff) }
func argC(i uint32) int  { return int(i>>9) & 0x1ff }
func argBx(i uint32) int { return int(i & 0x3ffff) }

// rkConstant is the bit of a B or C argument that makes it a constant.
const rkConstant = 1 << 8

// objName is Lua 5.1's getobjname: how the code named the value in
// register reg at instruction pc ("local", "global", "field", "upvalue",
// "method") and the name, or "" when it did not (a call's result, a
// constant). The instruction that last set the register before pc is
// found by walking back, where Lua runs its symbolic execution forward;
// they differ only where branches set the register differently.
func objName(p *lua.FunctionProto, pc, reg int) (kind, name string) {
	if n, ok := localName(p, reg, pc); ok {
		return "local", n
	}
	for i := pc - 1; i >= 0; i-- {
		inst := p.Code[i]
		if !setsRegister(inst, reg) {
			continue
		}
		switch opOf(inst) {
		case lua.OP_GETGLOBAL:
			return "global", constantName(p, argBx(inst))
		case lua.OP_MOVE, lua.OP_MOVEN:
			if b := argB(inst); b < reg {
				return objName(p, i, b)
			}
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
			return "field", rkName(p, argC(inst))
		case lua.OP_GETUPVAL:
			if b := argB(inst); b < len(p.DbgUpvalues) {
				return "upvalue", p.DbgUpvalues[b]
			}
			return "upvalue", "?"
		case lua.OP_SELF:
			if argA(inst) == reg {
				return "method", rkName(p, argC(inst))
			}
		}
		return "", ""
	}
	return "", ""
}

// localName is Lua's luaF_getlocalname: the name of the local variable
// in register reg at instruction pc, if one is there. A local is live
// from its StartPc to its EndPc, both included (gopher-lua's EndPc is the
// last instruction of its block, where Lua's endpc is the one after).
func localName(p *lua.FunctionProto, reg, pc int) (string, bool) {
	for _, l := range p.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc <= l.EndPc {
			if reg == 0 {
				return l.Name, true
			}
			reg--
		}
	}
	return "", false
}

// setsRegister reports whether inst may write register reg.
func setsRegister(inst uint32, reg int) bool {
	a := argA(inst)
	switch opOf(inst) {
	case lua.OP_SETGLOBAL, lua.OP_SETUPVAL, lua.OP_SETTABLE, lua.OP_SETTABLEKS,
		lua.OP_JMP, lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_RETURN,
		lua.OP_SETLIST, lua.OP_CLOSE, lua.OP_NOP:
		return false
	case lua.OP_LOADNIL:
		return a <= reg && reg <= argB(inst)
	case lua.OP_SELF:
		return reg == a || reg == a+1
	case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_VARARG:
		return reg >= a // their results may reach any register from A
	case lua.OP_TFORLOOP:
		return reg >= a+2
	case lua.OP_FORLOOP, lua.OP_FORPREP:
		return a <= reg && reg <= a+3
	}
	return reg == a
}

func constantName(p *lua.FunctionProto, k int) string {
	if k < len(p.Constants) {
		if s, ok := p.Constants[k].(lua.LString); ok {
			return string(s)
		}
	}
	return "?"
}

// rkName is Lua's kname: the constant string an RK argument names, or
// "?".
func rkName(p *lua.FunctionProto, rk int) string {
	if rk&rkConstant == 0 {
		return "?"
	}
	return constantName(p, rk&^rkConstant)
}
