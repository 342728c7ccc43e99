package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/store"
)

// learnerClient is a browser-like client with its own cookie jar.
type learnerClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newLearner(t *testing.T, base string) *learnerClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &learnerClient{t: t, base: base, http: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

func (l *learnerClient) do(method, path, ctype, body string) (int, string) {
	l.t.Helper()
	req, err := http.NewRequest(method, l.base+path, strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", l.csrfToken())
	}
	resp, err := l.http.Do(req)
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// csrfToken returns the learner's _csrf cookie (__Host-_csrf over TLS), asking the server for one
// first if the jar has none: what a non-browser client does.
func (l *learnerClient) csrfToken() string {
	l.t.Helper()
	u, _ := url.Parse(l.base)
	find := func() string {
		for _, c := range l.http.Jar.Cookies(u) {
			if c.Name == "_csrf" || c.Name == "__Host-_csrf" {
				return c.Value
			}
		}
		return ""
	}
	if tok := find(); tok != "" {
		return tok
	}
	resp, err := l.http.Get(l.base + "/healthz")
	if err != nil {
		l.t.Fatal(err)
	}
	resp.Body.Close()
	return find()
}

func (l *learnerClient) answer(question, choice string) (int, answerJSON, string) {
	l.t.Helper()
	code, body := l.do("POST", "/api/topics/distributed-locks/quiz/"+question, "application/json", `{"choice":"`+choice+`"}`)
	var a answerJSON
	_ = json.Unmarshal([]byte(body), &a)
	return code, a, body
}

func (l *learnerClient) quiz() quizJSON {
	l.t.Helper()
	code, body := l.do("GET", "/api/topics/distributed-locks/quiz", "", "")
	if code != 200 {
		l.t.Fatalf("GET quiz = %d %s", code, body)
	}
	var q quizJSON
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		l.t.Fatal(err)
	}
	return q
}

func TestQuizAPINeverRevealsTheAnswer(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	code, body := l.do("GET", "/api/topics/distributed-locks/quiz", "", "")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, leak := range []string{`"correct"`, `"explanation"`, `"right":true`, "Right."} {
		if strings.Contains(body, leak) {
			t.Errorf("quiz JSON reveals %q: %s", leak, body)
		}
	}
	q := l.quiz()
	if len(q.Questions) != 3 || q.Progress != (quizProgress(0, "not-started")) {
		t.Errorf("quiz = %d questions, progress %+v", len(q.Questions), q.Progress)
	}
	// Neither does the lesson page before any answer: no explanation text.
	_, page := l.do("GET", "/topics/distributed-locks", "", "")
	for _, leak := range []string{"choice-explanation", "The right answer", "late write with 33 is refused", "class=\"choice right"} {
		if strings.Contains(page, leak) {
			t.Errorf("lesson page reveals %q before an answer", leak)
		}
	}
}

func TestQuizFlowToCompleted(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)

	code, a, body := l.answer("gc-pause", "longer-ttl")
	if code != 200 || a.Correct || !strings.Contains(a.Explanation, "no TTL covers every one") || a.Progress != quizProgress(0, "in-progress") {
		t.Fatalf("wrong answer = %d %s", code, body)
	}
	for _, step := range []struct {
		q, c  string
		right int
		st    string
	}{
		{"gc-pause", "fencing", 1, "in-progress"},
		{"gc-pause", "fencing", 1, "in-progress"}, // counts once
		{"release-script", "other-holder", 2, "in-progress"},
		{"nightly-report", "efficiency", 3, "completed"},
	} {
		code, a, body = l.answer(step.q, step.c)
		if code != 200 || !a.Correct || a.Progress != quizProgress(step.right, step.st) {
			t.Fatalf("answer %s=%s: %d %s; want correct with %d right, %s", step.q, step.c, code, body, step.right, step.st)
		}
	}
	if q := l.quiz(); q.Progress != quizProgress(3, "completed") {
		t.Errorf("GET quiz progress = %+v", q.Progress)
	}
	_, page := l.do("GET", "/topics/distributed-locks", "", "")
	if !strings.Contains(page, `data-status="completed"`) || !strings.Contains(page, "All three right. You have finished this topic.") {
		t.Error("lesson page does not show Completed")
	}
	// Once solved, every choice's explanation is shown.
	if n := strings.Count(page, `class="choice-explanation"`); n != 12 {
		t.Errorf("%d explanations shown after solving all; want 12", n)
	}
	_, home := l.do("GET", "/", "", "")
	if !strings.Contains(home, `data-status="completed"`) {
		t.Error("home page does not show Completed")
	}
	// Another learner is untouched.
	if q := newLearner(t, ts.URL).quiz(); q.Progress != quizProgress(0, "not-started") {
		t.Errorf("a new learner has progress %+v", q.Progress)
	}
}

func quizProgress(right int, status string) quiz.Progress {
	return quiz.Progress{Right: right, Total: 3, Status: quiz.Status(status)}
}

func TestQuizBadInputChangesNothing(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	if code, _, _ := l.answer("gc-pause", "fencing"); code != 200 {
		t.Fatal("first answer failed")
	}
	for _, tt := range []struct {
		name, path, ctype, body string
		status                  int
		want                    string
	}{
		{"unknown topic", "/api/topics/nope/quiz/gc-pause", "application/json", `{"choice":"fencing"}`, 404, "no quiz for this topic"},
		{"unknown question", "/api/topics/distributed-locks/quiz/nope", "application/json", `{"choice":"fencing"}`, 404, "no such question"},
		{"unknown choice", "/api/topics/distributed-locks/quiz/release-script", "application/json", `{"choice":"nope"}`, 400, "no such choice"},
		{"no choice", "/api/topics/distributed-locks/quiz/release-script", "application/json", `{}`, 400, "choose one of the answers"},
		{"bad JSON", "/api/topics/distributed-locks/quiz/release-script", "application/json", `{"choice":`, 400, "malformed JSON"},
		{"unknown field", "/api/topics/distributed-locks/quiz/release-script", "application/json", `{"choice":"other-holder","x":1}`, 400, "malformed JSON"},
		{"not JSON", "/api/topics/distributed-locks/quiz/release-script", "text/plain", `choice=other-holder`, 415, "Content-Type: application/json"},
		{"unknown topic GET", "/api/topics/nope/quiz", "", "", 404, "no quiz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method := "POST"
			if tt.body == "" {
				method = "GET"
			}
			code, body := l.do(method, tt.path, tt.ctype, tt.body)
			var e apiError
			if code != tt.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
				t.Errorf("%s %s = %d %s; want %d with an error mentioning %q", method, tt.path, code, body, tt.status, tt.want)
			}
		})
	}
	if q := l.quiz(); q.Progress != quizProgress(1, "in-progress") {
		t.Errorf("after bad requests progress = %+v; want 1 right, in progress", q.Progress)
	}
}

// TestQuizWithoutJavaScript posts the plain HTML forms.
func TestQuizWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	post := func(q, choice string) (int, string) {
		return l.do("POST", "/topics/distributed-locks/quiz/"+q, "application/x-www-form-urlencoded", url.Values{"choice": {choice}}.Encode())
	}
	code, page := post("release-script", "get-then-del")
	if code != 200 || !strings.Contains(page, "Not quite.") || !strings.Contains(page, "two separate commands") {
		t.Fatalf("wrong answer page: %d, feedback missing", code)
	}
	if !regexp.MustCompile(`value="get-then-del" checked`).MatchString(page) {
		t.Error("the chosen answer is not kept selected")
	}
	code, page = post("release-script", "")
	if code != 400 || !strings.Contains(page, "Choose one of the answers first.") {
		t.Errorf("empty answer: %d, want 400 with a message", code)
	}
	code, page = post("release-script", "other-holder")
	if code != 200 || !strings.Contains(page, "<strong>Right.</strong>") || !strings.Contains(page, "1 of 3 right so far.") {
		t.Errorf("right answer page: %d, feedback or progress missing", code)
	}
	if code, _ = post("nope", "x"); code != 404 {
		t.Errorf("unknown question form = %d; want 404", code)
	}
}

// TestProgressUnavailable points the server at a Redis that is not there:
// pages still work, answering fails fast with a clear message.
func TestProgressUnavailable(t *testing.T) {
	cfg := testConfig(t)
	st, err := store.OpenRedis("redis://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg.Progress = st
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	l := newLearner(t, base)
	start := time.Now()
	code, _, body := l.answer("gc-pause", "fencing")
	if took := time.Since(start); code != 503 || !strings.Contains(body, "your progress can't be saved right now") || took > time.Second {
		t.Errorf("answer with Redis down = %d %s after %v; want 503 with the message within 1s", code, body, took)
	}
	for _, p := range []string{"/", "/topics/distributed-locks"} {
		if code, _ := l.do("GET", p, "", ""); code != 200 {
			t.Errorf("GET %s with Redis down = %d; want 200", p, code)
		}
	}
}
