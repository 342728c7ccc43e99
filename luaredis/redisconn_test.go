package luaredis

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// redisConn is a connection to a real redis-server for the parity tests:
// it sends commands and reads whole replies, RESP2 or RESP3.
type redisConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRedis(t *testing.T, addr string) *redisConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &redisConn{t: t, c: c, r: bufio.NewReader(c)}
}

// do sends argv and returns the reply.
func (rc *redisConn) do(argv ...string) resp.Value {
	rc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(argv))
	for _, a := range argv {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := rc.c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		rc.t.Fatal(err)
	}
	if _, err := io.WriteString(rc.c, b.String()); err != nil {
		rc.t.Fatalf("send %q: %v", argv, err)
	}
	v, err := readReply(rc.r)
	if err != nil {
		rc.t.Fatalf("reply to %q: %v", argv, err)
	}
	return v
}

// readReply reads one reply. Big numbers and verbatim strings, which
// package resp does not model, are read as bulk strings.
func readReply(r *bufio.Reader) (resp.Value, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return resp.Value{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return resp.Value{}, fmt.Errorf("empty line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return resp.StatusValue(body), nil
	case '-':
		return resp.Err(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return resp.Int(n), err
	case ',':
		return resp.Value{Kind: resp.Double, Str: body}, nil
	case '(':
		return resp.Str(body), nil
	case '#':
		return resp.Value{Kind: resp.Bool, Int: boolInt(body == "t")}, nil
	case '_':
		return resp.Null(), nil
	case '$', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return resp.Value{}, err
		}
		if n < 0 {
			return resp.Null(), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return resp.Value{}, err
		}
		s := string(buf[:n])
		if line[0] == '=' {
			s = s[4:] // "txt:"
		}
		return resp.Str(s), nil
	case '*', '%', '~', '>':
		n, err := strconv.Atoi(body)
		if err != nil {
			return resp.Value{}, err
		}
		if n < 0 {
			return resp.Null(), nil
		}
		if line[0] == '%' {
			n *= 2
		}
		elems := make([]resp.Value, n)
		for i := range elems {
			if elems[i], err = readReply(r); err != nil {
				return resp.Value{}, err
			}
		}
		v := resp.Arr(elems...)
		switch line[0] {
		case '%':
			v.Kind = resp.Map
		case '~':
			v.Kind = resp.Set
		}
		return v, nil
	}
	return resp.Value{}, fmt.Errorf("unknown reply %q", line)
}

// redisCaller runs a script's commands on a real redis-server as Redis
// runs them for scripts: with its refusals of unknown commands, wrong
// arities, commands scripts may not run and writes from read-only
// scripts, which it reads from COMMAND INFO. It answers in RESP3 too
// (RESP3Caller) and looks commands up (CommandLookup).
type redisCaller struct {
	c2, c3 *redisConn
	info   map[string]resp.Value
}

func newRedisCaller(t *testing.T, addr string) *redisCaller {
	rc := &redisCaller{c2: dialRedis(t, addr), c3: dialRedis(t, addr), info: map[string]resp.Value{}}
	if v := rc.c3.do("HELLO", "3"); v.IsError() {
		t.Fatalf("HELLO 3: %v", v)
	}
	return rc
}

// command returns COMMAND INFO's entry for name, nil for an unknown one.
func (rc *redisCaller) command(name string) *resp.Value {
	name = strings.ToLower(name)
	v, ok := rc.info[name]
	if !ok {
		v = rc.c2.do("COMMAND", "INFO", name)
		rc.info[name] = v
	}
	if len(v.Elems) != 1 || v.Elems[0].Kind != resp.Array {
		return nil
	}
	return &v.Elems[0]
}

func (rc *redisCaller) check(argv []string, readOnly bool) *resp.Value {
	refuse := func(msg string) *resp.Value { v := resp.Err(msg); return &v }
	cmd := rc.command(argv[0])
	if cmd == nil {
		return refuse("ERR Unknown Redis command called from script")
	}
	if arity := cmd.Elems[1].Int; arity > 0 && int64(len(argv)) != arity || arity < 0 && int64(len(argv)) < -arity {
		return refuse("ERR Wrong number of args calling Redis command from script")
	}
	flags := map[string]bool{}
	for _, f := range cmd.Elems[2].Elems {
		flags[f.Str] = true
	}
	if flags["noscript"] {
		return refuse("ERR This Redis command is not allowed from script")
	}
	if readOnly && flags["write"] {
		return refuse("ERR Write commands are not allowed from read-only scripts.")
	}
	return nil
}

func (rc *redisCaller) Call(argv []string, readOnly bool) resp.Value {
	if v := rc.check(argv, readOnly); v != nil {
		return *v
	}
	return rc.c2.do(argv...)
}

func (rc *redisCaller) CallRESP3(argv []string, readOnly bool) resp.Value {
	if v := rc.check(argv, readOnly); v != nil {
		return *v
	}
	return rc.c3.do(argv...)
}

func (rc *redisCaller) LookupCommand(argv []string) bool {
	cmd := rc.command(argv[0])
	if cmd == nil {
		return false
	}
	if len(argv) == 1 || len(cmd.Elems) < 10 || len(cmd.Elems[9].Elems) == 0 {
		return true
	}
	want := strings.ToLower(argv[0] + "|" + argv[1])
	for _, sub := range cmd.Elems[9].Elems {
		if len(sub.Elems) > 0 && strings.ToLower(sub.Elems[0].Str) == want {
			return true
		}
	}
	return false
}
