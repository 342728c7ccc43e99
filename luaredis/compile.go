package luaredis

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// chunkName is the name Redis 7 gives every script; errors point at
// user_script:LINE.
const chunkName = "user_script"

// concatFunc is the global that .. is compiled into; see rewriteConcat.
const concatFunc = "__playground_concat"

// compile parses src and compiles it into a prototype within the limits
// of l. A syntax error is reported as Lua 5.1 reports it (see
// syntax51.go); a script past the limits gets a *tooLargeError.
func compile(src, name string, l Limits) (proto *lua.FunctionProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			proto, err = nil, fmt.Errorf("%s:1: %v", name, r)
		}
	}()
	src, err = lua51Source(src, name)
	if err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		var perr *parse.Error
		if errors.As(err, &perr) {
			return nil, errors.New(parseMessage(perr, src, name))
		}
		return nil, err
	}
	w := rewriter{}
	w.rewriteConcat(chunk)
	// The compiler takes some 17 KB for each function before trim gives
	// most of it back: count them before compiling.
	if w.funcs+1 > l.MaxFunctions {
		return nil, tooLarge(l)
	}
	proto, err = lua.Compile(chunk, name)
	if err != nil {
		var cerr *lua.CompileError
		if errors.As(err, &cerr) {
			return nil, fmt.Errorf("%s:%d: %s", name, cerr.Line, cerr.Message)
		}
		return nil, err
	}
	if c := countProto(proto); c.funcs > l.MaxFunctions || c.constants > l.MaxConstants || c.instructions > l.MaxInstructions {
		return nil, tooLarge(l)
	}
	return proto, nil
}

// tooLargeError is a script that compiles past Limits.
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }

func tooLarge(l Limits) error {
	return &tooLargeError{fmt.Sprintf("ERR the playground compiles scripts of at most %d functions, %d constants and %d instructions, all functions together; split the script or make it smaller", l.MaxFunctions, l.MaxConstants, l.MaxInstructions)}
}

// protoCount is what a compiled script holds, all its functions together.
type protoCount struct {
	funcs, constants, instructions int
	// setTable: some instruction writes a table at a key computed as the
	// script runs (t[k] = v), which the watchdog must look at (see
	// padding.go).
	setTable bool
}

func countProto(p *lua.FunctionProto) protoCount {
	c := protoCount{funcs: 1, constants: len(p.Constants), instructions: len(p.Code)}
	for _, inst := range p.Code {
		c.setTable = c.setTable || int(inst>>26) == lua.OP_SETTABLE
	}
	for _, child := range p.FunctionPrototypes {
		cc := countProto(child)
		c.funcs += cc.funcs
		c.constants += cc.constants
		c.instructions += cc.instructions
		c.setTable = c.setTable || cc.setTable
	}
	return c
}

// protoOverhead is what a trimmed prototype takes besides its slices'
// elements: the struct, the slice headers, and the string-constant slice
// that gopher-lua keeps unexported (32 strings of room) and trim cannot
// clip.
const protoOverhead = 800

// compiledSize estimates the bytes a trimmed prototype keeps alive, for
// the budgets that count scripts. TestCompiledSizeEstimate checks it
// against the heap.
func compiledSize(p *lua.FunctionProto) int {
	n := protoBytes(p)
	for _, child := range p.FunctionPrototypes {
		n += compiledSize(child)
	}
	return n
}

// protoBytes is what one prototype keeps, without the ones nested in it.
func protoBytes(p *lua.FunctionProto) int {
	n := protoOverhead + len(p.SourceName)
	n += 4 * len(p.Code)
	n += 12 * len(p.DbgSourcePositions) // 8, and the allocator's rounding
	n += 8 * len(p.FunctionPrototypes)
	for _, c := range p.Constants {
		n += 16 // the interface
		if s, ok := c.(lua.LString); ok {
			n += 64 + len(s) // boxed string, its string-constant entry, the allocator's rounding
		} else {
			n += 8
		}
	}
	for _, l := range p.DbgLocals {
		n += 8 + 48 + len(l.Name)
	}
	for _, c := range p.DbgCalls {
		n += 24 + len(c.Name)
	}
	n += 16 * len(p.DbgUpvalues)
	return n
}

func parseMessage(e *parse.Error, src, name string) string {
	msg := strings.TrimSpace(e.Message)
	if msg == "parse error" || msg == "syntax error" {
		msg = "syntax error"
	}
	if e.Pos.Line == parse.EOF {
		return fmt.Sprintf("%s:%d: %s near '<eof>'", name, strings.Count(src, "\n")+1, msg)
	}
	return fmt.Sprintf("%s:%d: %s near '%s'", name, e.Pos.Line, msg, e.Token)
}

// rewriter rewrites a chunk (see rewriteConcat) and counts the functions
// it holds on the way.
type rewriter struct{ funcs int }

// rewriteConcat turns every a .. b .. c in the chunk into a call of the
// concatFunc global with the operands, which checks the length of the result
// before it builds it. The Lua VM's own concatenation cannot be bounded, and
// s = s .. s doubles memory on every turn of a loop.
func (w *rewriter) rewriteConcat(stmts []ast.Stmt) {
	for _, s := range stmts {
		w.rewriteStmt(s)
	}
}

func (w *rewriter) rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.rewriteExprs(s.Lhs)
		w.rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		w.rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = w.rewriteExpr(s.Expr)
	case *ast.DoBlockStmt:
		w.rewriteConcat(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = w.rewriteExpr(s.Condition)
		w.rewriteConcat(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = w.rewriteExpr(s.Condition)
		w.rewriteConcat(s.Stmts)
	case *ast.IfStmt:
		s.Condition = w.rewriteExpr(s.Condition)
		w.rewriteConcat(s.Then)
		w.rewriteConcat(s.Else)
	case *ast.NumberForStmt:
		s.Init = w.rewriteExpr(s.Init)
		s.Limit = w.rewriteExpr(s.Limit)
		s.Step = w.rewriteExpr(s.Step)
		w.rewriteConcat(s.Stmts)
	case *ast.GenericForStmt:
		w.rewriteExprs(s.Exprs)
		w.rewriteConcat(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			s.Name.Func = w.rewriteExpr(s.Name.Func)
			s.Name.Receiver = w.rewriteExpr(s.Name.Receiver)
		}
		if s.Func != nil {
			w.funcs++
			w.rewriteConcat(s.Func.Stmts)
		}
	case *ast.ReturnStmt:
		w.rewriteExprs(s.Exprs)
	}
}

func (w *rewriter) rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = w.rewriteExpr(e)
	}
}

func (w *rewriter) rewriteExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *ast.StringConcatOpExpr:
		var operands []ast.Expr
		flattenConcat(e, &operands)
		w.rewriteExprs(operands)
		call := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: concatFunc}, Args: operands}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		call.Func.SetLine(e.Line())
		call.Func.SetLastLine(e.LastLine())
		return call
	case *ast.AttrGetExpr:
		e.Object = w.rewriteExpr(e.Object)
		e.Key = w.rewriteExpr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key = w.rewriteExpr(f.Key)
			f.Value = w.rewriteExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func = w.rewriteExpr(e.Func)
		e.Receiver = w.rewriteExpr(e.Receiver)
		w.rewriteExprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs = w.rewriteExpr(e.Lhs)
		e.Rhs = w.rewriteExpr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs = w.rewriteExpr(e.Lhs)
		e.Rhs = w.rewriteExpr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs = w.rewriteExpr(e.Lhs)
		e.Rhs = w.rewriteExpr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = w.rewriteExpr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = w.rewriteExpr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = w.rewriteExpr(e.Expr)
	case *ast.FunctionExpr:
		w.funcs++
		w.rewriteConcat(e.Stmts)
	}
	return e
}

// flattenConcat collects the operands of a chain of .., which the parser
// nests (a .. (b .. c)), so that one call builds the whole string.
func flattenConcat(e ast.Expr, out *[]ast.Expr) {
	if c, ok := e.(*ast.StringConcatOpExpr); ok {
		flattenConcat(c.Lhs, out)
		flattenConcat(c.Rhs, out)
		return
	}
	*out = append(*out, e)
}
