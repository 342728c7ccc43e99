package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// step is one request of a learner's session and what its answer must be.
type step struct {
	method string
	path   string     // with its query string
	body   any        // sent as JSON when not nil
	raw    []byte     // sent as is (as JSON) when not nil, for hostile bodies
	form   url.Values // sent as a form when not nil
	// redirect: the answer is a redirect (303 after a form), not a 2xx.
	redirect bool
	// hostile names the hostile payload; "" for an ordinary step.
	hostile string
	// check judges a 2xx answer; nil accepts any. Hostile learners skip it.
	check func(r reply) error
	// then runs after a request that went as expected and returns steps
	// to do next, before the rest of the cycle.
	then func(r reply) []step
	// inCycle marks a step of a session cycle, whose later steps expect
	// what it did. When it fails the learner starts a fresh cycle, as a
	// person would start over: a 503 on the lock's SET is one error, not
	// also an unexpected answer from each step after it that expected the
	// lock held.
	inCycle bool
}

// reply is the server's answer to one step.
type reply struct {
	status int
	body   []byte
	sent   time.Time
}

// execReply is the answer of POST /api/playground/exec.
type execReply struct {
	Client  string `json:"client"`
	Output  string `json:"output"`
	ClockMS int64  `json:"clock_ms"`
	Notice  string `json:"notice"`
}

// Slug is the lesson the simulated workshop works through.
const Slug = "distributed-locks"

// lockKey is the key the lesson's redis-cli sessions lock.
const lockKey = "lock:invoice:7"

// releaseScript is the lesson's compare-and-delete release.
const releaseScript = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 ` + lockKey + " "

// findCSS returns the path of the first style sheet under /static/ that
// page links to, or "".
func findCSS(page []byte) string {
	for rest := string(page); ; {
		i := strings.Index(rest, `"/static/`)
		if i < 0 {
			return ""
		}
		rest = rest[i+1:]
		path, _, ok := strings.Cut(rest, `"`)
		if !ok {
			return ""
		}
		if strings.HasSuffix(path, ".css") {
			return path
		}
	}
}

// cycle returns one pass through the lesson: read it, run its commands in
// the playground as A and B, watch the GC-pause race and answer the quiz.
// The sandbox is reset first, so every playground reply is known in
// advance; the learner's sandbox is private, so nobody else changes it.
func (l *learner) cycle() []step {
	n := l.cycles
	l.cycles++
	tok := fmt.Sprintf("%016x", l.rng.Uint64())
	tok2 := fmt.Sprintf("%016x", l.rng.Uint64())
	other := "other" + tok[:6]
	wantCSS := n == 0 || l.rng.IntN(10) == 0 // browsers cache the style sheet for a year
	fencing := n%2 == 0
	// Without fencing the late write gets through; with it, the storage
	// refuses it. Both runs also have two holders at once.
	outcome := "stale-write-accepted"
	if fencing {
		outcome = "stale-write-rejected"
	}

	steps := []step{
		{method: "GET", path: "/topics/" + Slug, check: expectContains(lockKey), then: func(r reply) []step {
			if css := findCSS(r.body); css != "" {
				l.cssPath = css
			}
			if wantCSS && l.cssPath != "" {
				return []step{{method: "GET", path: l.cssPath, check: expectContains("{")}}
			}
			return nil
		}},
		{method: "POST", path: "/api/playground/reset", body: struct{}{}, check: expectContains(`"ok":true`)},
		l.exec("A", "SET "+lockKey+" "+tok+" NX PX 30000", expectOutput("OK"), func(r reply) []step {
			l.lockSetAt = r.sent
			return nil
		}),
		l.exec("B", "SET "+lockKey+" "+other+" NX PX 30000", expectOutput("(nil)"), nil),
		l.exec("A", "GET "+lockKey, expectOutput(strconv.Quote(tok)), nil),
		l.exec("A", "PTTL "+lockKey, expectInteger(1, 30000), nil),
		l.exec("B", releaseScript+other, expectOutput("(integer) 0"), nil),
		{method: "GET", path: "/api/playground/keys", check: expectKeys(lockKey)},
		{method: "POST", path: "/api/playground/advance", body: map[string]int{"ms": 10000}, check: expectContains(`"clock_ms"`)},
		l.exec("A", "PTTL "+lockKey, l.expectPTTLAfterAdvance(), nil),
		l.exec("A", releaseScript+tok, expectOutput("(integer) 1"), nil),
		{method: "GET", path: "/api/playground/keys", check: expectKeys()},
		// Why the token matters: A's lock runs out, B takes it, A's late
		// release finds B's token and deletes nothing.
		l.exec("A", "SET "+lockKey+" "+tok2+" NX PX 30000", expectOutput("OK"), nil),
		{method: "POST", path: "/api/playground/advance", body: map[string]int{"ms": 31000}, check: expectContains(`"clock_ms"`)},
		l.exec("A", "PTTL "+lockKey, expectOutput("(integer) -2"), nil),
		l.exec("B", "SET "+lockKey+" "+other+" NX PX 30000", expectOutput("OK"), nil),
		l.exec("A", releaseScript+tok2, expectOutput("(integer) 0"), nil),
		l.exec("B", "GET "+lockKey, expectOutput(strconv.Quote(other)), nil),
		{method: "GET", path: "/api/race/scenarios", check: expectScenario("gc-pause")},
		{method: "GET", path: "/api/race/gc-pause?fencing=" + strconv.FormatBool(fencing), check: expectContains(`"outcome":"` + outcome + `"`)},
		{method: "GET", path: "/api/topics/" + Slug + "/quiz", check: expectQuiz("release-script", "gc-pause", "nightly-report")},
		l.answer("gc-pause", "longer-ttl", false),
		l.answer("release-script", "other-holder", true),
		l.answer("gc-pause", "fencing", true),
		l.answer("nightly-report", "efficiency", true),
		{method: "GET", path: "/healthz", check: expectBody("ok")},
	}
	for i := range steps {
		steps[i].inCycle = true
	}
	return steps
}

// exec is a playground command as client A or B.
func (l *learner) exec(client, line string, check func(reply) error, then func(reply) []step) step {
	return step{
		method: "POST", path: "/api/playground/exec",
		body:  map[string]string{"line": line, "client": client},
		check: check, then: then,
	}
}

// answer is a quiz answer and whether it is right.
func (l *learner) answer(question, choice string, correct bool) step {
	return step{
		method: "POST", path: "/api/topics/" + Slug + "/quiz/" + question,
		body: map[string]string{"choice": choice},
		check: func(r reply) error {
			var got struct {
				Correct     *bool  `json:"correct"`
				Explanation string `json:"explanation"`
			}
			if err := json.Unmarshal(r.body, &got); err != nil {
				return fmt.Errorf("decode answer: %w", err)
			}
			if got.Correct == nil || *got.Correct != correct || got.Explanation == "" {
				return fmt.Errorf("answer %s=%s: got %s; want correct=%t with an explanation", question, choice, clip(r.body), correct)
			}
			return nil
		},
	}
}

// expectPTTLAfterAdvance checks the lock's TTL after the sandbox clock
// moved 10 s: the sandbox clock also runs in real time, so the lock may
// have run out if the learner was slow.
func (l *learner) expectPTTLAfterAdvance() func(reply) error {
	return func(r reply) error {
		if r.sent.Sub(l.lockSetAt) > 18*time.Second {
			if err := expectInteger(-2, -2)(r); err == nil {
				return nil
			}
		}
		return expectInteger(1, 20000)(r)
	}
}

func decodeExec(r reply) (execReply, error) {
	var e execReply
	if err := json.Unmarshal(r.body, &e); err != nil {
		return e, fmt.Errorf("decode exec reply %s: %w", clip(r.body), err)
	}
	if e.Notice != "" {
		return e, fmt.Errorf("unexpected notice %q", e.Notice)
	}
	return e, nil
}

// expectOutput wants an exec reply with exactly this output.
func expectOutput(want string) func(reply) error {
	return func(r reply) error {
		e, err := decodeExec(r)
		if err != nil {
			return err
		}
		if e.Output != want {
			return fmt.Errorf("output %q; want %q", e.Output, want)
		}
		return nil
	}
}

// expectInteger wants an exec reply "(integer) N" with lo <= N <= hi.
func expectInteger(lo, hi int64) func(reply) error {
	return func(r reply) error {
		e, err := decodeExec(r)
		if err != nil {
			return err
		}
		s, ok := strings.CutPrefix(e.Output, "(integer) ")
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil || n < lo || n > hi {
			return fmt.Errorf("output %q; want (integer) %d..%d", e.Output, lo, hi)
		}
		return nil
	}
}

// expectKeys wants the key inspector to list exactly these keys.
func expectKeys(keys ...string) func(reply) error {
	return func(r reply) error {
		var got []struct {
			Key string `json:"key"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			return fmt.Errorf("decode keys %s: %w", clip(r.body), err)
		}
		var names []string
		for _, k := range got {
			names = append(names, k.Key)
		}
		if !slices.Equal(names, keys) {
			return fmt.Errorf("keys %q; want %q", names, keys)
		}
		return nil
	}
}

// expectScenario wants the scenario list to hold id.
func expectScenario(id string) func(reply) error {
	return func(r reply) error {
		var got []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			return fmt.Errorf("decode scenarios: %w", err)
		}
		for _, s := range got {
			if s.ID == id {
				return nil
			}
		}
		return fmt.Errorf("scenario %q missing from %s", id, clip(r.body))
	}
}

// expectQuiz wants the quiz to hold these questions, each with choices,
// and no answer key.
func expectQuiz(ids ...string) func(reply) error {
	return func(r reply) error {
		var got struct {
			Questions []struct {
				ID      string            `json:"id"`
				Choices []json.RawMessage `json:"choices"`
			} `json:"questions"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			return fmt.Errorf("decode quiz: %w", err)
		}
		if bytes.Contains(r.body, []byte(`"correct"`)) {
			return fmt.Errorf("quiz leaks its answer key: %s", clip(r.body))
		}
		var have []string
		for _, q := range got.Questions {
			if len(q.Choices) > 0 {
				have = append(have, q.ID)
			}
		}
		for _, id := range ids {
			if !slices.Contains(have, id) {
				return fmt.Errorf("quiz has questions %q; want %q among them", have, id)
			}
		}
		return nil
	}
}

func expectContains(sub string) func(reply) error {
	return func(r reply) error {
		if !bytes.Contains(r.body, []byte(sub)) {
			return fmt.Errorf("answer %s does not contain %q", clip(r.body), sub)
		}
		return nil
	}
}

func expectBody(want string) func(reply) error {
	return func(r reply) error {
		if got := strings.TrimSpace(string(r.body)); got != want {
			return fmt.Errorf("answer %q; want %q", clip(r.body), want)
		}
		return nil
	}
}

// clip shortens a body for an error message. Of an HTML page it keeps
// the text of the first alert shown on it, which says what went wrong,
// rather than the page's head.
func clip(b []byte) string {
	const n = 160
	b = bytes.TrimSpace(b)
	if alert := pageAlert(b); alert != nil {
		b = alert
	}
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// pageAlert returns the text of the first element marked role="alert"
// and not hidden on an HTML page, or nil if the page has none or that
// element's text does not come first in it.
func pageAlert(page []byte) []byte {
	if !bytes.HasPrefix(bytes.ToLower(page[:min(len(page), 15)]), []byte("<!doctype html")) {
		return nil
	}
	rest := page
	for {
		i := bytes.Index(rest, []byte(`role="alert"`))
		if i < 0 {
			return nil
		}
		tagStart := bytes.LastIndexByte(rest[:i], '<')
		end := bytes.IndexByte(rest[i:], '>')
		if tagStart < 0 || end < 0 {
			return nil
		}
		tag, text := rest[tagStart:i+end], rest[i+end+1:]
		rest = text
		if bytes.Contains(tag, []byte(" hidden")) {
			continue
		}
		if j := bytes.IndexByte(text, '<'); j >= 0 {
			text = text[:j]
		}
		if text = bytes.TrimSpace(text); len(text) == 0 {
			return nil // its words are in elements of their own
		}
		return []byte(html.UnescapeString(string(text)))
	}
}
