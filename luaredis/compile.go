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

// compile parses src and compiles it into a prototype. A syntax error is
// reported as Lua 5.1 would place it ("user_script:1: ..."), though the
// wording after the position is gopher-lua's.
func compile(src, name string) (proto *lua.FunctionProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			proto, err = nil, fmt.Errorf("%s:1: %v", name, r)
		}
	}()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		var perr *parse.Error
		if errors.As(err, &perr) {
			return nil, errors.New(parseMessage(perr, src, name))
		}
		return nil, err
	}
	rewriteConcat(chunk)
	proto, err = lua.Compile(chunk, name)
	if err != nil {
		var cerr *lua.CompileError
		if errors.As(err, &cerr) {
			return nil, fmt.Errorf("%s:%d: %s", name, cerr.Line, cerr.Message)
		}
		return nil, err
	}
	return proto, nil
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

// rewriteConcat turns every a .. b .. c in the chunk into a call of the
// concatFunc global with the operands, which checks the length of the result
// before it builds it. The Lua VM's own concatenation cannot be bounded, and
// s = s .. s doubles memory on every turn of a loop.
func rewriteConcat(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewriteExpr(s.Expr)
	case *ast.DoBlockStmt:
		rewriteConcat(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteConcat(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteConcat(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteConcat(s.Then)
		rewriteConcat(s.Else)
	case *ast.NumberForStmt:
		s.Init = rewriteExpr(s.Init)
		s.Limit = rewriteExpr(s.Limit)
		s.Step = rewriteExpr(s.Step)
		rewriteConcat(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteConcat(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			s.Name.Func = rewriteExpr(s.Name.Func)
			s.Name.Receiver = rewriteExpr(s.Name.Receiver)
		}
		if s.Func != nil {
			rewriteConcat(s.Func.Stmts)
		}
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = rewriteExpr(e)
	}
}

func rewriteExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *ast.StringConcatOpExpr:
		var operands []ast.Expr
		flattenConcat(e, &operands)
		rewriteExprs(operands)
		call := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: concatFunc}, Args: operands}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		call.Func.SetLine(e.Line())
		call.Func.SetLastLine(e.LastLine())
		return call
	case *ast.AttrGetExpr:
		e.Object = rewriteExpr(e.Object)
		e.Key = rewriteExpr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key = rewriteExpr(f.Key)
			f.Value = rewriteExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func = rewriteExpr(e.Func)
		e.Receiver = rewriteExpr(e.Receiver)
		rewriteExprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.FunctionExpr:
		rewriteConcat(e.Stmts)
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
