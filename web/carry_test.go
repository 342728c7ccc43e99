package web

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

var displayedCode = regexp.MustCompile(`^[` + carry.Alphabet + `]{4}-[` + carry.Alphabet + `]{4}$`)

// learnerCookieOf is the learner id in l's cookie jar.
func (l *learnerClient) learnerCookieOf() string {
	u, _ := url.Parse(l.base)
	for _, c := range l.http.Jar.Cookies(u) {
		if c.Name == learnerCookie {
			return c.Value
		}
	}
	return ""
}

func (l *learnerClient) newCode() (int, carryCodeJSON, string) {
	l.t.Helper()
	code, body := l.do("POST", "/api/progress/code", "application/json", "{}")
	var c carryCodeJSON
	_ = json.Unmarshal([]byte(body), &c)
	return code, c, body
}

func (l *learnerClient) adopt(code string) (int, string) {
	l.t.Helper()
	b, _ := json.Marshal(carryRequest{Code: code})
	return l.do("POST", "/api/progress/carry", "application/json", string(b))
}

// carryServer is a test server whose carry codes run on clock.
func carryServer(t *testing.T, cfg Config) (string, *fakeclock.Clock) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Now())
	s.carry = carry.New(cfg.CarryCodes, cfg.Progress, cfg.CarryTTL, clock.Now)
	return newServerFor(t, s), clock
}

func TestCarryAPI(t *testing.T) {
	base, clock := carryServer(t, testConfig(t))
	phone := newLearner(t, base)
	if code, _, body := phone.newCode(); code != 409 || !strings.Contains(body, "no saved progress") {
		t.Errorf("code for a browser with nothing saved = %d %s; want 409", code, body)
	}
	for _, a := range [][2]string{{"gc-pause", "fencing"}, {"release-script", "other-holder"}} {
		if code, _, body := phone.answer(a[0], a[1]); code != 200 {
			t.Fatal(body)
		}
	}
	status, c, body := phone.newCode()
	if status != 200 || !displayedCode.MatchString(c.Code) || c.Link != base+"/carry/"+c.Code {
		t.Fatalf("POST /api/progress/code = %d %s; want a code like K7QM-4TXP and its link", status, body)
	}
	if exp, err := time.Parse(time.RFC3339, c.ExpiresAt); err != nil || exp.Sub(clock.Now()) > carry.DefaultTTL || exp.Sub(clock.Now()) < carry.DefaultTTL-time.Second {
		t.Errorf("expires_at = %q (%v); want RFC 3339, %v from now", c.ExpiresAt, err, carry.DefaultTTL)
	}
	// Asking again while the code has time left gives the same code.
	if _, again, _ := phone.newCode(); again.Code != c.Code {
		t.Errorf("second request = %q; want the live code %q again", again.Code, c.Code)
	}

	laptop := newLearner(t, base)
	if code, _, _ := laptop.answer("nightly-report", "efficiency"); code != 200 {
		t.Fatal("laptop answer failed")
	}
	laptopID := laptop.learnerCookieOf()
	// Opening the link shows the form filled in and changes nothing.
	if code, page := laptop.do("GET", "/carry/"+strings.ToLower(c.Code), "", ""); code != 200 || !strings.Contains(page, `value="`+c.Code+`"`) {
		t.Errorf("GET link = %d; want the form with %s filled in", code, c.Code)
	}
	if laptop.learnerCookieOf() != laptopID || laptop.quiz().Progress != quizProgress(1, "in-progress") {
		t.Errorf("following the link changed the laptop")
	}
	for _, tt := range []struct {
		code   string
		status int
		want   string
	}{
		{"K7QM-4TX", 400, "8 letters and digits"},
		{"AAAA-AAAA", 404, "no such code"},
	} {
		if status, body := laptop.adopt(tt.code); status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("adopt %q = %d %s; want %d with %q", tt.code, status, body, tt.status, tt.want)
		}
	}
	// Typed in lower case without the dash.
	status, body = laptop.adopt(strings.ToLower(strings.ReplaceAll(c.Code, "-", "")))
	var got carryProgressJSON
	_ = json.Unmarshal([]byte(body), &got)
	if want := quizProgress(3, "completed"); status != 200 || got.Progress["distributed-locks"] != want {
		t.Fatalf("adopt = %d %s; want the merged progress %+v", status, body, want)
	}
	newID := laptop.learnerCookieOf()
	if newID == laptopID || newID == phone.learnerCookieOf() || !validLearnerID(newID) {
		t.Errorf("after adopting, the laptop's id is %q (was %q, phone %q); want a fresh one", newID, laptopID, phone.learnerCookieOf())
	}
	if q := laptop.quiz(); q.Progress != quizProgress(3, "completed") {
		t.Errorf("laptop after adopting = %+v; want all three", q.Progress)
	}
	// A copy, not a link: the phone keeps its own progress, alone.
	if q := phone.quiz(); q.Progress != quizProgress(2, "in-progress") {
		t.Errorf("phone after the laptop adopted = %+v; want its own two", q.Progress)
	}
	if status, body := newLearner(t, base).adopt(c.Code); status != 410 || !strings.Contains(body, "used already") {
		t.Errorf("second adoption = %d %s; want 410", status, body)
	}
	// A new code, left until it expires.
	clock.Add(carry.DefaultTTL)
	_, c2, _ := phone.newCode()
	if c2.Code == c.Code {
		t.Fatalf("new code is the used one")
	}
	clock.Add(carry.DefaultTTL)
	if status, body := newLearner(t, base).adopt(c2.Code); status != 410 || !strings.Contains(body, "expired") {
		t.Errorf("adopting an expired code = %d %s; want 410", status, body)
	}
}

// TestCarryCodeRenewal: a code with less than half its time left is not
// handed out again; a new one replaces it, and the old one stops working.
func TestCarryCodeRenewal(t *testing.T) {
	base, clock := carryServer(t, testConfig(t))
	phone := newLearner(t, base)
	phone.answer("gc-pause", "fencing")
	_, c1, _ := phone.newCode()
	clock.Add(carry.DefaultTTL/2 + time.Second)
	_, c2, _ := phone.newCode()
	if c2.Code == c1.Code || c2.Code == "" {
		t.Fatalf("code with less than half its time left handed out again: %q, %q", c1.Code, c2.Code)
	}
	if status, _ := newLearner(t, base).adopt(c1.Code); status != 404 {
		t.Errorf("adopting a replaced code = %d; want 404", status)
	}
}

func TestCarryLimits(t *testing.T) {
	cfg := testConfig(t)
	// Two new codes per learner, then none until the meter refills
	// (a unit a second, 60 a code); ten failed guesses per address.
	cfg.CarryLimits = limit.CarryLimits{
		Issue:           limit.CarryLimit{Meter: limit.NewMemoryMeter(1, 120), Cost: 60, Refill: 1},
		IssuePerAddress: limit.CarryLimit{Meter: limit.NewMemoryMeter(1, 6000), Cost: 60, Refill: 1},
		Guesses:         limit.CarryLimit{Meter: limit.NewMemoryMeter(1, 600), Cost: 60, Refill: 1},
	}
	base, clock := carryServer(t, cfg)
	phone := newLearner(t, base)
	phone.answer("gc-pause", "fencing")
	for i := range 3 {
		status, c, body := phone.newCode()
		want := 200
		if i == 2 {
			want = 429
		}
		if status != want {
			t.Errorf("code %d = %d %s; want %d", i+1, status, body, want)
		}
		if i < 2 {
			// The code still works; only new ones are metered.
			if again, _, _ := phone.newCode(); again != 200 || c.Code == "" {
				t.Errorf("asking again for live code %d = %d", i+1, again)
			}
		}
		clock.Add(carry.DefaultTTL) // so that the next request makes a new one
	}
	guesser := newLearner(t, base)
	for i := range 10 {
		if status, _ := guesser.adopt("AAAA-AAA" + string(carry.Alphabet[i])); status != 404 {
			t.Fatalf("guess %d = %d; want 404", i+1, status)
		}
	}
	status, body := guesser.adopt("AAAA-BBBB")
	if status != 429 || !strings.Contains(body, "many wrong codes") {
		t.Errorf("11th wrong code = %d %s; want 429", status, body)
	}
	// Typos that are not codes at all are not guesses: they say so.
	if status, _ := guesser.adopt("nope"); status != 400 {
		t.Errorf("malformed code after the limit = %d; want 400", status)
	}
}

func TestCarryForms(t *testing.T) {
	ts := newTestServer(t)
	phone := newLearner(t, ts.URL)
	_, page := phone.do("GET", "/progress", "", "")
	if !strings.Contains(page, "no saved progress yet") || strings.Contains(page, "Get a code") {
		t.Errorf("/progress for a new browser should say there is nothing to carry")
	}
	phone.answer("gc-pause", "fencing")
	for range 2 {
		_, page = phone.do("GET", "/progress", "", "")
		if !strings.Contains(page, `action="/progress/code"`) || strings.Contains(page, `class="carry-code"`) {
			t.Fatalf("GET /progress should offer a button and show no code")
		}
	}
	status, page := phone.do("POST", "/progress/code", "application/x-www-form-urlencoded", "")
	m := regexp.MustCompile(`<code class="carry-code">([^<]+)</code>`).FindStringSubmatch(page)
	if status != 200 || m == nil || !strings.Contains(page, "<svg") || !strings.Contains(page, ts.URL+"/carry/"+m[1]) {
		t.Fatalf("after Get a code: %d, code %v; want the page with the code, its link and a QR code", status, m)
	}
	code := m[1]
	laptop := newLearner(t, ts.URL)
	status, page = laptop.do("POST", "/progress/carry", "application/x-www-form-urlencoded", "code=AAAA-AAAA")
	if status != 404 || !strings.Contains(page, "There is no such code") || !strings.Contains(page, `aria-invalid="true"`) {
		t.Errorf("wrong code form = %d; want 404 with the message at the field", status)
	}
	status, page = laptop.do("POST", "/progress/carry", "application/x-www-form-urlencoded", "code="+url.QueryEscape(code))
	if status != 200 || !strings.Contains(page, "This browser now has that progress") {
		t.Errorf("carry form = %d; want the done page", status)
	}
	if q := laptop.quiz(); q.Progress != quizProgress(1, "in-progress") {
		t.Errorf("laptop after carrying = %+v; want the phone's answer", q.Progress)
	}
}

func TestCarryQRCodeScans(t *testing.T) {
	link := "https://locks.example.org/carry/K7QM-4TXP"
	var buf bytes.Buffer
	if err := qrSVG(link).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, bad := range []string{"<script", "style=", "href"} {
		if strings.Contains(svg, bad) {
			t.Errorf("QR SVG contains %q", bad)
		}
	}
	if got := decodeQR(t, rasterizeQR(t, svg, 37*8)); got != link {
		t.Errorf("QR decodes to %q; want %q", got, link)
	}
	// 41 characters at medium error correction fit version 3: 29
	// modules a side, plus the quiet zone of 4 on each side.
	if !strings.Contains(svg, `viewBox="0 0 37 37"`) {
		t.Errorf("QR SVG is not version 3 (29+8 modules): %.120s", svg)
	}
}

// TestDecodeQRReadsCodesAtAnyPixelSize: on a phone's screen (the browser
// test's screenshot is 624 pixels a side for 33 modules) a module is 18
// or 19 pixels wide; for this link, ZXing's finder patterns count 27
// modules, not 25, and decodeQR must still read it.
func TestDecodeQRReadsCodesAtAnyPixelSize(t *testing.T) {
	link := "http://127.0.0.1:41074/carry/RXEK-GPGW"
	var buf bytes.Buffer
	if err := qrSVG(link).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{624, 33 * 8} {
		if got := decodeQR(t, rasterizeQR(t, buf.String(), size)); got != link {
			t.Errorf("at %d pixels, QR decodes to %q; want %q", size, got, link)
		}
	}
}

// rasterizeQR draws the modules of a QR SVG (as qrSVG writes them: unit
// squares "Mx,yh1v1h-1z" in a path, quiet zone included) in an image of
// size pixels a side, each pixel the colour of the module it falls in, as
// a screen draws the SVG with crisp edges: when size is not a whole number
// of pixels per module, modules are a pixel wider or narrower by turns.
func rasterizeQR(t *testing.T, svg string, size int) image.Image {
	t.Helper()
	vb := regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`).FindStringSubmatch(svg)
	if vb == nil {
		t.Fatalf("no viewBox in %.200s", svg)
	}
	n, _ := strconv.Atoi(vb[1])
	mods := regexp.MustCompile(`M(\d+),(\d+)h1v1h-1z`).FindAllStringSubmatch(svg, -1)
	if len(mods) == 0 {
		t.Fatalf("no modules in %.200s", svg)
	}
	dark := make([]bool, n*n)
	for _, m := range mods {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		dark[y*n+x] = true
	}
	img := image.NewGray(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			c := color.Gray{0xff}
			if dark[(y*n/size)*n+x*n/size] {
				c = color.Gray{}
			}
			img.SetGray(x, y, c)
		}
	}
	return img
}

// decodeQR reads a QR code in img with ZXing's decoder (another
// implementation than the encoder's). It looks for the code's finder
// patterns first, as a phone's scanner does; when that fails it reads img
// as an upright picture of the code alone (PURE_BARCODE), which img is.
// The finder patterns alone misjudge the number of modules of about one
// code in 300 drawn at a size that is not a whole number of pixels per
// module, as a screen draws it, and a CI run failed on one such code
// ("dimension = 27" for 25 modules).
func decodeQR(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	if err != nil {
		var perr error
		res, perr = zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
		if perr != nil {
			t.Fatalf("decode QR: %v; as the code alone: %v", err, perr)
		}
	}
	return res.GetText()
}

// TestCarryErrorStatuses checks the error table's rows for codes.
func TestCarryErrorStatuses(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{carry.ErrMalformed, 400},
		{carry.ErrUnknown, 404},
		{carry.ErrUsed, 410},
		{carry.ErrExpired, 410},
		{carry.ErrNothingToCarry, 409},
	} {
		wrapped := fmt.Errorf("carry: take code: store: %w", tt.err)
		if got, msg := classify(wrapped); got != tt.want || strings.Contains(msg, "store") {
			t.Errorf("classify(%v) = %d %q; want %d and a message for people", wrapped, got, msg, tt.want)
		}
	}
}

func TestOrigin(t *testing.T) {
	proxy := netip.MustParsePrefix("10.0.0.0/8")
	for _, tt := range []struct {
		name      string
		public    string
		secure    bool
		trusted   []netip.Prefix
		host      string
		remote    string
		forwarded string
		tls       bool
		local     string // the address the connection reached
		want      string
	}{
		{name: "plain", host: "localhost:8080", want: "http://localhost:8080"},
		{name: "public URL wins", public: "https://locks.example.org", host: "evil.example", want: "https://locks.example.org"},
		{name: "a name from a direct client is not believed", host: "evil.example", local: "192.0.2.10:8080", want: "http://192.0.2.10:8080"},
		{name: "a name from a direct client, no local address", host: "evil.example", want: ""},
		{name: "the address the connection reached", host: "192.0.2.10:8080", local: "192.0.2.10:8080", want: "http://192.0.2.10:8080"},
		{name: "another address", host: "198.51.100.7:8080", local: "192.0.2.10:8080", want: "http://192.0.2.10:8080"},
		{name: "a loopback address", host: "127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "a localhost subdomain", host: "app.localhost:8080", want: "http://app.localhost:8080"},
		{name: "forwarded proto from anyone is ignored", host: "localhost", forwarded: "https", remote: "192.0.2.1:5000", want: "http://localhost"},
		{name: "a trusted proxy's host and proto", trusted: []netip.Prefix{proxy}, host: "a.example", forwarded: "https", remote: "10.1.2.3:5000", want: "https://a.example"},
		{name: "forwarded proto from an untrusted peer with proxies set", trusted: []netip.Prefix{proxy}, host: "localhost", forwarded: "https", remote: "192.0.2.1:5000", want: "http://localhost"},
		{name: "an untrusted peer's host with proxies set", trusted: []netip.Prefix{proxy}, host: "evil.example", remote: "192.0.2.1:5000", local: "192.0.2.10:443", want: "http://192.0.2.10:443"},
		{name: "behind TLS", secure: true, host: "localhost", want: "https://localhost"},
		{name: "TLS connection", tls: true, host: "localhost", want: "https://localhost"},
		{name: "IPv6 host", host: "[::1]:8080", want: "http://[::1]:8080"},
		{name: "host with a path", trusted: []netip.Prefix{proxy}, remote: "10.1.2.3:5000", host: "a.example/evil", want: ""},
		{name: "host with credentials", host: "user@a.example", want: ""},
		{name: "host with markup", host: `a.example"><script>`, want: ""},
		{name: "bad port", host: "localhost:99999", want: ""},
		{name: "empty host", host: "", want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{publicURL: tt.public, secureCookies: tt.secure, trustedProxies: tt.trusted}
			r := httptest.NewRequest("GET", "/progress", nil)
			r.Host = tt.host
			if tt.remote != "" {
				r.RemoteAddr = tt.remote
			}
			if tt.forwarded != "" {
				r.Header.Set("X-Forwarded-Proto", tt.forwarded)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tt.local != "" {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tt.local))))
			}
			if got := s.origin(r); got != tt.want {
				t.Errorf("origin(Host %q) = %q; want %q", tt.host, got, tt.want)
			}
		})
	}
}

// TestCarryCodesStayOutOfLogs: the request log shows /carry/… for a link,
// never the code.
func TestCarryCodesStayOutOfLogs(t *testing.T) {
	cfg := testConfig(t)
	s, logs := newLoggedServer(t, cfg)
	base := newServerFor(t, s)
	l := newLearner(t, base)
	l.do("GET", "/carry/K7QM-4TXP", "", "")
	l.do("GET", "/carry/K7QM-4TXP?x=1", "", "")
	out := logs.String()
	if strings.Contains(out, "K7QM") || strings.Count(out, "uri=/carry/…") != 2 {
		t.Errorf("log:\n%s\nwant uri=/carry/… twice and no code", out)
	}
}

// countingStore counts the writes that reach the progress and carry
// stores.
type countingStore struct {
	*store.Store
	mu     sync.Mutex
	writes []string
}

func (c *countingStore) note(op string) {
	c.mu.Lock()
	c.writes = append(c.writes, op)
	c.mu.Unlock()
}

func (c *countingStore) RecordAnswer(ctx context.Context, id, topic, q string, right bool) (store.TopicProgress, error) {
	c.note("RecordAnswer")
	return c.Store.RecordAnswer(ctx, id, topic, q, right)
}

func (c *countingStore) MarkStarted(ctx context.Context, id, topic string) error {
	c.note("MarkStarted")
	return c.Store.MarkStarted(ctx, id, topic)
}

func (c *countingStore) Merge(ctx context.Context, from, into string) error {
	c.note("Merge")
	return c.Store.Merge(ctx, from, into)
}

func (c *countingStore) PutCarryCode(ctx context.Context, code string, t carry.Ticket) error {
	c.note("PutCarryCode")
	return c.Store.PutCarryCode(ctx, code, t)
}

func (c *countingStore) TakeCarryCode(ctx context.Context, code string, now time.Time) (carry.Ticket, error) {
	c.note("TakeCarryCode")
	return c.Store.TakeCarryCode(ctx, code, now)
}

// TestReadingCostsNoRecord: a visitor who only reads pages gets a cookie
// but no record in the store, until they save something.
func TestReadingCostsNoRecord(t *testing.T) {
	cfg := testConfig(t)
	st := &countingStore{Store: cfg.Progress.(*store.Store)}
	cfg.Progress, cfg.CarryCodes = st, st
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	l := newLearner(t, base)
	for _, p := range []string{"/", "/topics/distributed-locks", "/playground", "/race", "/race?scenario=gc-pause", "/progress", "/carry/K7QM-4TXP", "/api/topics/distributed-locks/quiz", "/api/playground/keys", "/api/race/scenarios"} {
		if code, _ := l.do("GET", p, "", ""); code != 200 {
			t.Errorf("GET %s = %d", p, code)
		}
	}
	if l.learnerCookieOf() == "" {
		t.Errorf("no learner cookie after reading")
	}
	if len(st.writes) != 0 {
		t.Errorf("reading pages wrote %v to the store; want nothing", st.writes)
	}
	if n := st.Sweep(time.Now().Add(store.DefaultProgressTTL + time.Hour)); n != 0 {
		t.Errorf("a sweep found %d learners after reading only; want 0", n)
	}
	l.answer("gc-pause", "fencing")
	if len(st.writes) != 1 {
		t.Errorf("an answer wrote %v; want one RecordAnswer", st.writes)
	}
}
