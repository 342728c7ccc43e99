package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsFromFiles: every secret may come from a file named by
// NAME_FILE, without its final newline; both set, an unreadable, empty or
// oversized file is an error naming the variable; and replicas sharing
// Redis must be given the signing key.
func TestSecretsFromFiles(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := write("secret", "file-signing-key-0123456789\n")
	admin := write("admin", "file-admin-token-0123456789xyz\r\n")
	redisURL := write("redis", "redis://:pass@127.0.0.1:6379/0\n")
	empty := write("empty", "\n")
	big := write("big", strings.Repeat("x", maxSecretFile+1))

	cfg, err := parseFlags([]string{"locklab"}, env(map[string]string{
		"LOCKLAB_SECRET_FILE": secret, "LOCKLAB_ADMIN_TOKEN_FILE": admin, "REDIS_URL_FILE": redisURL,
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.secret != "file-signing-key-0123456789" || cfg.adminToken != "file-admin-token-0123456789xyz" || cfg.redisURL != "redis://:pass@127.0.0.1:6379/0" {
		t.Errorf("from files: secret %q, admin token %q, Redis %q", cfg.secret, cfg.adminToken, cfg.redisURL)
	}
	// The flag wins over the file.
	cfg, err = parseFlags([]string{"locklab", "-redis-url", "redis://other:6379/1"}, env(map[string]string{
		"LOCKLAB_SECRET": "env-signing-key-0123456789", "REDIS_URL_FILE": redisURL,
	}), io.Discard)
	if err != nil || cfg.redisURL != "redis://other:6379/1" || cfg.secret != "env-signing-key-0123456789" {
		t.Errorf("flag and file: %q, %q, %v", cfg.redisURL, cfg.secret, err)
	}
	for _, tt := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"both", map[string]string{"LOCKLAB_ADMIN_TOKEN": "x", "LOCKLAB_ADMIN_TOKEN_FILE": admin}, "both LOCKLAB_ADMIN_TOKEN and LOCKLAB_ADMIN_TOKEN_FILE"},
		{"missing file", map[string]string{"LOCKLAB_METRICS_TOKEN_FILE": filepath.Join(dir, "nope")}, "LOCKLAB_METRICS_TOKEN_FILE"},
		{"empty file", map[string]string{"LOCKLAB_SECRET_FILE": empty}, "is empty"},
		{"big file", map[string]string{"LOCKLAB_SECRET_FILE": big}, "longer than"},
		{"redis without secret", map[string]string{"REDIS_URL": "redis://127.0.0.1:6379/0"}, "with REDIS_URL, set LOCKLAB_SECRET"},
		{"redis file without secret", map[string]string{"REDIS_URL_FILE": redisURL}, "with REDIS_URL, set LOCKLAB_SECRET"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseFlags([]string{"locklab"}, env(tt.env), io.Discard); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseFlags = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
