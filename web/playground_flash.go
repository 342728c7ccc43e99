package web

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/web/views"
)

// The playground's forms without JavaScript follow post/redirect/get: a
// command's POST answers 303 back to the page at the terminal, so a
// reload does not send the command again. The transcript crosses the
// redirect in a cookie, compressed, since it must fit in one: the replies
// shown are what a browser keeps, and no replica has to remember a
// learner's screen.
const (
	pgFlashCookie = "locklab_pg"
	// maxFlashBytes is the cookie's value at most: browsers keep 4096
	// bytes of name, value and attributes.
	maxFlashBytes = 3800
	// pgFlashAge is how long the transcript is shown again, as long as an
	// idle sandbox lives by default.
	pgFlashAge = 30 * 60
)

// pgFlash is what the cookie holds: the client the form sent as and the
// transcript.
type pgFlash struct {
	Client  string          `json:"c"`
	Entries []views.PGEntry `json:"e"`
	// Node is the target the line form last sent to ("3", "all"), so
	// that the page comes back with it chosen; "" for node 1.
	Node string `json:"n,omitempty"`
}

// encodeFlash packs f into at most maxFlashBytes, dropping the oldest
// entries first and, if the newest alone is too large, cutting its reply.
func encodeFlash(f pgFlash) string {
	f.Entries = trimTranscript(f.Entries)
	for {
		if v := packFlash(f); len(v) <= maxFlashBytes {
			return v
		}
		if len(f.Entries) > 1 {
			f.Entries = f.Entries[1:]
			continue
		}
		if len(f.Entries) == 0 {
			return ""
		}
		// One entry that does not fit even compressed: cut it, and say so.
		// 2 KiB of incompressible text is under 3 KiB in base64.
		e := f.Entries[0]
		e.Line, e.Output, e.Notice = cutText(e.Line, 512), cutText(e.Output, 1536), cutText(e.Notice, 512)
		f.Entries[0] = e
		if v := packFlash(f); len(v) <= maxFlashBytes {
			return v
		}
		f.Entries[0].Output = "(cut: the reply is too long to show again after the page reloads)"
		return packFlash(f)
	}
}

// cutText cuts s to at most n bytes, on a character boundary, marking the
// cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "… (cut)"
}

func packFlash(f pgFlash) string {
	raw, _ := json.Marshal(f)
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = w.Write(raw)
	_ = w.Close()
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

// decodeFlash reads a cookie's value, which the browser may have changed:
// anything that does not decode is no transcript, and the inflated JSON
// is bounded so that a small cookie cannot unpack into megabytes.
func decodeFlash(v string) (pgFlash, bool) {
	var f pgFlash
	if v == "" || len(v) > 2*maxFlashBytes {
		return f, false
	}
	packed, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return f, false
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(packed)), 4*maxTranscriptBytes+1))
	if err != nil || len(raw) > 4*maxTranscriptBytes || json.Unmarshal(raw, &f) != nil {
		return pgFlash{}, false
	}
	f.Client = clientOr(f.Client)
	f.Entries = trimTranscript(f.Entries)
	return f, true
}

func clientOr(s string) string {
	if s == "B" {
		return "B"
	}
	return "A"
}

// setFlash keeps the transcript for the page the redirect leads to.
func (s *Server) setFlash(c echo.Context, f pgFlash) {
	v := encodeFlash(f)
	age := pgFlashAge
	if v == "" {
		age = -1
	}
	s.setCookie(c, &http.Cookie{Name: pgFlashCookie, Value: v, MaxAge: age, HttpOnly: true})
}

// clearFlash drops a kept transcript, if there is one.
func (s *Server) clearFlash(c echo.Context) {
	if _, ok := s.cookie(c, pgFlashCookie); ok {
		s.setCookie(c, &http.Cookie{Name: pgFlashCookie, MaxAge: -1, HttpOnly: true})
	}
}

// flashState is the playground as the last form left it, nil if no form
// was posted lately.
func (s *Server) flashState(c echo.Context) *pgState {
	v, ok := s.cookie(c, pgFlashCookie)
	if !ok {
		return nil
	}
	f, ok := decodeFlash(v)
	if !ok {
		return nil
	}
	return &pgState{entries: f.Entries, client: f.Client, node: f.Node}
}

// pgRedirect is where a form's redirect goes: the page it came from, at
// the terminal. A lesson must exist, so that the redirect never leads
// off to a path a learner's form made up.
func (s *Server) pgRedirect(c echo.Context) (string, error) {
	if c.FormValue("from") != "lesson" {
		return "/playground#" + views.PGTerminalID("page"), nil
	}
	course, err := s.content.Course()
	if err != nil {
		return "", err
	}
	l, ok := course.Lesson(c.FormValue("topic"))
	if !ok {
		return "", echo.ErrNotFound
	}
	return lessonHref(l) + "#" + views.PGTerminalID("lesson"), nil
}
