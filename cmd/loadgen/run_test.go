package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/loadgen"
)

// TestRunRefusesBeforeLoading checks the arguments run refuses before
// sending a single request.
func TestRunRefusesBeforeLoading(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		wantIs  error
	}{
		{name: "remote host", args: []string{"-url", "http://example.com:8080"}, wantIs: loadgen.ErrNotLoopback},
		{name: "remote IP", args: []string{"-url", "http://192.0.2.1"}, wantIs: loadgen.ErrNotLoopback},
		{name: "remote from the environment", env: map[string]string{"LOCKLAB_URL": "http://10.1.2.3"}, wantIs: loadgen.ErrNotLoopback},
		{name: "not http", args: []string{"-url", "redis://127.0.0.1:6379"}, wantErr: "http"},
		{name: "unknown flag", args: []string{"-nope"}, wantErr: "-nope"},
		{name: "stray argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{name: "no learners", args: []string{"-learners", "0"}, wantErr: "learners"},
		{name: "hostile over 1", args: []string{"-hostile", "2"}, wantErr: "hostile"},
		{name: "zero rate", args: []string{"-rate", "0"}, wantErr: "rate"},
		{name: "no such server process", args: []string{"-pid", "2147483647"}, wantErr: "-pid 2147483647"},
		{name: "one of the processes missing", args: []string{"-pid", "1," + "2147483647"}, wantErr: "-pid 2147483647"},
		{name: "bad pid in a list", args: []string{"-pid", "1,x"}, wantErr: `pid "x"`},
		{name: "pid listed twice", args: []string{"-pid", "1", "-pid", "1"}, wantErr: "listed twice"},
		{name: "replica listed twice", args: []string{"-url", "http://127.0.0.1:1,http://127.0.0.1:1"}, wantErr: "listed twice"},
		{name: "second replica remote", args: []string{"-url", "http://127.0.0.1:1", "-url", "http://192.0.2.1"}, wantIs: loadgen.ErrNotLoopback},
		{name: "remote replica in a list", args: []string{"-url", "http://127.0.0.1:1,http://192.0.2.1"}, wantIs: loadgen.ErrNotLoopback},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"loadgen"}, tt.args...), func(k string) string { return tt.env[k] }, &stdout, &stderr)
			switch {
			case err == nil:
				t.Fatalf("run(%q) = nil; want an error", tt.args)
			case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
				t.Fatalf("run(%q) = %v; want %v", tt.args, err, tt.wantIs)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("run(%q) = %v; want it to mention %q", tt.args, err, tt.wantErr)
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q) wrote a report: %q", tt.args, stdout.String())
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"loadgen", "-h"}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run(-h) = %v; want nil", err)
	}
	for _, flag := range []string{"-url", "-learners", "-duration", "-hostile", "-pid", "-allow-remote", "-strict"} {
		if !strings.Contains(stderr.String(), flag) {
			t.Errorf("run(-h) usage does not mention %s:\n%s", flag, stderr.String())
		}
	}
}

// TestRunStrictFailsOnErrors runs a short workshop against a server that
// answers only /healthz: the report must count the errors and say FAIL,
// and -strict must turn that into an error.
func TestRunStrictFailsOnErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok"))
			return
		}
		http.Error(w, `{"error": "broken"}`, http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, strict := range []bool{false, true} {
		args := []string{"loadgen", "-url", srv.URL, "-learners", "2", "-duration", "1s", "-rate", "10", "-ramp", "0s", "-hostile", "0", "-progress", "0"}
		if strict {
			args = append(args, "-strict")
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
		if strict && !errors.Is(err, errMissed) || !strict && err != nil {
			t.Errorf("run(%q) = %v; want errMissed only with -strict", args[1:], err)
		}
		report := stdout.String()
		for _, want := range []string{"GET /topics/{slug}", "status 500", "FAIL no errors for well-behaved learners", "\nFAIL\n"} {
			if !strings.Contains(report, want) {
				t.Errorf("report does not contain %q:\n%s", want, report)
			}
		}
	}
}

func TestListFlag(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  []string
		want []string
	}{
		{name: "default", want: []string{"http://127.0.0.1:8080"}},
		{name: "set once", set: []string{"a,b"}, want: []string{"a,b"}},
		{name: "repeated", set: []string{"a", "b,c"}, want: []string{"a", "b,c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &listFlag{values: []string{"http://127.0.0.1:8080"}}
			for _, v := range tt.set {
				if err := f.Set(v); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(f.values, tt.want) {
				t.Errorf("after Set(%q): %q; want %q (the first value replaces the default)", tt.set, f.values, tt.want)
			}
		})
	}
}
