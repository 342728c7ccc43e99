package web

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
)

// TestLineCostIsLinear posts the largest and oddest playground lines the
// body limits let through, as JSON, as a form and as a multipart form, and
// checks without timing anything that handling each allocates a small
// multiple of its size: a line of 21,000 empty quotes once cost the
// tokenizer close to a gigabyte.
func TestLineCostIsLinear(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	empties := func(n int) string { return strings.Repeat("'' ", n/3) }
	type post struct {
		name, path, ctype string
		body              []byte
	}
	jsonBody := func(line string) []byte {
		b, _ := json.Marshal(execRequest{Line: line, Client: "A"})
		return b
	}
	// Form encoding spends 7 bytes on each "'' ".
	form := url.Values{"line": {empties(108 << 10 * 3 / 7)}, "client": {"A"}}.Encode()
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("line", empties(240<<10))
	_ = w.WriteField("client", "A")
	_ = w.Close()
	for _, p := range []post{
		{"JSON, empty quotes at the line limit", "/api/playground/exec", "application/json", jsonBody(empties(63 << 10))},
		{"JSON, escapes at the line limit", "/api/playground/exec", "application/json", jsonBody(strings.Repeat(`"\x41" `, (63<<10)/10))},
		{"JSON, one-byte words", "/api/playground/exec", "application/json", jsonBody(strings.Repeat("a ", (63<<10)/2))},
		{"JSON, a script line past the line limit", "/api/playground/exec", "application/json", jsonBody(`EVAL "` + strings.Repeat("'' ", 21_000) + `" 0`)},
		{"form, 108 KiB", "/playground/exec", "application/x-www-form-urlencoded", []byte(form)},
		{"multipart form, 240 KiB", "/playground/exec", w.FormDataContentType(), mp.Bytes()},
	} {
		t.Run(p.name, func(t *testing.T) {
			var code int
			got := testenv.Allocated(func() {
				req := httptest.NewRequest(http.MethodPost, p.path, bytes.NewReader(p.body))
				req.Header.Set("Content-Type", p.ctype)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				code = rec.Code
			})
			// A form's reply comes after its redirect (post/redirect/get).
			want := http.StatusOK
			if !strings.HasPrefix(p.path, "/api/") {
				want = http.StatusSeeOther
			}
			if code != want {
				t.Fatalf("POST %s = %d; want %d (a refused line is still a reply)", p.path, code, want)
			}
			// The page around a form's reply is a fixed cost.
			if limit := uint64(64*len(p.body) + 8<<20); got > limit {
				t.Errorf("POST %s of %d bytes allocated %d bytes; want at most %d", p.path, len(p.body), got, limit)
			}
			t.Logf("%d bytes posted, %d allocated", len(p.body), got)
		})
	}
}

// TestJSONBodyOverLimit checks that a JSON body past its limit, but under
// the general body limit, is refused as too large, not as malformed.
func TestJSONBodyOverLimit(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	b, _ := json.Marshal(execRequest{Line: "SET k " + strings.Repeat("x", 200<<10), Client: "A"})
	code, body := l.do("POST", "/api/playground/exec", "application/json", string(b))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 192 KiB") {
		t.Errorf("a 200 KiB JSON body = %d %s; want 413 saying the limit", code, body)
	}
	// The same without a Content-Length (chunked), which only reading
	// it tells.
	req, _ := http.NewRequest("POST", ts.URL+"/api/playground/exec", io.MultiReader(strings.NewReader(string(b))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.csrfToken())
	resp, err := l.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	chunked, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength != 0 || !strings.Contains(string(chunked), "larger than 192 KiB") {
		t.Errorf("a chunked 200 KiB JSON body = %d %s; want 413 saying the limit", resp.StatusCode, chunked)
	}
	// A line just past the playground's limit, as JSON with escapes, is
	// the playground's own clear refusal.
	line := `SET k "` + strings.Repeat(`\"`, 33<<10) + `"` // 66 KiB, 132 KiB as JSON
	if code, r, body := l.exec("A", line); code != http.StatusOK || !strings.Contains(r.Output, "lines of at most 64 KiB") {
		t.Errorf("a 66 KiB line = %d %.200s; want 200 with the playground's refusal", code, body)
	}
	if ks := l.keys(); len(ks) != 0 {
		t.Errorf("keys after a refused body = %v; want none", ks)
	}
}

func TestShownLine(t *testing.T) {
	long := strings.Repeat("é", maxShownLine) // two bytes each
	for _, tt := range []struct{ line, want string }{
		{"SET k v", "SET k v"},
		{strings.Repeat("a", maxShownLine), strings.Repeat("a", maxShownLine)},
		{strings.Repeat("a", maxShownLine+1), strings.Repeat("a", maxShownLine) + "… (1025 bytes in all)"},
		{long, strings.Repeat("é", maxShownLine/2) + "… (2048 bytes in all)"},
		{"a" + long, "a" + strings.Repeat("é", maxShownLine/2-1) + "… (2049 bytes in all)"},
	} {
		if got := shownLine(tt.line); got != tt.want {
			t.Errorf("shownLine(%d bytes) = %.40q… (%d bytes); want %.40q… (%d bytes)", len(tt.line), got, len(got), tt.want, len(tt.want))
		}
	}
}
