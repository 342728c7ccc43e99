package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestKeepFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want keepConfig
		err  string
	}{
		{name: "defaults", want: keepConfig{carryTTL: 15 * time.Minute, progressTTL: 400 * 24 * time.Hour}},
		{name: "flags", args: []string{"-carry-ttl", "5m", "-progress-ttl", "720h", "-public-url", "https://locks.example.org/"},
			want: keepConfig{carryTTL: 5 * time.Minute, progressTTL: 720 * time.Hour, publicURL: "https://locks.example.org"}},
		{name: "environment", env: map[string]string{"LOCKLAB_CARRY_TTL": "30m", "LOCKLAB_PROGRESS_TTL": "48h", "LOCKLAB_PUBLIC_URL": "http://localhost:8080"},
			want: keepConfig{carryTTL: 30 * time.Minute, progressTTL: 48 * time.Hour, publicURL: "http://localhost:8080"}},
		{name: "flag wins", args: []string{"-carry-ttl", "2m"}, env: map[string]string{"LOCKLAB_CARRY_TTL": "30m"},
			want: keepConfig{carryTTL: 2 * time.Minute, progressTTL: 400 * 24 * time.Hour}},
		{name: "bad duration", env: map[string]string{"LOCKLAB_CARRY_TTL": "soon"}, err: "LOCKLAB_CARRY_TTL"},
		{name: "carry TTL too long", args: []string{"-carry-ttl", "48h"}, err: "-carry-ttl"},
		{name: "progress TTL too short", args: []string{"-progress-ttl", "1h"}, err: "-progress-ttl"},
		{name: "public URL without scheme", args: []string{"-public-url", "locks.example.org"}, err: "-public-url"},
		{name: "public URL with a query", args: []string{"-public-url", "https://a.example/?x=1"}, err: "-public-url"},
		{name: "public URL with credentials", args: []string{"-public-url", "https://u:p@a.example"}, err: "-public-url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), func(k string) string { return tt.env[k] }, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("parseFlags(%q, %v) error = %v; want one naming %s", tt.args, tt.env, err, tt.err)
				}
				return
			}
			if err != nil || cfg.keep != tt.want {
				t.Errorf("parseFlags(%q, %v) = %+v, %v; want %+v", tt.args, tt.env, cfg.keep, err, tt.want)
			}
		})
	}
}

// carryCode asks for a code through base and returns it and its link.
func (b *browser) carryCode(base string) (code, link string) {
	b.t.Helper()
	status, body := b.postJSON(base+"/api/progress/code", map[string]string{})
	var c struct {
		Code      string `json:"code"`
		Link      string `json:"link"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := json.Unmarshal([]byte(body), &c); status != 200 || err != nil || c.Code == "" {
		b.t.Fatalf("POST %s/api/progress/code = %d %s", base, status, body)
	}
	return c.Code, c.Link
}

// adopt takes code through base and returns the status and the progress
// of distributed-locks it reports.
func (b *browser) adopt(base, code string) (int, progressJSON) {
	b.t.Helper()
	status, body := b.postJSON(base+"/api/progress/carry", map[string]string{"code": code})
	var out struct {
		Progress map[string]progressJSON `json:"progress"`
	}
	_ = json.Unmarshal([]byte(body), &out)
	return status, out.Progress["distributed-locks"]
}

func (b *browser) learner(base string) string {
	b.t.Helper()
	req, _ := http.NewRequest("GET", base, nil)
	for _, c := range b.c.Jar.Cookies(req.URL) {
		if c.Name == "locklab_learner" {
			return c.Value
		}
	}
	return ""
}

// TestCarryThroughRun: with -public-url, the link names the public site;
// a code works once and gives the other browser a fresh id.
func TestCarryThroughRun(t *testing.T) {
	base, _, _ := startServer(t, map[string]string{"LOCKLAB_PUBLIC_URL": "https://locks.example.org"})
	phone, laptop, third := newBrowser(t), newBrowser(t), newBrowser(t)
	for _, br := range []*browser{phone, laptop, third} {
		br.get(base + "/") // a page first, for the CSRF cookie
	}
	if status, body := phone.postJSON(base+"/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}); status != 200 {
		t.Fatalf("answer = %d %s", status, body)
	}
	code, link := phone.carryCode(base)
	if link != "https://locks.example.org/carry/"+code {
		t.Errorf("link = %q; want it on the public URL", link)
	}
	if status, p := laptop.adopt(base, code); status != 200 || p.Right != 1 {
		t.Errorf("adopt = %d %+v; want 200 with one right", status, p)
	}
	if id := laptop.learner(base); id == "" || id == phone.learner(base) {
		t.Errorf("laptop id after adopting = %q (phone %q); want a fresh one", id, phone.learner(base))
	}
	if status, _ := third.adopt(base, code); status != 410 {
		t.Errorf("second adoption = %d; want 410", status)
	}
}
