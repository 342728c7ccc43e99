package lab

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateChallenges(t *testing.T) {
	for _, c := range Challenges() {
		if err := c.Recipe.Validate(); err != nil {
			t.Errorf("challenge %s: recipe: %v", c.ID, err)
		}
		if err := c.Fix.Validate(); err != nil {
			t.Errorf("challenge %s: fix: %v", c.ID, err)
		}
	}
	for _, r := range []Recipe{Textbook(), Fenced()} {
		if err := r.Validate(); err != nil {
			t.Errorf("Validate(%v) = %v", r, err)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	ok := []string{lineCompareDelete}
	for _, tt := range []struct {
		name   string
		r      Recipe
		part   string
		line   int
		reason string
	}{
		{"empty acquire", Recipe{Release: ok}, "", 0, "acquire needs"},
		{"empty release", Recipe{Acquire: ok}, "", 0, "release needs"},
		{"bad placeholder", Recipe{Acquire: []string{"SET {lock} {token} NX"}, Release: ok}, "acquire", 1, "unknown placeholder {lock}"},
		{"unbalanced quotes", Recipe{Acquire: []string{lineSetNXPX}, Release: []string{`EVAL "return 1 0`}}, "release", 1, "unbalanced quotes"},
		{"not allowed", Recipe{Acquire: []string{lineSetNXPX}, Release: ok, Extend: []string{"CONFIG SET maxmemory 1"}}, "extend", 1, "does not support CONFIG"},
		{"unknown command", Recipe{Acquire: []string{"SETX {key} 1"}, Release: ok}, "acquire", 1, "unknown command"},
		{"arity", Recipe{Acquire: []string{"SET {key}"}, Release: ok}, "acquire", 1, "wrong number of arguments"},
		{"blank line", Recipe{Acquire: []string{lineSetNXPX, "  "}, Release: ok}, "acquire", 2, "blank"},
		{"multi", Recipe{Acquire: []string{"MULTI", lineSetNXPX, "EXEC"}, Release: ok}, "acquire", 1, "MULTI keeps state"},
		{"repeat", Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"3 DEL {key}"}}, "release", 1, "repeat count"},
		{"too many lines", Recipe{Acquire: strings.Split(strings.Repeat("GET {key}\n", MaxLines+1), "\n")[:MaxLines+1], Release: ok}, "", 0, "at most 8"},
		{"too long", Recipe{Acquire: []string{"GET " + strings.Repeat("k", MaxLineBytes)}, Release: ok}, "acquire", 1, "longer than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			if !errors.Is(err, ErrBadRecipe) {
				t.Fatalf("Validate() = %v; want ErrBadRecipe", err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Validate() = %q; want it to say %q", err, tt.reason)
			}
			var le *LineError
			if tt.part == "" {
				return
			}
			if !errors.As(err, &le) || le.Part != tt.part || le.Line != tt.line {
				t.Errorf("Validate() = %#v; want a LineError for %s line %d", err, tt.part, tt.line)
			}
		})
	}
}

func TestLuaTablesAreNotPlaceholders(t *testing.T) {
	r := Recipe{Acquire: []string{`EVAL "local t = {} return { 1 }" 0`}, Release: []string{`EVAL "return {KEYS[1]}" 1 {key}`}}
	if err := r.Validate(); err != nil {
		t.Errorf("Validate() = %v; want nil", err)
	}
}

func TestFill(t *testing.T) {
	v := vars{key: "lock:lab", token: "c1-00ff", ttl: "2000", ttlS: "2"}
	for _, tt := range []struct{ in, want string }{
		{"SET {key} {token} NX PX {ttl}", "SET lock:lab c1-00ff NX PX 2000"},
		{"EXPIRE {key} {ttl_s}", "EXPIRE lock:lab 2"},
		{`EVAL "local t = {} return {KEYS[1]}" 1 {key}:fence`, `EVAL "local t = {} return {KEYS[1]}" 1 lock:lab:fence`},
		{"{{key}}{", "{lock:lab}{"},
		{"no braces", "no braces"},
	} {
		if got := fill(tt.in, v); got != tt.want {
			t.Errorf("fill(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
