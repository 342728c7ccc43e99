package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"locklab", "version"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatalf("locklab version: %v", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "locklab ") || !strings.HasSuffix(got, runtime.Version()+"\n") {
		t.Errorf("locklab version printed %q; want \"locklab VERSION, REVISION..., %s\"", got, runtime.Version())
	}
}

func TestBuildInfoString(t *testing.T) {
	for _, tt := range []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "v1.2.0", Revision: "9aa9f8e", Time: "2026-12-01T08:00:00Z", Go: "go1.26.11"}, "locklab v1.2.0, 9aa9f8e, built 2026-12-01T08:00:00Z, go1.26.11"},
		{buildInfo{Version: "(devel)", Go: "go1.26.11"}, "locklab (devel), unknown revision, go1.26.11"},
		{buildInfo{Version: "(devel)", Revision: "9aa9f8e", Modified: true, Go: "go1.26.11"}, "locklab (devel), 9aa9f8e (with uncommitted changes), go1.26.11"},
	} {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("%+v.String() = %q; want %q", tt.b, got, tt.want)
		}
	}
}
