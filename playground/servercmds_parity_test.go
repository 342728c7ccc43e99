package playground

import (
	"context"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
)

// TestParityServerCommands compares with redis-cli + Redis 7.0 the server
// commands a lock learner meets (WAIT, PUBLISH, SELECT, CLIENT SETNAME and
// GETNAME, OBJECT), the order of small integer sets, reversed ranges in
// patterns and newlines in error messages.
func TestParityServerCommands(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	b := func(line string) parityCase { return parityCase{client: ClientB, line: line} }
	diff := func(line, why, own string) parityCase {
		return parityCase{client: ClientA, line: line, differs: why, own: own}
	}
	const noDB = "a sandbox has only database 0"
	runParityCases(t, []parityCase{
		// redis-cli reads a subscription's replies in its pub/sub mode,
		// which it says it enters, and leaves at an error.
		a("SUBSCRIBE"),
		a("PSUBSCRIBE"),
		a("ssubscribe"),
		a("2 SUBSCRIBE"),
		// WAIT: no replicas, so none acknowledges.
		a("SET lock:1 tok NX PX 30000"),
		a("WAIT 0 0"),
		a("WAIT 1 10"),
		a("WAIT 0 100"),
		a("WAIT x 0"),
		a("WAIT 0 x"),
		a("WAIT 0 -1"),
		a("WAIT -1 0"),
		a("WAIT 0"),
		a("WAIT 0 0 0"),
		a(`EVAL "return redis.call('WAIT', 0, 0)" 0`),
		a("MULTI"),
		a("SET lock:2 tok"),
		a("WAIT 0 0"),
		a("EXEC"),
		// PUBLISH: nobody subscribes to a sandbox.
		a("PUBLISH lock:released lock:1"),
		a("PUBLISH ch"),
		a(`EVAL "return redis.call('PUBLISH', 'ch', 'm')" 0`),
		// SELECT: database 0 only.
		a("SELECT 0"),
		a("SELECT 16"),
		a("SELECT -1"),
		a("SELECT x"),
		a("SELECT 99999999999"),
		a("SELECT"),
		a(`EVAL "return redis.call('SELECT', 0)" 0`),
		diff("SELECT 1", noDB, "(error) ERR the playground does not support SELECT 1: "+noDB),
		// CLIENT SETNAME and GETNAME, per client.
		a("CLIENT GETNAME"),
		a("CLIENT SETNAME worker-a"),
		a("CLIENT GETNAME"),
		b("CLIENT GETNAME"),
		b("CLIENT SETNAME worker-b"),
		b("CLIENT GETNAME"),
		a("CLIENT GETNAME"),
		a(`CLIENT SETNAME "two words"`),
		a(`CLIENT SETNAME "a\nb"`),
		a("CLIENT SETNAME"),
		a("CLIENT SETNAME a b"),
		a("CLIENT GETNAME x"),
		a(`CLIENT SETNAME ""`),
		a("CLIENT GETNAME"),
		a("CLIENT FOO"),
		a("CLIENT"),
		a(`EVAL "return redis.call('CLIENT', 'GETNAME')" 0`),
		// OBJECT ENCODING, REFCOUNT and FREQ.
		a("OBJECT ENCODING nokey"),
		a("OBJECT REFCOUNT nokey"),
		a("OBJECT FREQ nokey"),
		a("SET s 12345"),
		a("OBJECT ENCODING s"),
		a("OBJECT REFCOUNT s"),
		a("OBJECT FREQ s"),
		a("SET s 123"),
		a("OBJECT REFCOUNT s"),
		a("SET s -5"),
		a("OBJECT ENCODING s"),
		a("OBJECT REFCOUNT s"),
		a("SET s 012"),
		a("OBJECT ENCODING s"),
		a("SET s 12345678901234567890"),
		a("OBJECT ENCODING s"),
		a("SET s 1234567890123456789"),
		a("OBJECT ENCODING s"),
		a("SET s hello"),
		a("OBJECT ENCODING s"),
		a("SET s 12345678901234567890123456789012345678901234"),
		a("OBJECT ENCODING s"),
		a("SET s 123456789012345678901234567890123456789012345"),
		a("OBJECT ENCODING s"),
		a("SET s 1"),
		a("APPEND s 2"),
		a("GET s"),
		a("OBJECT ENCODING s"),
		a("OBJECT REFCOUNT s"),
		a("INCR s"),
		a("OBJECT ENCODING s"),
		a("APPEND fresh 7"),
		a("OBJECT ENCODING fresh"),
		a("SETRANGE sr 0 5"),
		a("OBJECT ENCODING sr"),
		a("SETBIT sb 3 1"),
		a("OBJECT ENCODING sb"),
		a("SET sb x"),
		a("OBJECT ENCODING sb"),
		a("INCRBYFLOAT f 1.5"),
		a("OBJECT ENCODING f"),
		a("INCR ctr"),
		a("OBJECT REFCOUNT ctr"),
		a("SET big 10000"),
		a("OBJECT REFCOUNT big"),
		a("RPUSH l a b"),
		a("OBJECT ENCODING l"),
		a("HSET h f v"),
		a("OBJECT ENCODING h"),
		a("HSET hl f 12345678901234567890123456789012345678901234567890123456789012345"),
		a("OBJECT ENCODING hl"),
		a("SADD si 10 2 33 -1"),
		a("OBJECT ENCODING si"),
		a("SADD ss b a"),
		a("OBJECT ENCODING ss"),
		a("ZADD z 1 a"),
		a("OBJECT ENCODING z"),
		a("ZADD zl 1 12345678901234567890123456789012345678901234567890123456789012345"),
		a("OBJECT ENCODING zl"),
		a("OBJECT REFCOUNT h"),
		a("OBJECT ENCODING"),
		a("OBJECT ENCODING a b"),
		a("OBJECT FOO k"),
		a("OBJECT HELP"),
		a(`EVAL "return redis.call('OBJECT', 'ENCODING', 's')" 0`),
		a("MULTI"),
		a("OBJECT ENCODING s"),
		a("OBJECT REFCOUNT ctr"),
		a("EXEC"),
		// Small integer sets come back in an intset's order.
		a("SMEMBERS si"),
		a("SADD si 100 -50 7"),
		a("SMEMBERS si"),
		a("SSCAN si 0"),
		a("SADD si2 7 8 -50"),
		a("SUNION si si2"),
		a("SINTER si si2"),
		a("SDIFF si si2"),
		a(`EVAL "return redis.call('SMEMBERS', KEYS[1])" 1 si`),
		// Reversed ranges in patterns are read the right way round.
		a("FLUSHALL"),
		a("MSET hello 1 hallo 2"),
		a("KEYS h[z-b]llo"),
		a("KEYS h[b-a]llo"),
		a("KEYS h[^z-c]llo"),
		a("SCAN 0 MATCH h[z-b]llo"),
		// A newline in an unknown command's name or arguments becomes a space.
		a(`"foo\nbar" "a\nb"`),
		a(`"x\r\ny"`),
		a(`OBJECT "a\nb" k`),
		a("FLUSHALL"),
	})
}

// TestParityHashOrder compares the order of small hashes' fields, which
// Redis keeps as they were first set.
func TestParityHashOrder(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	long := "v" + strings.Repeat("x", 64)
	runParityCases(t, []parityCase{
		a("HSET h z 1 a 2 m 3"),
		a("HGETALL h"),
		a("HKEYS h"),
		a("HVALS h"),
		a("HSCAN h 0"),
		a("HSCAN h 0 MATCH [am]"),
		a("HSET h a 9 b 4"),
		a("HGETALL h"),
		a("HDEL h z"),
		a("HKEYS h"),
		a("HSET h z 0"),
		a("HKEYS h"),
		a("HSETNX h c 1"),
		a("HSETNX h a 1"),
		a("HINCRBY h y 5"),
		a("HINCRBYFLOAT h x 1.5"),
		a("HMSET h q 1 a 2"),
		a("HGETALL h"),
		a("HSET h z 1 z 2"),
		a("HKEYS h"),
		a(`EVAL "return redis.call('HGETALL', KEYS[1])" 1 h`),
		a(`EVAL "redis.call('HSET', KEYS[1], 'k2', 1, 'k1', 2) return redis.call('HKEYS', KEYS[1])" 1 hs`),
		a("RENAME h h2"),
		a("HKEYS h2"),
		a("COPY h2 h3"),
		a("HKEYS h3"),
		a("HSET h3 new 1"),
		a("HKEYS h3"),
		a("HKEYS h2"),
		a("EXPIRE h2 100"),
		a("HKEYS h2"),
		a("DEL h2"),
		a("HSET h2 b 1 a 2"),
		a("HKEYS h2"),
		a("MULTI"),
		a("HSET t y 1 x 2"),
		a("HKEYS t"),
		a("EXEC"),
		a("HSET lock:r 8c1f:1 1"),
		a("HINCRBY lock:r 8c1f:1 1"),
		a("HSET lock:r 02aa:1 1"),
		a("HGETALL lock:r"),
		a("HSET big f " + long),
		a("OBJECT ENCODING big"),
		a("HSET one b 1"),
		a("HSET one a 1"),
		a("HKEYS one"),
		a("FLUSHALL"),
		a("HSET h b 1 a 2"),
		a("HKEYS h"),
		a("FLUSHALL"),
	})
}

// TestParityCommandHelp compares "help NAME" with redis-cli's, which
// prints colour codes and carriage returns the playground's terminal does
// not show: those are taken out of redis-cli's output before comparing.
func TestParityCommandHelp(t *testing.T) {
	addr := startRedis(t)
	help := func(line string) string { return cliHelp(t, addr, line) }
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, line := range []string{
		"help SET", "help set", "HELP get", "help OBJECT", "help OBJECT ENCODING", "help object freq",
		"help CLIENT SETNAME", "help EVAL", "help SCRIPT", "help WAIT", "help PUBLISH", "help @hash",
		"help @scripting", "help @transactions", "help @nosuch", "help NOSUCH", "help SET NX", "? SET",
		"help FCALL", "help FUNCTION", "help @generic", "help HSET extra words here",
	} {
		want := help(line)
		res, _ := s.Exec(context.Background(), ClientA, line)
		if res.Output != want {
			t.Errorf("%s:\n got %q\nwant %q", line, res.Output, want)
		}
	}
}

// helpColours are the colour codes and carriage returns redis-cli prints
// in help, which the playground's terminal does not show.
var helpColours = regexp.MustCompile("\x1b\\[[0-9;]*m|\r")

// cliHelp returns what redis-cli --no-raw prints for a help line against
// the server at addr, colour codes taken out. It runs one redis-cli for
// the line, reading it from its input: redis-cli writes help through a
// buffer, after anything written around it at once.
func cliHelp(t *testing.T, addr, line string) string {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server redis-tools", "redis-cli")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-h", host, "-p", port, "--no-raw")
	cmd.Stdin = strings.NewReader(line + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("redis-cli %q: %v", line, err)
	}
	return helpColours.ReplaceAllString(strings.TrimSuffix(string(out), "\n"), "")
}
