// Package testenv holds helpers for tests that need programs from outside
// Go, such as redis-server or chromium. Such a test skips with a clear
// message when the program is missing, except under CI=true, where a missing
// program fails the test: CI installs everything, so a skip there would hide
// a broken setup.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// LookPath finds the first of names on PATH. If none is there the test is
// skipped, or failed under CI=true; install says how to get it.
func LookPath(t testing.TB, install string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Missing(t, "%s not found on PATH (%s)", names[0], install)
	return ""
}

// Missing skips the test with the message, or fails it under CI=true.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and a test dependency is missing: "+format, args...)
	}
	t.Skipf("skipping: "+format, args...)
}

// RepoRoot returns the directory of the module's go.mod, found by walking up
// from the working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}
