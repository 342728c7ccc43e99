package main

import (
	"io"
	"strings"
	"testing"
)

// TestParseFlagsChecksSecrets checks the admin token's minimum length
// (128 bits in base64) and the other checks added with it.
func TestParseFlagsChecksSecrets(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" for no error
	}{
		{"no token", nil, nil, ""},
		{"12-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": "abcdefghijkl"}, "at least 22 characters"},
		{"21-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": strings.Repeat("a", 21)}, "at least 22 characters"},
		{"22-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": strings.Repeat("a", 22)}, ""},
		{"no participants", []string{"-max-participants", "0"}, nil, "-max-participants must be at least 1"},
		{"participants from env", nil, map[string]string{"LOCKLAB_MAX_PARTICIPANTS": "x"}, "LOCKLAB_MAX_PARTICIPANTS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(append([]string{"locklab"}, tt.args...), func(k string) string { return tt.env[k] }, io.Discard)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("parseFlags = %v; want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("parseFlags = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
