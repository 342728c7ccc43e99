package playground

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

func TestKeyAndJumpBack(t *testing.T) {
	now := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	s, err := NewSandbox(SandboxOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok, err := s.Key("lock"); ok || err != nil {
		t.Fatalf("Key(lock) on an empty sandbox = %v, %v; want false, nil", ok, err)
	}
	if res, _ := s.Exec(context.Background(), ClientA, "SET lock t1 PX 2000"); res.Output != "OK" {
		t.Fatalf("SET = %q", res.Output)
	}
	ki, ok, err := s.Key("lock")
	if !ok || err != nil || ki.Value != `"t1"` || ki.PTTLMS != 2000 || ki.Type != "string" {
		t.Fatalf("Key(lock) = %+v, %v, %v; want t1 with 2000 ms", ki, ok, err)
	}
	if err := s.JumpBack(time.Second); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Exec(context.Background(), ClientA, "PTTL lock"); res.Output != "(integer) 3000" {
		t.Errorf("PTTL after the clock went back 1 s = %q; want (integer) 3000, as Redis keeps expiries as Unix times", res.Output)
	}
	now = now.Add(2500 * time.Millisecond)
	if _, ok, _ := s.Key("lock"); !ok {
		t.Errorf("the key expired 2.5 s later; with the clock 1 s back it has 0.5 s left")
	}
	now = now.Add(501 * time.Millisecond)
	if _, ok, _ := s.Key("lock"); ok {
		t.Errorf("the key is still there 3.001 s later")
	}
	if err := s.JumpBack(0); err == nil {
		t.Errorf("JumpBack(0) = nil; want an error")
	}
}

func TestExecArgsAsALine(t *testing.T) {
	lines, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lines.Close()
	args, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer args.Close()
	for _, tt := range []struct {
		line string
		argv []string
	}{
		{"SET k v NX PX 2000", []string{"SET", "k", "v", "NX", "PX", "2000"}},
		{"SET k w NX", []string{"SET", "k", "w", "NX"}},
		{`EVAL "return redis.call('GET', KEYS[1])" 1 k`, []string{"EVAL", "return redis.call('GET', KEYS[1])", "1", "k"}},
		{"NOPE x", []string{"NOPE", "x"}},
	} {
		want, _ := lines.Exec(context.Background(), ClientA, tt.line)
		got, _ := args.ExecArgs(context.Background(), ClientA, tt.argv)
		if got.Output != want.Output {
			t.Errorf("ExecArgs(%q) = %q; want %q, as Exec prints it", tt.argv, got.Output, want.Output)
		}
	}
}

func TestDoGivesTheReply(t *testing.T) {
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if v, err := s.Do(ctx, ClientA, []string{"SET", "k", "v", "NX", "PX", "2000"}); err != nil || v.Kind != resp.Status || v.Str != "OK" {
		t.Errorf("SET = %+v, %v; want the status OK", v, err)
	}
	if v, _ := s.Do(ctx, ClientA, []string{"SET", "k", "w", "NX"}); v.Kind != resp.Nil {
		t.Errorf("SET NX on a taken key = %+v; want nil", v)
	}
	if v, _ := s.Do(ctx, ClientA, []string{"EVAL", "return {1, 'two'}", "0"}); v.Kind != resp.Array || len(v.Elems) != 2 || v.Elems[0].Int != 1 || v.Elems[1].Str != "two" {
		t.Errorf("EVAL of a table = %+v; want [1, two]", v)
	}
	if v, err := s.Do(ctx, ClientA, []string{"CONFIG", "SET", "maxmemory", "1"}); err == nil || !v.IsError() {
		t.Errorf("CONFIG = %+v, %v; want a refusal", v, err)
	}
}

func TestEmpty(t *testing.T) {
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, line := range []string{"SET k v PX 100000000000000", `EVAL "return 1" 0`, "MULTI"} {
		if _, err := s.Exec(ctx, ClientA, line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	if _, err := s.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	before := s.Now()
	if err := s.Empty(); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"DBSIZE": "(integer) 0",
		"EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0": "(error) NOSCRIPT No matching script. Please use EVAL.",
		"PING": "PONG",
	} {
		if res, _ := s.Exec(ctx, ClientA, line); res.Output != want {
			t.Errorf("after Empty, %s = %q; want %q", line, res.Output, want)
		}
	}
	if d := before.Sub(s.Now()); d < 59*time.Minute {
		t.Errorf("after Empty the clock moved back %v; want the hour it was advanced", d)
	}
}
