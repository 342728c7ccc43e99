package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/workshop"
)

// browser is one person's browser: its cookies go to every replica, as
// they would behind a load balancer, since cookies do not depend on the
// port. It sends the CSRF cookie's value back in X-CSRF-Token, as the
// course's JavaScript does.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

// do sends a request and returns the response, with its body read.
func (b *browser) do(method, rawURL, contentType, body string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method != http.MethodGet {
		for _, c := range b.c.Jar.Cookies(req.URL) {
			if c.Name == "_csrf" {
				req.Header.Set("X-CSRF-Token", c.Value)
			}
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func (b *browser) get(rawURL string) (int, string) {
	b.t.Helper()
	resp, body := b.do(http.MethodGet, rawURL, "", "")
	return resp.StatusCode, body
}

func (b *browser) postJSON(rawURL string, v any) (int, string) {
	b.t.Helper()
	j, _ := json.Marshal(v)
	resp, body := b.do(http.MethodPost, rawURL, "application/json", string(j))
	return resp.StatusCode, body
}

func (b *browser) postForm(rawURL string, form url.Values) *http.Response {
	b.t.Helper()
	resp, _ := b.do(http.MethodPost, rawURL, "application/x-www-form-urlencoded", form.Encode())
	return resp
}

// exec runs a playground line as client A and returns its output.
func (b *browser) exec(base, line string) string {
	b.t.Helper()
	code, body := b.postJSON(base+"/api/playground/exec", map[string]string{"line": line, "client": "A"})
	var res struct {
		Output string `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil {
		b.t.Fatalf("exec %q on %s = %d %s", line, base, code, body)
	}
	return res.Output
}

// pttl runs PTTL key and returns the milliseconds.
func (b *browser) pttl(base, key string) int {
	b.t.Helper()
	out := b.exec(base, "PTTL "+key)
	n, err := strconv.Atoi(strings.TrimPrefix(out, "(integer) "))
	if err != nil {
		b.t.Fatalf("PTTL %s = %q", key, out)
	}
	return n
}

// startReplicas runs two servers on one real redis-server, as two
// replicas behind a load balancer.
func startReplicas(t *testing.T, env map[string]string) (string, string) {
	t.Helper()
	env["REDIS_URL"] = "redis://" + redistest.Start(t)
	a, _, _ := startServer(t, env)
	b, _, _ := startServer(t, env)
	return a, b
}

// TestTwoReplicasShareRedis runs two servers on one real redis-server:
// a learner's progress, playground sandbox and workshop answers follow
// them from one to the other.
func TestTwoReplicasShareRedis(t *testing.T) {
	a, b := startReplicas(t, replicaEnv())
	shareRedisJourney(t, a, b)
}

// replicaAdminToken is the instructor's token of replicaEnv.
const replicaAdminToken = "replica-admin-token-0123"

// replicaEnv is the environment of the replicas of a journey: an
// instructor's token, and a rate limit that lets 100 lines through at
// once.
func replicaEnv() map[string]string {
	return map[string]string{"LOCKLAB_ADMIN_TOKEN": replicaAdminToken, "LOCKLAB_RATE_LIMIT": "1000"}
}

// shareRedisJourney takes learners and an instructor through replicas a
// and b, which share a Redis: progress, carry codes, the playground, the
// lab and a workshop with a poll, each step on one replica seen on the
// other.
func shareRedisJourney(t *testing.T, a, b string) {
	const adminToken = replicaAdminToken
	t.Run("progress", func(t *testing.T) {
		code, learner, body := answerAs(t, a, "", "gc-pause", "fencing")
		if code != 200 {
			t.Fatalf("answer through A = %d %s", code, body)
		}
		if p := progressOf(t, b, learner); p.Right != 1 || p.Status != "in-progress" {
			t.Errorf("progress through B = %+v; want 1 right, in progress", p)
		}
	})

	t.Run("carry", func(t *testing.T) {
		phone, laptop, third := newBrowser(t), newBrowser(t), newBrowser(t)
		for _, br := range []*browser{phone, laptop, third} {
			br.get(a + "/") // a page first, for the CSRF cookie
		}
		if status, body := phone.postJSON(a+"/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}); status != 200 {
			t.Fatalf("answer through A = %d %s", status, body)
		}
		// A code made on A is the live code on B too, and works there.
		code, _ := phone.carryCode(a)
		if again, _ := phone.carryCode(b); again != code {
			t.Errorf("code asked again through B = %q; want A's live code %q", again, code)
		}
		if status, body := laptop.postJSON(b+"/api/topics/distributed-locks/quiz/release-script", map[string]string{"choice": "other-holder"}); status != 200 {
			t.Fatalf("laptop answer through B = %d %s", status, body)
		}
		if status, p := laptop.adopt(b, strings.ToLower(code)); status != 200 || p.Right != 2 {
			t.Errorf("adopt through B = %d %+v; want 200 with both answers", status, p)
		}
		if p := progressOf(t, a, laptop.learner(a)); p.Right != 2 {
			t.Errorf("laptop's progress through A = %+v; want the merged two", p)
		}
		// Used on B, so refused on A.
		if status, _ := third.adopt(a, code); status != 410 {
			t.Errorf("second adoption through A = %d; want 410", status)
		}
	})

	t.Run("playground", func(t *testing.T) {
		br := newBrowser(t)
		br.get(a + "/playground")
		if out := br.exec(a, "SET lock:1 tok NX PX 30000"); out != "OK" {
			t.Fatalf("SET on A = %q", out)
		}
		if out := br.exec(b, "GET lock:1"); out != `"tok"` {
			t.Errorf("GET on B = %q; want \"tok\"", out)
		}
		if ms := br.pttl(b, "lock:1"); ms <= 0 || ms > 30000 {
			t.Errorf("PTTL on B = %d; want the TTL running from 30000", ms)
		}
		// The clock moved on A is B's clock too: the TTL ran on, not
		// reset.
		if code, body := br.postJSON(a+"/api/playground/advance", map[string]int{"ms": 10000}); code != 200 {
			t.Fatalf("advance on A = %d %s", code, body)
		}
		if ms := br.pttl(b, "lock:1"); ms <= 0 || ms > 20000 {
			t.Errorf("PTTL on B after A moved the clock 10s = %d; want at most 20000", ms)
		}
		if code, body := br.get(b + "/api/playground/keys"); code != 200 || !strings.Contains(body, `"lock:1"`) {
			t.Errorf("keys on B = %d %s; want lock:1", code, body)
		}
		if code, body := br.postJSON(b+"/api/playground/reset", map[string]any{}); code != 200 {
			t.Fatalf("reset on B = %d %s", code, body)
		}
		if out := br.exec(a, "GET lock:1"); out != "(nil)" {
			t.Errorf("GET on A after a reset on B = %q; want (nil)", out)
		}
		// Lines alternating between the replicas, as a load balancer
		// without sticky sessions sends them: every write is there for
		// the next line, whichever replica takes it.
		for i := 1; i <= 100; i++ {
			base := []string{a, b}[i%2]
			if out, want := br.exec(base, "INCR n"), fmt.Sprintf("(integer) %d", i); out != want {
				t.Fatalf("INCR #%d = %q; want %q", i, out, want)
			}
		}
		if out := br.exec(a, "SET lock:2 tok NX PX 30000"); out != "OK" {
			t.Fatalf("SET on A = %q", out)
		}
		if out := br.exec(b, `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0" 1 lock:2 tok`); out != "(integer) 1" {
			t.Errorf("release on B = %q; want (integer) 1", out)
		}
		if out := br.exec(a, "SET lock:2 other NX PX 30000"); out != "OK" {
			t.Errorf("SET on A right after the release on B = %q; want OK, the lock free", out)
		}
	})

	t.Run("workshop", func(t *testing.T) {
		admin := signedInAdmin(t, a, adminToken)
		code := startWorkshop(t, admin, a, "Replicas")
		learner := joined(t, b, code, "ada")
		if code, body := learner.postJSON(b+"/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}); code != 200 {
			t.Fatalf("answer on B = %d %s", code, body)
		}

		// B writes its participants' activity in batches, at most
		// workshop.DefaultFlushEvery apart: A sees the answer within that
		// (and a tick of B's writer), not at once.
		deadline := time.Now().Add(3*workshop.DefaultFlushEvery + 2*time.Second)
		for {
			status, body := admin.get(a + "/admin/workshops/" + code + "/export.csv")
			rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if status != 200 || err != nil || len(rows) != 2 {
				t.Fatalf("CSV on A = %d, %v:\n%s\nwant a header and ada's row", status, err, body)
			}
			got := map[string]string{}
			for i, col := range rows[0] {
				got[col] = rows[1][i]
			}
			if got["nickname"] == "ada" && got["answers"] == "1" && got["first_try_right"] == "1" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CSV on A = %v after %v; want ada with 1 answer, right on the first try", got, 3*workshop.DefaultFlushEvery+2*time.Second)
			}
			time.Sleep(250 * time.Millisecond)
		}
	})

	t.Run("lab", func(t *testing.T) {
		br := newBrowser(t)
		br.get(a + "/lab")
		ch, err := lab.ChallengeByID("plain-del")
		if err != nil {
			t.Fatal(err)
		}
		fix := map[string]any{"acquire": ch.Fix.Acquire, "release": ch.Fix.Release, "extend": []string{}, "fencing": ch.Fix.Fencing}
		code, body := br.postJSON(a+"/api/lab/check", map[string]any{"recipe": fix, "challenge": ch.ID})
		if code != 200 || !strings.Contains(body, `"just_solved":true`) {
			t.Fatalf("solve %s on A = %d %.300s", ch.ID, code, body)
		}
		code, body = br.get(b + "/api/lab/challenges")
		var chs []struct {
			ID     string `json:"id"`
			Solved bool   `json:"solved"`
		}
		if err := json.Unmarshal([]byte(body), &chs); code != 200 || err != nil {
			t.Fatalf("challenges on B = %d %s", code, body)
		}
		for _, c := range chs {
			if c.Solved != (c.ID == ch.ID) {
				t.Errorf("challenge %s on B: solved = %v; want only %s solved, on A", c.ID, c.Solved, ch.ID)
			}
		}
	})

	t.Run("poll", func(t *testing.T) {
		admin := signedInAdmin(t, a, adminToken)
		code := startWorkshop(t, admin, a, "Poll across replicas")
		status, body := admin.postJSON(a+"/admin/workshops/"+code+"/polls", map[string]string{"scenario": "gc-pause"})
		var opened struct{ ID string }
		if err := json.Unmarshal([]byte(body), &opened); status != http.StatusCreated || err != nil {
			t.Fatalf("open a poll on A = %d %s", status, body)
		}
		for i, nick := range []string{"ada", "bo", "cy"} {
			l := joined(t, []string{a, b}[i%2], code, nick)
			if status, body := l.postJSON([]string{b, a}[i%2]+"/api/workshop/poll/"+opened.ID+"/predict", map[string][]string{"prediction": {"safe"}}); status != 200 {
				t.Fatalf("%s predicts on the other replica = %d %s", nick, status, body)
			}
		}
		var res struct {
			Answered, Joined int
			Counts           map[string]int
		}
		status, body = admin.get(b + "/admin/workshops/" + code + "/polls/" + opened.ID)
		if err := json.Unmarshal([]byte(body), &res); status != 200 || err != nil {
			t.Fatalf("poll on B = %d %s", status, body)
		}
		if res.Answered != 3 || res.Joined != 3 || res.Counts["safe"] != 3 {
			t.Errorf("poll on B = %+v; want 3 joined, 3 answered, 3 for safe", res)
		}
	})
}

// TestTwoReplicasShareRateLimits: with LOCKLAB_RATE_LIMIT=2 (bursts of
// 4), a learner whose writes are spread over two replicas meets one
// limit, not one per replica.
func TestTwoReplicasShareRateLimits(t *testing.T) {
	a, b := startReplicas(t, map[string]string{"LOCKLAB_RATE_LIMIT": "2"})
	br := newBrowser(t)
	br.get(a + "/playground")
	allowed, limited := 0, 0
	for i := range 8 {
		base := []string{a, b}[i%2]
		resp, body := br.do(http.MethodPost, base+"/api/playground/exec", "application/json", `{"line":"PING","client":"A"}`)
		switch resp.StatusCode {
		case 200:
			allowed++
		case 429:
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After: %s", body)
			}
		default:
			t.Fatalf("exec %d = %d %s", i, resp.StatusCode, body)
		}
	}
	// One limiter per replica would let all 8 through, 4 on each.
	if allowed > 5 || limited == 0 {
		t.Errorf("%d of 8 writes over two replicas allowed, %d limited; want a shared burst of 4 (5 with refill)", allowed, limited)
	}
}

// signedInAdmin is an instructor's browser signed in on base.
func signedInAdmin(t *testing.T, base, token string) *browser {
	t.Helper()
	admin := newBrowser(t)
	admin.get(base + "/admin")
	if resp := admin.postForm(base+"/admin/login", url.Values{"token": {token}}); resp.StatusCode != 200 {
		t.Fatalf("admin sign-in on %s = %d", base, resp.StatusCode)
	}
	return admin
}

// startWorkshop starts a workshop on base and returns its code.
func startWorkshop(t *testing.T, admin *browser, base, title string) string {
	t.Helper()
	resp := admin.postForm(base+"/admin/workshops", url.Values{"title": {title}})
	code, ok := strings.CutPrefix(resp.Request.URL.Path, "/admin/workshops/")
	if resp.StatusCode != 200 || !ok {
		t.Fatalf("start workshop on %s = %d at %s", base, resp.StatusCode, resp.Request.URL)
	}
	return code
}

// joined is a learner's browser that joined workshop code on base.
func joined(t *testing.T, base, code, nickname string) *browser {
	t.Helper()
	l := newBrowser(t)
	l.get(base + "/join/" + code)
	if resp := l.postForm(base+"/join", url.Values{"code": {code}, "nickname": {nickname}}); resp.StatusCode != 200 || resp.Request.URL.Path != "/workshop" {
		t.Fatalf("join on %s = %d at %s", base, resp.StatusCode, resp.Request.URL)
	}
	return l
}
