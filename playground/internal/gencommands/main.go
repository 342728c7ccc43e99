// Command gencommands writes the playground's command table,
// commands_table.go, from the COMMAND reply of a real redis-server: each
// command's and subcommand's arity, the flags the playground acts on and
// the key positions. The playground checks lines against this table as
// Redis would, so the table follows the server it is generated from.
//
// It starts its own redis-server (on a Unix socket in a temporary
// directory, with persistence off) unless -addr names one, and is run by
// go generate in package playground:
//
//	go generate ./playground/
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gencommands:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gencommands", flag.ContinueOnError)
	out := fs.String("o", "commands_table.go", "the file to write")
	helpOut := fs.String("help-o", "commands_help.go", "the file to write redis-cli's help to")
	cli := fs.String("redis-cli", "redis-cli", "the redis-cli whose help to read")
	addr := fs.String("addr", "", "a running redis-server's host:port (default: start one)")
	bin := fs.String("redis-server", "redis-server", "the redis-server to start when -addr is empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := &redis.Options{Addr: *addr, Protocol: 2}
	var conn []string
	if host, port, err := net.SplitHostPort(*addr); err == nil {
		conn = []string{"-h", host, "-p", port}
	}
	if *addr == "" {
		sock, stop, err := startServer(ctx, *bin)
		if err != nil {
			return err
		}
		defer stop()
		opts = &redis.Options{Network: "unix", Addr: sock, Protocol: 2}
		conn = []string{"-s", sock}
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	src, names, version, err := generate(ctx, rdb)
	if err != nil {
		return err
	}
	help, err := generateHelp(ctx, *cli, conn, names, version)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		return err
	}
	return os.WriteFile(*helpOut, help, 0o644)
}

// startServer runs a redis-server on a Unix socket and returns once the
// server says it is ready to accept connections.
func startServer(ctx context.Context, bin string) (sock string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "gencommands")
	if err != nil {
		return "", nil, err
	}
	sock = filepath.Join(dir, "redis.sock")
	cmd := exec.CommandContext(ctx, bin, "--port", "0", "--unixsocket", sock,
		"--save", "", "--appendonly", "no", "--dir", dir)
	logs, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s: %w", bin, err)
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	}
	var seen bytes.Buffer
	lines := bufio.NewScanner(logs)
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "ready to accept connections") {
			go io.Copy(io.Discard, logs) // keep the pipe drained
			return sock, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("%s exited before it was ready:\n%s", bin, seen.String())
}

// flagNames maps the COMMAND flags the playground acts on to the names of
// its cmdFlags constants, in the order of their bits.
var flagNames = []struct{ redis, gosym string }{
	{"write", "flagWrite"},
	{"readonly", "flagReadOnly"},
	{"noscript", "flagNoScript"},
	{"blocking", "flagBlocking"},
	{"pubsub", "flagPubSub"},
	{"movablekeys", "flagMovableKeys"},
}

// quick declares the commands that run in microseconds in a sandbox of
// few keys, whatever the data: a command of constant cost, or of the cost
// of its own arguments in miniredis, which is not always Redis's "fast"
// (HLEN, SCARD and ZRANK sort in miniredis; SET is not "fast" in Redis
// only because of its GET option). Each maps to the most arguments, the
// command's name included, with which it stays quick: a line of many
// keys or fields costs what they are (an MGET of many long strings), and
// LPOP's or RPOP's count makes it as long as the list. A sandbox worker's
// reading goroutine runs such lines itself rather than handing them to the
// sandbox's own goroutine (see playground.ReadLine).
var quick = func() map[string]int {
	const most = 1 + 8 // the name and eight arguments: what a lesson types
	m := map[string]int{"LPOP": 2, "RPOP": 2}
	for _, name := range strings.Fields(`
		PING ECHO TIME DBSIZE
		GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX STRLEN
		INCR INCRBY DECR DECRBY INCRBYFLOAT
		DEL UNLINK EXISTS TYPE TOUCH PERSIST
		EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME
		HSET HGET HMGET HDEL HEXISTS HINCRBY HSETNX HSTRLEN
		LPUSH RPUSH LLEN LINDEX
		SADD SREM SISMEMBER
		ZADD ZREM ZSCORE ZCARD ZINCRBY
		MULTI DISCARD WATCH UNWATCH`) {
		m[name] = most
	}
	return m
}()

// entry is one command or subcommand as COMMAND describes it.
type entry struct {
	name              string // lower case; "script|load" for a subcommand
	arity             int64
	flags             []string
	first, last, step int64
}

// generate asks the server for COMMAND and formats the table; it returns
// the names of the commands too, and the server's version.
func generate(ctx context.Context, rdb *redis.Client) (src []byte, names []string, version string, err error) {
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return nil, nil, "", fmt.Errorf("INFO server: %w", err)
	}
	version = info["Server"]["redis_version"]
	if version == "" {
		return nil, nil, "", errors.New("INFO server names no redis_version")
	}
	reply, err := rdb.Do(ctx, "COMMAND").Slice()
	if err != nil {
		return nil, nil, "", fmt.Errorf("COMMAND: %w", err)
	}
	var top []entry
	subs := map[string][]entry{}
	for _, c := range reply {
		e, err := parseEntry(c)
		if err != nil {
			return nil, nil, "", err
		}
		top = append(top, e)
		// Redis 7 lists subcommands as the tenth element of a command's reply.
		if info := c.([]any); len(info) > 9 {
			sl, _ := info[9].([]any)
			for _, s := range sl {
				se, err := parseEntry(s)
				if err != nil {
					return nil, nil, "", err
				}
				subs[e.name] = append(subs[e.name], se)
			}
		}
	}
	// Redis answers in hash-table order, which changes from run to run;
	// sorting keeps the generated file stable.
	byName := func(a, b entry) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(top, byName)

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gencommands from the COMMAND reply of Redis %s. DO NOT EDIT.\n\n", version)
	b.WriteString(`package playground

// lookupCommand returns what Redis 7 says about the command name (upper
// case): its arity, flags and key positions, and how many arguments it
// may have and stay quick in a sandbox (declared by gencommands).
// Subcommands are named "SCRIPT|LOAD".
func lookupCommand(name string) (command, bool) {
	switch name {
`)
	for _, e := range top {
		writeCase(&b, e)
		sl := subs[e.name]
		slices.SortFunc(sl, byName)
		for _, s := range sl {
			writeCase(&b, s)
		}
	}
	b.WriteString("\t}\n\treturn command{}, false\n}\n")
	for _, e := range top {
		names = append(names, strings.ToUpper(e.name))
	}
	src, err = format.Source(b.Bytes())
	return src, names, version, err
}

func writeCase(b *bytes.Buffer, e entry) {
	var flags []string
	for _, f := range flagNames {
		if slices.Contains(e.flags, f.redis) {
			flags = append(flags, f.gosym)
		}
	}
	fl := "0"
	if len(flags) > 0 {
		fl = strings.Join(flags, " | ")
	}
	fmt.Fprintf(b, "\tcase %q:\n\t\treturn command{%q, %d, %s, %d, %d, %d, %d}, true\n",
		strings.ToUpper(e.name), e.name, e.arity, fl, e.first, e.last, e.step, quick[strings.ToUpper(e.name)])
}

// parseEntry reads the first six elements of a COMMAND entry: name, arity,
// flags, first key, last key, step.
func parseEntry(v any) (entry, error) {
	info, ok := v.([]any)
	if !ok || len(info) < 6 {
		return entry{}, fmt.Errorf("COMMAND entry %v: want an array of at least 6", v)
	}
	var e entry
	var okName, okArity, okFlags, okFirst, okLast, okStep bool
	var name string
	name, okName = info[0].(string)
	e.name = strings.ToLower(name)
	e.arity, okArity = info[1].(int64)
	var flags []any
	flags, okFlags = info[2].([]any)
	for _, f := range flags {
		s, _ := f.(string)
		e.flags = append(e.flags, s)
	}
	e.first, okFirst = info[3].(int64)
	e.last, okLast = info[4].(int64)
	e.step, okStep = info[5].(int64)
	if !okName || !okArity || !okFlags || !okFirst || !okLast || !okStep {
		return entry{}, fmt.Errorf("COMMAND entry %v: unexpected types", info[:6])
	}
	return e, nil
}
