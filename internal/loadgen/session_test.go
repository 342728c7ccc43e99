package loadgen

import (
	"testing"
)

func TestFindCSS(t *testing.T) {
	for _, tt := range []struct {
		page, want string
	}{
		{`<link rel="icon" href="/static/favicon.svg"><link rel="stylesheet" href="/static/site.d556f3c1bd52.css">`, "/static/site.d556f3c1bd52.css"},
		{`<script src="/static/quiz.js?v=1"></script>`, ""},
		{`<a href="/static/site.css`, ""},
		{``, ""},
	} {
		if got := findCSS([]byte(tt.page)); got != tt.want {
			t.Errorf("findCSS(%q) = %q; want %q", tt.page, got, tt.want)
		}
	}
}

func TestExpectations(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check func(reply) error
		body  string
		ok    bool
	}{
		{"output matches", expectOutput("(nil)"), `{"client":"B","output":"(nil)","clock_ms":1}`, true},
		{"output differs", expectOutput("(nil)"), `{"client":"B","output":"OK","clock_ms":1}`, false},
		{"idle notice is unexpected", expectOutput("OK"), `{"output":"OK","notice":"your sandbox was reset"}`, false},
		{"not JSON", expectOutput("OK"), `<html>`, false},
		{"integer in range", expectInteger(1, 30000), `{"output":"(integer) 29804"}`, true},
		{"integer out of range", expectInteger(1, 30000), `{"output":"(integer) -2"}`, false},
		{"error is no integer", expectInteger(1, 30000), `{"output":"(error) ERR x"}`, false},
		{"keys match", expectKeys("lock:invoice:7"), `[{"key":"lock:invoice:7","type":"string","value":"\"t\"","pttl_ms":19653}]`, true},
		{"no keys", expectKeys(), `[]`, true},
		{"extra key", expectKeys(), `[{"key":"k"}]`, false},
		{"scenario listed", expectScenario("gc-pause"), `[{"id":"normal"},{"id":"gc-pause"}]`, true},
		{"scenario missing", expectScenario("gc-pause"), `[{"id":"normal"}]`, false},
		{"quiz", expectQuiz("a", "b"), `{"questions":[{"id":"a","choices":[{"id":"x"}]},{"id":"b","choices":[{"id":"y"}]}]}`, true},
		{"quiz question missing", expectQuiz("a", "b"), `{"questions":[{"id":"a","choices":[{"id":"x"}]}]}`, false},
		{"quiz leaks the answer key", expectQuiz("a"), `{"questions":[{"id":"a","choices":[{"id":"x","correct":true}]}]}`, false},
		{"health", expectBody("ok"), "ok", true},
		{"health not ok", expectBody("ok"), "starting", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(reply{status: 200, body: []byte(tt.body)})
			if (err == nil) != tt.ok {
				t.Errorf("check(%s) = %v; want ok %t", tt.body, err, tt.ok)
			}
		})
	}
}

func TestClipShowsThePagesAlert(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"error":"busy"}`, `{"error":"busy"}`},
		{`<!doctype html><html><head><title>Join</title></head><body><p role="alert" hidden>not this</p><main><p class="notice" role="alert">That workshop is full.</p></main></body></html>`, "That workshop is full."},
		{`<!DOCTYPE html><html><head><title>Join</title></head></html>`, `<!DOCTYPE html><html><head><title>Join</title></head></html>`},
		{`<!doctype html><p role="alert">You&#39;re not in it.</p>`, "You're not in it."},
		{`<!doctype html><p role="alert"><b>Full</b></p>`, `<!doctype html><p role="alert"><b>Full</b></p>`},
	} {
		if got := clip([]byte(c.body)); got != c.want {
			t.Errorf("clip(%q) = %q; want %q", c.body, got, c.want)
		}
	}
}
