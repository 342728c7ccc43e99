package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// TestShutdownWritesWorkshopActivity runs the server, has a participant
// run playground commands, and stops the server at once, well within the
// interval at which workshop activity is written: the shutdown must write
// it, so that the data file holds every command.
func TestShutdownWritesWorkshopActivity(t *testing.T) {
	const token = "shutdown-test-admin-token-0123"
	dataDir := t.TempDir()
	base, stderr, stop := startServer(t, map[string]string{"LOCKLAB_ADMIN_TOKEN": token, "LOCKLAB_DATA": dataDir}, "-sandbox-workers", "0")
	const csrf = "TestTokenAbcdefghijklmnopqrstuvw"
	client := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		u, _ := url.Parse(base)
		jar.SetCookies(u, []*http.Cookie{{Name: "_csrf", Value: csrf}})
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	post := func(c *http.Client, path, ctype, body string, hdr http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("X-CSRF-Token", csrf)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		resp.Body.Close()
		return resp
	}
	form := "application/x-www-form-urlencoded"
	resp := post(client(), "/admin/workshops", form, "title=Shutdown", http.Header{"Authorization": {"Bearer " + token}})
	code, ok := strings.CutPrefix(resp.Header.Get("Location"), "/admin/workshops/")
	if resp.StatusCode != http.StatusSeeOther || !ok {
		t.Fatalf("start a workshop = %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	learner := client()
	if resp := post(learner, "/join", form, "code="+code+"&nickname=Ada", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("join = %d", resp.StatusCode)
	}
	const commands = 3
	for range commands {
		if resp := post(learner, "/api/playground/exec", "application/json", `{"line":"PING","client":"A"}`, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("PING = %d", resp.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("run = %v; stderr: %s", err, stderr)
	}

	st, err := store.OpenBolt(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := workshop.New(st, workshop.Options{}).Stats(context.Background(), code, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Joined != 1 || stats.Commands != commands {
		t.Errorf("after shutdown, the data file holds %d joined, %d commands; want 1 and %d", stats.Joined, stats.Commands, commands)
	}
}
