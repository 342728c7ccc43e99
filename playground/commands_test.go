package playground

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestCommandTableMatchesRedis checks the generated command table against
// the COMMAND reply of a real redis-server: arity, the flags the
// playground acts on and key positions.
func TestCommandTableMatchesRedis(t *testing.T) {
	addr := startRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	reply, err := rdb.Do(context.Background(), "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	flagBits := map[string]cmdFlags{"write": flagWrite, "readonly": flagReadOnly, "noscript": flagNoScript,
		"blocking": flagBlocking, "pubsub": flagPubSub, "movablekeys": flagMovableKeys}
	for _, c := range reply {
		info := c.([]any)
		name := strings.ToUpper(info[0].(string))
		var flags cmdFlags
		for _, f := range info[2].([]any) {
			flags |= flagBits[f.(string)]
		}
		want := command{strings.ToLower(name), int(info[1].(int64)), flags, int(info[3].(int64)), int(info[4].(int64)), int(info[5].(int64)), 0}
		got, ok := lookupCommand(name)
		if !ok {
			t.Errorf("lookupCommand(%q) not found; Redis has it", name)
			continue
		}
		want.quick = got.quick // the playground's own declaration, not Redis's
		if got != want {
			t.Errorf("lookupCommand(%q) = %+v; want %+v", name, got, want)
		}
	}
}

// TestAllowedCommandsExistInMiniredis makes sure every command the
// playground lets through is one miniredis implements (or the scripting
// engine handles), and that Redis knows it. The commands are read from
// the source of allowed itself, so a command added there is checked
// without a second list to keep in step.
func TestAllowedCommandsExistInMiniredis(t *testing.T) {
	m := miniredis.NewMiniRedis()
	c, err := m.Dial()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	defer m.Close()
	names := allowedInSource(t)
	if len(names) < 100 {
		t.Fatalf("found %d commands in allowed's source; want the whole list (over 100)", len(names))
	}
	for _, name := range names {
		if !allowed(name) {
			t.Errorf("allowed(%q) = false; want true", name)
		}
		if _, ok := lookupCommand(name); !ok {
			t.Errorf("lookupCommand(%q) not found", name)
		}
		if !m.Server().IsRegisteredCommand(name) && !engineCommands[name] && !ownCommands[name] {
			t.Errorf("miniredis does not implement %s", name)
		}
	}
	// And the other way: a few that must stay out.
	for _, name := range []string{"CONFIG", "DEBUG", "SHUTDOWN", "BLPOP", "SUBSCRIBE", "MONITOR"} {
		if allowed(name) {
			t.Errorf("allowed(%q) = true; want false", name)
		}
	}
}

// allowedInSource returns the command names in the case clauses of the
// allowed function in commands.go.
func allowedInSource(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "commands.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "allowed" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				lit, ok := e.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("allowed has a case %T that is not a string literal", e)
				}
				name, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
			}
			return false
		})
	}
	return names
}

func TestLineKeys(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{`SET lock:invoice:7 3f9a1c NX PX 30000`, []string{"lock:invoice:7"}},
		{`get "a b"`, []string{"a b"}},
		{`3 INCR n`, []string{"n"}},
		{`DEL a b a`, []string{"a", "b"}},
		{`MSET a 1 b 2`, []string{"a", "b"}},
		{`MGET a b c`, []string{"a", "b", "c"}},
		{`WATCH x y`, []string{"x", "y"}},
		{`EXISTS k`, []string{"k"}},
		{`EVAL "return redis.call('del', KEYS[1])" 1 lock:invoice:7 3f9a1c`, []string{"lock:invoice:7"}},
		{`EVALSHA abc 2 a b c`, []string{"a", "b"}},
		{`EVAL "return 1" 5 a`, []string{"a"}},
		{`EVAL "return 1" 0`, []string{}},
		{`ZUNIONSTORE dst 2 a b`, []string{"dst", "a", "b"}},
		{`OBJECT IDLETIME k`, []string{"k"}},
		{`PING`, []string{}},
		{`MULTI`, []string{}},
		{`NOSUCH k`, nil},
		{`"unbalanced`, nil},
		{``, nil},
		{`0 GET k`, nil},
	} {
		if got := LineKeys(tt.line); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("LineKeys(%q) = %q; want %q", tt.line, got, tt.want)
		}
	}
}

// TestQuickIsDeclaredForAllowedCommands: the commands the table declares
// quick are commands the playground runs.
func TestQuickIsDeclaredForAllowedCommands(t *testing.T) {
	for _, name := range strings.Fields(`GET SET DEL EXPIRE PTTL LPOP HSET ZADD MULTI WATCH`) {
		if cmd, _ := lookupCommand(name); cmd.quick == 0 || !allowed(name) {
			t.Errorf("%s: quick %d, allowed %v; want quick and allowed", name, cmd.quick, allowed(name))
		}
	}
	for _, name := range strings.Fields(`EVAL EXEC KEYS SUNION LRANGE HLEN SCARD ZRANK FLUSHALL SCAN HGETALL`) {
		if cmd, _ := lookupCommand(name); cmd.quick != 0 {
			t.Errorf("%s is declared quick (%d); its cost grows with the data", name, cmd.quick)
		}
	}
}

func TestReadLineQuick(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{`SET lock:invoice:7 3f9a1c NX PX 30000`, true},
		{`set "a b" c`, true},
		{`GET k`, true},
		{`LPOP q`, true},
		{`LPOP q 100`, false},
		{`MGET a b c d e f g h`, true},
		{`MGET a b c d e f g h i`, false},
		{`GET ` + strings.Repeat("k", maxQuickLine), false},
		{`3 GET k`, false},
		{`EVAL "return 1" 0`, false},
		{`EXEC`, false},
		{`KEYS *`, false},
		{`HLEN h`, false},
		{`NOSUCH`, false},
		{`"GET`, false},
		{``, false},
	} {
		if got := ReadLine(tt.line).Quick; got != tt.want {
			t.Errorf("ReadLine(%.40q).Quick = %v; want %v", tt.line, got, tt.want)
		}
	}
}
