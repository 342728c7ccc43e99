package web

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	qr "github.com/piglig/go-qr"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/web/views"
)

// Carrying progress to another device. A learner asks for a transfer code
// (POST), which is kept on the server for a short time and works once; on
// the other device, adopting it copies the code owner's progress into a
// fresh learner id for that browser. So the session cookie never leaves
// the server, and a link someone sends cannot put their id on our
// browser. The code is shown grouped, with its link and a QR code of the
// link; GET pages never make a code.

// carryProgressJSON is the adopted learner's progress: every topic with a
// quiz, by slug, as the quiz API shows it.
type carryProgressJSON struct {
	Progress map[string]quiz.Progress `json:"progress"`
}

type carryCodeJSON struct {
	Code      string `json:"code"`
	Link      string `json:"link"`
	ExpiresAt string `json:"expires_at"`
}

type carryRequest struct {
	Code string `json:"code"`
}

// issueCode returns the learner's code: their live one while it has half
// its time left, else a new one. Only a new one is metered.
func (s *Server) issueCode(c echo.Context) (carry.Code, error) {
	ctx := c.Request().Context()
	id := s.learnerID(c)
	if id == "" {
		return carry.Code{}, carry.ErrNothingToCarry
	}
	l, err := s.progress.Progress(ctx, id)
	if err != nil {
		return carry.Code{}, err
	}
	if len(l) == 0 {
		return carry.Code{}, carry.ErrNothingToCarry
	}
	live, ok, err := s.carry.Live(ctx, id)
	if err != nil {
		return carry.Code{}, err
	}
	if ok && s.carry.Reusable(live) {
		return live, nil
	}
	addr := clientAddress(c)
	d, err := s.carryLimits.CheckIssue(ctx, id, addr)
	if err != nil {
		s.failures.Warn("carry limit", "error", err)
	}
	if !d.Allowed() {
		return carry.Code{}, s.carryTooMany(c, d, "You have asked for many codes in a short time.")
	}
	code, err := s.carry.Issue(ctx, id)
	if err != nil {
		return carry.Code{}, err
	}
	if err := s.carryLimits.Issued(ctx, id, addr); err != nil {
		s.failures.Warn("carry limit", "error", err)
	}
	return code, nil
}

// adopt takes a code for this browser: it gets a fresh learner id holding
// the code owner's progress and its own. Wrong codes count against the
// address, so that codes cannot be guessed.
func (s *Server) adopt(c echo.Context, input string) error {
	if _, err := carry.Parse(input); err != nil {
		return err // a typo: no code was looked up
	}
	addr := clientAddress(c)
	// Guesses sent at once are looked up one at a time, each counted
	// before the next is checked.
	s.carryGuessMu.Lock()
	defer s.carryGuessMu.Unlock()
	d, err := s.carryLimits.CheckGuess(c.Request().Context(), addr)
	if err != nil {
		s.failures.Warn("carry limit", "error", err)
	}
	if !d.Allowed() {
		return s.carryTooMany(c, d, "There were many wrong codes from your address.")
	}
	fresh := newLearnerID()
	err = s.carry.Adopt(c.Request().Context(), input, s.learnerID(c), fresh)
	if errors.Is(err, carry.ErrUnknown) || errors.Is(err, carry.ErrUsed) || errors.Is(err, carry.ErrExpired) {
		if err := s.carryLimits.WrongGuess(c.Request().Context(), addr); err != nil {
			s.failures.Warn("carry limit", "error", err)
		}
	}
	if err != nil {
		return err
	}
	s.setLearnerCookie(c, fresh)
	return nil
}

func (s *Server) carryTooMany(c echo.Context, d limit.Decision, why string) error {
	return s.refused(c, d, why+" Please try again in "+waitText(retrySeconds(d.Wait))+".")
}

func (s *Server) carryLink(c echo.Context, code carry.Code) string {
	return s.origin(c.Request()) + "/carry/" + code.Display()
}

func (s *Server) handleCodeAPI(c echo.Context) error {
	code, err := s.issueCode(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, carryCodeJSON{Code: code.Display(), Link: s.carryLink(c, code), ExpiresAt: code.Expires.UTC().Format(time.RFC3339)})
}

func (s *Server) handleCarryAPI(c echo.Context) error {
	var req carryRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if err := s.adopt(c, req.Code); err != nil {
		return err
	}
	out := carryProgressJSON{Progress: map[string]quiz.Progress{}}
	l, err := s.progress.Progress(c.Request().Context(), s.learnerID(c))
	if err != nil {
		return err
	}
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	for _, lesson := range course.Lessons() {
		if q, err := s.quizzes.Quiz(lesson.Slug); err == nil {
			tp := l[lesson.Slug]
			out.Progress[lesson.Slug] = q.Progress(tp.Started, tp.Right)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// carryPage is the /progress page for this browser: its live code if it
// has one, else a button to make one if it has progress to carry.
func (s *Server) carryPage(c echo.Context) (views.Carry, error) {
	m := views.Carry{Page: s.page("Continue on another device", "Carry your Lock Lab progress to another browser or device.", "progress"), TTL: humanMinutes(s.carry.TTL())}
	id := s.learnerID(c)
	if id == "" {
		return m, nil
	}
	ctx := c.Request().Context()
	l, err := s.progress.Progress(ctx, id)
	if err != nil {
		return m, err
	}
	m.HasProgress = len(l) > 0
	if !m.HasProgress {
		return m, nil
	}
	live, ok, err := s.carry.Live(ctx, id)
	if err != nil || !ok {
		return m, err
	}
	s.showCode(c, &m, live)
	return m, nil
}

func (s *Server) showCode(c echo.Context, m *views.Carry, code carry.Code) {
	m.Code, m.Link = code.Display(), s.carryLink(c, code)
	m.ExpiresAt = code.Expires.UTC().Format(time.RFC3339)
	m.Until = code.Expires.UTC().Format("15:04") + " UTC"
	if strings.HasPrefix(m.Link, "http") {
		m.QR = qrSVG(m.Link)
	}
}

// qrSVG draws link as an SVG QR code: dark modules on white with the
// standard quiet zone of four modules, scaled by the page's CSS. Medium
// error correction survives a smudged or glary phone screen.
func qrSVG(link string) templ.Component {
	code, err := qr.EncodeText(link, qr.Medium)
	if err != nil {
		return nil
	}
	svg, err := code.ToSVGBytes(qr.NewQrCodeImgConfig(1, 4))
	if err != nil {
		return nil
	}
	// The SVG is made by the library from our own link: markup we trust.
	return templ.Raw(string(svg))
}

func waitText(secs int) string {
	if secs < 90 {
		return strconv.Itoa(secs) + " seconds"
	}
	return strconv.Itoa((secs+59)/60) + " minutes"
}

func humanMinutes(d time.Duration) string {
	if m := int(d / time.Minute); d%time.Minute == 0 && m > 0 {
		if m == 1 {
			return "1 minute"
		}
		return strconv.Itoa(m) + " minutes"
	}
	return d.String()
}

func (s *Server) handleCarryPage(c echo.Context) error {
	m, err := s.carryPage(c)
	if err != nil {
		return err
	}
	m.Done = c.QueryParam("done") == "1"
	return render(c, http.StatusOK, views.CarryPage(m))
}

// handleCarryLink shows the form filled in with the code from the link;
// adopting it is a POST, so following a link alone changes nothing.
func (s *Server) handleCarryLink(c echo.Context) error {
	m, err := s.carryPage(c)
	if err != nil {
		return err
	}
	m.Entered = c.Param("code")
	if code, err := carry.Parse(m.Entered); err == nil {
		m.Entered = carry.Format(code)
	}
	return render(c, http.StatusOK, views.CarryPage(m))
}

// handleCodeForm is "Get a code" without JavaScript: it makes (or reuses)
// the code and shows the page with it.
func (s *Server) handleCodeForm(c echo.Context) error {
	if _, err := s.issueCode(c); err != nil {
		return s.carryFormError(c, err, "")
	}
	return c.Redirect(http.StatusSeeOther, "/progress#code")
}

func (s *Server) handleCarryForm(c echo.Context) error {
	input := c.FormValue("code")
	if err := s.adopt(c, input); err != nil {
		return s.carryFormError(c, err, input)
	}
	return c.Redirect(http.StatusSeeOther, "/progress?done=1")
}

// carryFormError shows the page again with the message of a refused code
// under the field, with the status the API would answer.
func (s *Server) carryFormError(c echo.Context, err error, entered string) error {
	status, msg := classify(err)
	if status >= 500 {
		return err
	}
	m, perr := s.carryPage(c)
	if perr != nil {
		return perr
	}
	m.Entered = entered
	if entered != "" || errors.Is(err, carry.ErrMalformed) {
		m.Error = sentence(msg)
	} else {
		m.IssueError = sentence(msg)
	}
	return render(c, status, views.CarryPage(m))
}

// sentence makes an API message a sentence for a page.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// redactURI keeps transfer codes out of logs: /carry/K7QM-4TXP is logged
// as /carry/….
func redactURI(uri string) string {
	if strings.HasPrefix(uri, "/carry/") {
		return "/carry/…"
	}
	return uri
}

// origin is the scheme and host that links to this site start with: the
// -public-url if set. Without it, the Host header is believed only where
// nobody can pick it for someone else: from a trusted proxy, or when it
// names this machine (localhost, a loopback address, or the address the
// connection reached). Any other Host could be an attacker's, so links use
// the address the connection reached instead, and are relative if even
// that is unknown. The scheme is HTTPS when the connection is TLS, the
// site is served behind TLS, or a trusted proxy says so in
// X-Forwarded-Proto; anyone else's X-Forwarded-Proto is ignored.
func (s *Server) origin(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	proxied := s.fromTrustedProxy(r)
	host := r.Host
	if !wellFormedHost(host) || (!proxied && !namesThisMachine(r, host)) {
		host = localAddr(r)
		if host == "" {
			return ""
		}
	}
	scheme := "http"
	if r.TLS != nil || s.secureCookies || (proxied && r.Header.Get("X-Forwarded-Proto") == "https") {
		scheme = "https"
	}
	return scheme + "://" + host
}

// namesThisMachine reports whether host is localhost, a loopback address
// or the address the connection reached, with any port.
func namesThisMachine(r *http.Request, host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(name, "[]"))
	if err != nil {
		return false
	}
	if a.IsLoopback() {
		return true
	}
	local, err := netip.ParseAddrPort(localAddr(r))
	return err == nil && local.Addr().Unmap() == a.Unmap()
}

// localAddr is the address and port the request's connection reached, ""
// if the server does not say.
func localAddr(r *http.Request) string {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || ap.Addr().IsUnspecified() {
		return ""
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
}

func (s *Server) fromTrustedProxy(r *http.Request) bool {
	if len(s.trustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range s.trustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// wellFormedHost accepts a DNS name or an IP address, with an optional
// port: nothing that could smuggle a path, credentials or markup into a
// link.
func wellFormedHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
		host = hp
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			switch ch := label[i]; {
			case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9', ch == '-':
			default:
				return false
			}
		}
	}
	return true
}
