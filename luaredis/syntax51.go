package luaredis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// gopher-lua's parser is generated from a grammar and says "syntax error"
// for every mistake; Redis runs Lua 5.1, whose hand-written parser says
// what it expected ("'=' expected near 'error'", "'end' expected (to
// close 'if' at line 1) near '<eof>'", "unfinished string", "malformed
// number"). A learner's typo should read as it would on Redis, so every
// script is first checked by syntax51, a recognizer that follows Lua 5.1's
// lexer (llex.c) and parser (lparser.c) step for step without building
// anything, and whose errors are theirs word for word. It also refuses
// what Lua 5.1 does not have and gopher-lua takes (goto, labels). A script
// it accepts is then compiled by gopher-lua.

// syntaxError is a Lua 5.1 compile error: "user_script:LINE: MESSAGE".
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

// Lua 5.1's tokens past the single characters.
const (
	tkAnd = 257 + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

var tokenNames = [...]string{"and", "break", "do", "else", "elseif", "end", "false", "for",
	"function", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true",
	"until", "while", "..", "...", "==", ">=", "<=", "~=", "<number>", "<name>", "<string>", "<eof>"}

var keywords = func() map[string]int {
	m := map[string]int{}
	for i := tkAnd; i <= tkWhile; i++ {
		m[tokenNames[i-tkAnd]] = i
	}
	return m
}()

// maxSyntaxLevels is Lua 5.1's LUAI_MAXCCALLS, which bounds the nesting
// of blocks and expressions while parsing.
const maxSyntaxLevels = 200

type luaToken struct {
	t    int
	text string // the token as written, for "near '...'"
}

// syntax51 is one check of a chunk.
type syntax51 struct {
	src       string
	name      string
	pos       int
	line      int // ls->linenumber: the line the lexer is on
	lastLine  int // the line of the last token taken
	tok       luaToken
	ahead     luaToken
	hasAhead  bool
	levels    int
	varargs   []bool // per function: whether it takes ...
	loopDepth []int  // per function: how many loops enclose the point read
	// lastAssignable tells whether the expression primaryExp read last
	// can be assigned to.
	lastAssignable bool
	hex            []hexNumber
}

// checkSyntax51 returns Lua 5.1's error for src, or nil when Lua 5.1 would
// compile it.
func checkSyntax51(src, name string) error {
	_, err := lua51Source(src, name)
	return err
}

// lua51Source checks src as checkSyntax51 does and returns it as
// gopher-lua should read it: with each hexadecimal number written in
// decimal, as Lua 5.1 reads those with strtod (0x1p4 is 16,
// 0xffffffffffffffff is 2^64), which gopher-lua does not. The lines stay
// where they were.
func lua51Source(src, name string) (out string, err error) {
	p := &syntax51{src: src, name: name, line: 1}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*syntaxError)
			if !ok {
				panic(r)
			}
			out, err = "", e
		}
	}()
	p.varargs = []bool{true}
	p.loopDepth = []int{0}
	p.next()
	p.chunk()
	p.check(tkEOS)
	if len(p.hex) == 0 {
		return src, nil
	}
	var b strings.Builder
	last := 0
	for _, h := range p.hex {
		b.WriteString(src[last:h.start])
		b.WriteString(h.text)
		last = h.end
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// hexNumber is a hexadecimal number of the source and its decimal form.
type hexNumber struct {
	start, end int
	text       string
}

func (p *syntax51) fail(msg string) {
	panic(&syntaxError{fmt.Sprintf("%s:%d: %s", p.name, p.line, msg)})
}

// lexError is luaX_lexerror: the message, and near what.
func (p *syntax51) lexError(msg string, t int, text string) {
	if t != 0 {
		msg = fmt.Sprintf("%s near '%s'", msg, p.tokenText(t, text))
	}
	p.fail(msg)
}

func (p *syntax51) tokenText(t int, text string) string {
	switch t {
	case tkName, tkString, tkNumber:
		return text
	}
	return tokenString(t)
}

// tokenString is luaX_token2str.
func tokenString(t int) string {
	if t < 257 {
		if t < 32 || t == 127 {
			return fmt.Sprintf("char(%d)", t)
		}
		return string([]byte{byte(t)})
	}
	return tokenNames[t-257]
}

// syntaxErr is luaX_syntaxerror: the message near the current token.
func (p *syntax51) syntaxErr(msg string) {
	p.lexError(msg, p.tok.t, p.tok.text)
}

// Lexer.

func (p *syntax51) cur() int {
	if p.pos < len(p.src) {
		return int(p.src[p.pos])
	}
	return -1
}

func (p *syntax51) peek(off int) int {
	if p.pos+off < len(p.src) {
		return int(p.src[p.pos+off])
	}
	return -1
}

func isNewline(c int) bool { return c == '\n' || c == '\r' }

// newline skips \n, \r, \r\n or \n\r as one line break.
func (p *syntax51) newline() {
	old := p.cur()
	p.pos++
	if c := p.cur(); isNewline(c) && c != old {
		p.pos++
	}
	p.line++
}

func (p *syntax51) next() {
	p.lastLine = p.line
	if p.hasAhead {
		p.tok, p.hasAhead = p.ahead, false
		return
	}
	p.tok = p.lex()
}

func (p *syntax51) lookahead() luaToken {
	if !p.hasAhead {
		p.ahead, p.hasAhead = p.lex(), true
	}
	return p.ahead
}

func isAlpha(c int) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c int) bool { return isAlpha(c) || '0' <= c && c <= '9' }
func isD(c int) bool     { return '0' <= c && c <= '9' }

func (p *syntax51) lex() luaToken {
	for {
		c := p.cur()
		switch {
		case c < 0:
			return luaToken{t: tkEOS}
		case isNewline(c):
			p.newline()
		case c == ' ' || c == '\t' || c == '\f' || c == '\v':
			p.pos++
		case c == '-':
			if p.peek(1) != '-' {
				p.pos++
				return luaToken{t: '-'}
			}
			p.pos += 2
			if p.cur() == '[' {
				start := p.pos
				if sep := p.skipSep(); sep >= 0 {
					p.longString(sep, start, true)
					continue
				}
				p.pos = start
			}
			for p.cur() >= 0 && !isNewline(p.cur()) {
				p.pos++
			}
		case c == '[':
			start := p.pos
			sep := p.skipSep()
			if sep >= 0 {
				return luaToken{t: tkString, text: p.longString(sep, start, false)}
			}
			if sep != -1 {
				p.lexError("invalid long string delimiter", tkString, p.src[start:p.pos])
			}
			return luaToken{t: '['}
		case c == '=' || c == '<' || c == '>' || c == '~':
			p.pos++
			if p.cur() != '=' {
				return luaToken{t: c}
			}
			p.pos++
			return luaToken{t: map[int]int{'=': tkEq, '<': tkLe, '>': tkGe, '~': tkNe}[c]}
		case c == '"' || c == '\'':
			return p.str(c)
		case c == '.':
			start := p.pos
			p.pos++
			if p.cur() == '.' {
				p.pos++
				if p.cur() == '.' {
					p.pos++
					return luaToken{t: tkDots}
				}
				return luaToken{t: tkConcat}
			}
			if !isD(p.cur()) {
				return luaToken{t: '.'}
			}
			p.pos = start
			return p.numeral()
		case isD(c):
			return p.numeral()
		case isAlpha(c):
			start := p.pos
			for isAlnum(p.cur()) {
				p.pos++
			}
			word := p.src[start:p.pos]
			if k, ok := keywords[word]; ok {
				return luaToken{t: k}
			}
			return luaToken{t: tkName, text: word}
		default:
			p.pos++
			return luaToken{t: c}
		}
	}
}

// skipSep reads [ or ] and the = signs after it: their count when the
// same bracket follows, else -count-1.
func (p *syntax51) skipSep() int {
	s := p.cur()
	p.pos++
	count := 0
	for p.cur() == '=' {
		p.pos++
		count++
	}
	if p.cur() == s {
		return count
	}
	return -count - 1
}

// longString reads a long string or comment whose opening bracket (at
// start) has been read up to its second [.
func (p *syntax51) longString(sep, start int, comment bool) string {
	p.pos++ // the second [
	if isNewline(p.cur()) {
		p.newline()
	}
	for {
		switch c := p.cur(); {
		case c < 0:
			what := "unfinished long string"
			if comment {
				what = "unfinished long comment"
			}
			p.lexError(what, tkEOS, "")
		case c == ']':
			if p.skipSep() == sep {
				p.pos++
				return p.src[start:p.pos]
			}
		case c == '[':
			// Redis builds Lua without LUA_COMPAT_LSTR: a nested [[ is
			// just text.
			if p.skipSep() == sep {
				p.pos++
			}
		case isNewline(c):
			p.newline()
		default:
			p.pos++
		}
	}
}

// str reads a quoted string; its text, for errors, is what Lua 5.1 keeps
// of it: the quotes and the characters with escapes decoded.
func (p *syntax51) str(del int) luaToken {
	var b strings.Builder
	b.WriteByte(byte(del))
	p.pos++
	for p.cur() != del {
		switch c := p.cur(); {
		case c < 0:
			p.lexError("unfinished string", tkEOS, "")
		case isNewline(c):
			p.lexError("unfinished string", tkString, b.String())
		case c == '\\':
			p.pos++
			e := p.cur()
			switch {
			case e < 0:
				continue
			case isNewline(e):
				b.WriteByte('\n')
				p.newline()
				continue
			case strings.IndexByte("abfnrtv", byte(e)) >= 0:
				b.WriteByte("\a\b\f\n\r\t\v"[strings.IndexByte("abfnrtv", byte(e))])
				p.pos++
			case isD(e):
				n := 0
				for i := 0; i < 3 && isD(p.cur()); i++ {
					n = n*10 + p.cur() - '0'
					p.pos++
				}
				if n > 255 {
					p.lexError("escape sequence too large", tkString, b.String())
				}
				b.WriteByte(byte(n))
			default:
				b.WriteByte(byte(e))
				p.pos++
			}
		default:
			b.WriteByte(byte(c))
			p.pos++
		}
	}
	p.pos++
	b.WriteByte(byte(del))
	return luaToken{t: tkString, text: b.String()}
}

// numeral reads a number as llex's read_numeral does: digits and points,
// an exponent sign after E, then any letters, digits and underscores; the
// whole must then read as a number.
func (p *syntax51) numeral() luaToken {
	start := p.pos
	for isD(p.cur()) || p.cur() == '.' {
		p.pos++
	}
	if c := p.cur(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.cur(); c == '+' || c == '-' {
			p.pos++
		}
	}
	for isAlnum(p.cur()) {
		p.pos++
	}
	text := p.src[start:p.pos]
	if !luaStr2d(text) {
		p.lexError("malformed number", tkNumber, text)
	}
	if strings.ContainsAny(text, "xX") {
		f, _ := strtodPrefix(text)
		dec := " (1/0) "
		if !math.IsInf(f, 0) {
			dec = " " + strconv.FormatFloat(f, 'g', 17, 64) + " " // spaces: 0x10..x stays two tokens
		}
		p.hex = append(p.hex, hexNumber{start, p.pos, dec})
	}
	return luaToken{t: tkNumber, text: text}
}

// luaStr2d is Lua 5.1's luaO_str2d: strtod over the whole text, or a
// hexadecimal integer (strtoul) when strtod stops at an x.
func luaStr2d(s string) bool {
	_, n := strtodPrefix(s)
	if n == 0 {
		return false
	}
	if n < len(s) && (s[n] == 'x' || s[n] == 'X') {
		hex := s[n+1:]
		if hex == "" {
			return false
		}
		_, err := strconv.ParseUint(hex, 16, 64)
		return err == nil || err.(*strconv.NumError).Err == strconv.ErrRange
	}
	return n == len(s)
}

// Parser.

func (p *syntax51) enter() {
	p.levels++
	if p.levels > maxSyntaxLevels {
		p.lexError("chunk has too many syntax levels", 0, "")
	}
}

func (p *syntax51) leave() { p.levels-- }

func (p *syntax51) testNext(t int) bool {
	if p.tok.t == t {
		p.next()
		return true
	}
	return false
}

func (p *syntax51) check(t int) {
	if p.tok.t != t {
		p.syntaxErr(fmt.Sprintf("'%s' expected", tokenString(t)))
	}
}

func (p *syntax51) checkNext(t int) {
	p.check(t)
	p.next()
}

func (p *syntax51) checkMatch(what, who, where int) {
	if p.testNext(what) {
		return
	}
	if where == p.line {
		p.check(what)
	}
	p.syntaxErr(fmt.Sprintf("'%s' expected (to close '%s' at line %d)", tokenString(what), tokenString(who), where))
}

func (p *syntax51) checkName() {
	p.check(tkName)
	p.next()
}

func blockFollow(t int) bool {
	return t == tkElse || t == tkElseif || t == tkEnd || t == tkUntil || t == tkEOS
}

func (p *syntax51) chunk() {
	p.enter()
	last := false
	for !last && !blockFollow(p.tok.t) {
		last = p.statement()
		p.testNext(';')
	}
	p.leave()
}

// block runs a chunk, inside a loop when loop is set.
func (p *syntax51) block(loop bool) {
	d := len(p.loopDepth) - 1
	if loop {
		p.loopDepth[d]++
	}
	p.chunk()
	if loop {
		p.loopDepth[d]--
	}
}

func (p *syntax51) statement() bool {
	line := p.line
	switch p.tok.t {
	case tkIf:
		p.testThenBlock()
		for p.tok.t == tkElseif {
			p.testThenBlock()
		}
		if p.testNext(tkElse) {
			p.block(false)
		}
		p.checkMatch(tkEnd, tkIf, line)
	case tkWhile:
		p.next()
		p.expr()
		p.checkNext(tkDo)
		p.block(true)
		p.checkMatch(tkEnd, tkWhile, line)
	case tkDo:
		p.next()
		p.block(false)
		p.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		p.next()
		p.checkName()
		switch p.tok.t {
		case '=':
			p.next()
			p.expr()
			p.checkNext(',')
			p.expr()
			if p.testNext(',') {
				p.expr()
			}
		case ',', tkIn:
			for p.testNext(',') {
				p.checkName()
			}
			p.checkNext(tkIn)
			p.exprList()
		default:
			p.syntaxErr("'=' or 'in' expected")
		}
		p.checkNext(tkDo)
		p.block(true)
		p.checkMatch(tkEnd, tkFor, line)
	case tkRepeat:
		p.next()
		p.block(true)
		p.checkMatch(tkUntil, tkRepeat, line)
		p.expr()
	case tkFunction:
		p.next()
		p.checkName()
		for p.tok.t == '.' {
			p.next()
			p.checkName()
		}
		if p.testNext(':') {
			p.checkName()
		}
		p.body(line)
	case tkLocal:
		p.next()
		if p.testNext(tkFunction) {
			p.checkName()
			p.body(p.line)
			return false
		}
		for {
			p.checkName()
			if !p.testNext(',') {
				break
			}
		}
		if p.testNext('=') {
			p.exprList()
		}
	case tkReturn:
		p.next()
		if !blockFollow(p.tok.t) && p.tok.t != ';' {
			p.exprList()
		}
		return true
	case tkBreak:
		p.next()
		if p.loopDepth[len(p.loopDepth)-1] == 0 {
			p.syntaxErr("no loop to break")
		}
		return true
	default:
		if !p.primaryExp() {
			p.assignment(p.lastAssignable)
		}
	}
	return false
}

func (p *syntax51) testThenBlock() {
	p.next()
	p.expr()
	p.checkNext(tkThen)
	p.block(false)
}

// assignment reads the rest of an assignment whose first target has been
// read; assignable says whether that target can be assigned to.
func (p *syntax51) assignment(assignable bool) {
	if !assignable {
		p.syntaxErr("syntax error")
	}
	if p.testNext(',') {
		p.enter()
		call := p.primaryExp()
		p.assignment(!call && p.lastAssignable)
		p.leave()
		return
	}
	p.checkNext('=')
	p.exprList()
}

func (p *syntax51) body(line int) {
	p.checkNext('(')
	vararg := false
	if p.tok.t != ')' {
		for {
			switch p.tok.t {
			case tkName:
				p.next()
			case tkDots:
				p.next()
				vararg = true
			default:
				p.syntaxErr("<name> or '...' expected")
			}
			if vararg || !p.testNext(',') {
				break
			}
		}
	}
	p.checkNext(')')
	p.varargs = append(p.varargs, vararg)
	p.loopDepth = append(p.loopDepth, 0)
	p.chunk()
	p.checkMatch(tkEnd, tkFunction, line)
	p.varargs = p.varargs[:len(p.varargs)-1]
	p.loopDepth = p.loopDepth[:len(p.loopDepth)-1]
}

func (p *syntax51) exprList() {
	p.expr()
	for p.testNext(',') {
		p.expr()
	}
}

func (p *syntax51) expr() { p.subExpr() }

func isBinOp(t int) bool {
	switch t {
	case '+', '-', '*', '/', '%', '^', tkConcat, tkNe, tkEq, '<', tkLe, '>', tkGe, tkAnd, tkOr:
		return true
	}
	return false
}

func (p *syntax51) subExpr() {
	p.enter()
	if t := p.tok.t; t == tkNot || t == '-' || t == '#' {
		p.next()
		p.subExpr()
	} else {
		p.simpleExp()
	}
	for isBinOp(p.tok.t) {
		p.next()
		p.subExpr()
	}
	p.leave()
}

func (p *syntax51) simpleExp() {
	switch p.tok.t {
	case tkNumber, tkString, tkNil, tkTrue, tkFalse:
		p.next()
	case tkDots:
		if !p.varargs[len(p.varargs)-1] {
			p.syntaxErr("cannot use '...' outside a vararg function")
		}
		p.next()
	case '{':
		p.constructor()
	case tkFunction:
		p.next()
		p.body(p.line)
	default:
		p.primaryExp()
	}
}

// primaryExp reads a prefix expression and its suffixes, and reports
// whether it ended in a call; lastAssignable tells whether it can be
// assigned to (a name, or an indexing, last).
func (p *syntax51) primaryExp() (call bool) {
	switch p.tok.t {
	case '(':
		line := p.line
		p.next()
		p.expr()
		p.checkMatch(')', '(', line)
		p.lastAssignable = false
	case tkName:
		p.next()
		p.lastAssignable = true
	default:
		p.syntaxErr("unexpected symbol")
	}
	for {
		switch p.tok.t {
		case '.':
			p.next()
			p.checkName()
			call, p.lastAssignable = false, true
		case '[':
			p.next()
			p.expr()
			p.checkNext(']')
			call, p.lastAssignable = false, true
		case ':':
			p.next()
			p.checkName()
			p.funcArgs()
			call, p.lastAssignable = true, false
		case '(', tkString, '{':
			p.funcArgs()
			call, p.lastAssignable = true, false
		default:
			return call
		}
	}
}

func (p *syntax51) funcArgs() {
	line := p.line
	switch p.tok.t {
	case '(':
		if line != p.lastLine {
			p.syntaxErr("ambiguous syntax (function call x new statement)")
		}
		p.next()
		if p.tok.t != ')' {
			p.exprList()
		}
		p.checkMatch(')', '(', line)
	case '{':
		p.constructor()
	case tkString:
		p.next()
	default:
		p.syntaxErr("function arguments expected")
	}
}

func (p *syntax51) constructor() {
	line := p.line
	p.checkNext('{')
	for {
		if p.tok.t == '}' {
			break
		}
		switch {
		case p.tok.t == tkName && p.lookahead().t == '=':
			p.next()
			p.checkNext('=')
			p.expr()
		case p.tok.t == '[':
			p.next()
			p.expr()
			p.checkNext(']')
			p.checkNext('=')
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	p.checkMatch('}', '{', line)
}
