package luaredis

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// maxReplyDepth bounds how deeply a returned Lua table may nest; a table
// that contains itself would otherwise recurse forever. Redis stops at its
// Lua stack limit with the same message.
const maxReplyDepth = 100

// maxReplyElems bounds the elements of one reply converted from Lua.
const maxReplyElems = 100_000

// maxReplyBytes bounds the string bytes of one reply converted from Lua,
// as the playground bounds every reply: a table holding the same long
// string many times costs nothing in Lua, but its reply would be copied
// whole.
const maxReplyBytes = 1 << 20

// replyCount is what a conversion has taken so far.
type replyCount struct{ elems, bytes int }

func (n *replyCount) over() bool { return n.elems > maxReplyElems || n.bytes > maxReplyBytes }

func (n *replyCount) err() resp.Value {
	if n.elems > maxReplyElems {
		return resp.Err("ERR the playground cuts script replies at 100000 elements")
	}
	return resp.Err("ERR the playground's replies stop at 1 MiB; return fewer or shorter elements from the script")
}

// toLua converts a command reply into the Lua value redis.call returns:
// integers become numbers, bulk strings strings, nil false, arrays tables,
// status replies {ok=...} and errors {err=...}. Strings are copied: a
// reply may be a piece of a value the sandbox holds (GETRANGE), which the
// script would otherwise keep whole after the sandbox dropped it.
func toLua(L *lua.LState, v resp.Value) lua.LValue {
	switch v.Kind {
	case resp.Integer:
		return lua.LNumber(v.Int)
	case resp.Bulk, resp.Double:
		return lua.LString(strings.Clone(v.Str))
	case resp.Status:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(strings.Clone(v.Str)))
		return t
	case resp.Error:
		t := L.CreateTable(0, 1)
		t.RawSetString("err", lua.LString(strings.Clone(v.Str)))
		return t
	case resp.Bool:
		return lua.LBool(v.Int != 0)
	case resp.Array, resp.Set, resp.Map:
		t := L.CreateTable(len(v.Elems), 0)
		for i, e := range v.Elems {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	}
	return lua.LFalse
}

// fromLua converts what a script returns into a reply as Redis does: a
// number is truncated to an integer, true is 1, false and nil are nil, a
// table with a string err or ok field is an error or status reply, any other
// table is an array up to its first nil, and anything else is nil.
func fromLua(v lua.LValue) resp.Value {
	var n replyCount
	return fromLuaDepth(v, 0, &n)
}

func fromLuaDepth(v lua.LValue, depth int, n *replyCount) resp.Value {
	n.elems++
	if n.over() {
		return n.err()
	}
	switch v := v.(type) {
	case lua.LString:
		n.bytes += len(v)
		if n.over() {
			return n.err()
		}
		return resp.Str(string(v))
	case lua.LNumber:
		return resp.Int(toInteger(float64(v)))
	case lua.LBool:
		if v {
			return resp.Int(1)
		}
		return resp.Null()
	case *lua.LTable:
		if depth >= maxReplyDepth {
			return resp.Err("ERR reached lua stack limit")
		}
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			return resp.Err(string(e))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return resp.StatusValue(string(s))
		}
		elems := []resp.Value{}
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			elems = append(elems, fromLuaDepth(e, depth+1, n))
			if n.over() {
				return n.err()
			}
		}
		return resp.Arr(elems...)
	}
	return resp.Null()
}
