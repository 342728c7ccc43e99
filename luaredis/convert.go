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
// status replies {ok=...} and errors {err=...}. After redis.setresp(3)
// (resp3), a null is nil, a map {map={k=v, ...}}, a set {set={e=true,
// ...}}, a double {double=n} and a boolean true or false, as Redis 7
// converts RESP3. Strings are copied: a reply may be a piece of a value
// the sandbox holds (GETRANGE), which the script would otherwise keep
// whole after the sandbox dropped it.
func toLua(L *lua.LState, v resp.Value, resp3 bool) lua.LValue {
	switch v.Kind {
	case resp.Integer:
		return lua.LNumber(v.Int)
	case resp.Bulk:
		return lua.LString(strings.Clone(v.Str))
	case resp.Double:
		if !resp3 {
			return lua.LString(strings.Clone(v.Str))
		}
		f, _ := parseLuaNumber(v.Str)
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t
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
	case resp.Map:
		if !resp3 {
			break
		}
		m := L.CreateTable(0, len(v.Elems)/2)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if k := toLua(L, v.Elems[i], resp3); k != lua.LNil {
				m.RawSet(k, toLua(L, v.Elems[i+1], resp3))
			}
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t
	case resp.Set:
		if !resp3 {
			break
		}
		m := L.CreateTable(0, len(v.Elems))
		for _, e := range v.Elems {
			if k := toLua(L, e, resp3); k != lua.LNil {
				m.RawSet(k, lua.LTrue)
			}
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", m)
		return t
	case resp.Nil:
		if resp3 {
			return lua.LNil
		}
		return lua.LFalse
	}
	if v.Kind == resp.Array || v.Kind == resp.Map || v.Kind == resp.Set {
		t := L.CreateTable(len(v.Elems), 0)
		for i, e := range v.Elems {
			t.RawSetInt(i+1, toLua(L, e, resp3))
		}
		return t
	}
	return lua.LFalse
}

// fromLua converts what a script returns into a reply as Redis 7 does
// for a RESP2 client, which every client of the playground is: a number
// is truncated to an integer, true is 1, false and nil are nil (after
// redis.setresp(3), false is 0), a table with a string err or ok field is
// an error or status reply, one with a number double field, a string
// big_number field or a verbatim_string table is a bulk string, one with
// a map or set table is an array of the map's keys and values or of the
// set's members (in the order order gives: C Lua's), and any other table
// is an array up to its first nil; anything else is nil.
func fromLua(v lua.LValue, resp3 bool, order func(*lua.LTable) []lua.LValue) resp.Value {
	c := replyConv{resp3: resp3, order: order}
	return c.conv(v, 0)
}

// replyConv is one conversion of a script's result: what it has taken so
// far, and the RESP version the script chose.
type replyConv struct {
	replyCount
	resp3 bool
	order func(*lua.LTable) []lua.LValue
}

func (c *replyConv) conv(v lua.LValue, depth int) resp.Value {
	n := &c.replyCount
	n.elems++
	if n.over() {
		return n.err()
	}
	switch v := v.(type) {
	case lua.LString:
		return c.bulk(string(v))
	case lua.LNumber:
		return resp.Int(toInteger(float64(v)))
	case lua.LBool:
		switch {
		case bool(v):
			return resp.Int(1)
		case c.resp3:
			return resp.Int(0)
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
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			return resp.Str(formatArg(float64(d)))
		}
		if b, ok := v.RawGetString("big_number").(lua.LString); ok {
			return c.bulk(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(b)))
		}
		if vs, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			if _, ok := vs.RawGetString("format").(lua.LString); ok {
				if s, ok := vs.RawGetString("string").(lua.LString); ok {
					return c.bulk(string(s))
				}
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			elems := []resp.Value{}
			for _, k := range c.order(m) {
				elems = append(elems, c.conv(k, depth+1), c.conv(m.RawGet(k), depth+1))
				if n.over() {
					return n.err()
				}
			}
			return resp.Arr(elems...)
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			elems := []resp.Value{}
			for _, k := range c.order(s) {
				elems = append(elems, c.conv(k, depth+1))
				if n.over() {
					return n.err()
				}
			}
			return resp.Arr(elems...)
		}
		elems := []resp.Value{}
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			elems = append(elems, c.conv(e, depth+1))
			if n.over() {
				return n.err()
			}
		}
		return resp.Arr(elems...)
	}
	return resp.Null()
}

// bulk is a bulk string reply, counted against the reply's bytes.
func (c *replyConv) bulk(s string) resp.Value {
	c.bytes += len(s)
	if c.over() {
		return c.err()
	}
	return resp.Str(s)
}
