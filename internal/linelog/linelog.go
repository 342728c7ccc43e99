// Package linelog is a slog handler for logs written once per request: it
// writes the same bytes as slog's JSON and text handlers, but encodes the
// common record (a message and flat string, integer and duration attributes
// of plain ASCII) directly, without slog's general machinery, which costs
// about as much as serving a small page. Any other record (groups, other
// kinds, characters that need escaping, attributes added with WithAttrs)
// goes to slog's own handler, on the same writer.
package linelog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Handler is a slog.Handler; see the package comment.
type Handler struct {
	w    io.Writer
	json bool
	slow slog.Handler
}

// NewJSON writes records as slog.NewJSONHandler(w, opts) would.
func NewJSON(w io.Writer, opts *slog.HandlerOptions) *Handler {
	return newHandler(w, true, slog.NewJSONHandler(w, opts), opts)
}

// NewText writes records as slog.NewTextHandler(w, opts) would.
func NewText(w io.Writer, opts *slog.HandlerOptions) *Handler {
	return newHandler(w, false, slog.NewTextHandler(w, opts), opts)
}

func newHandler(w io.Writer, json bool, slow slog.Handler, opts *slog.HandlerOptions) *Handler {
	h := &Handler{w: w, json: json, slow: slow}
	if opts != nil && (opts.AddSource || opts.ReplaceAttr != nil) {
		// What these options do is slog's to decide: every record goes there.
		h.w = nil
	}
	return h
}

// Enabled reports whether records at level are written.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.slow.Enabled(ctx, level)
}

// WithAttrs returns slog's handler with attrs: such loggers are not the
// per-request one.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.slow.WithAttrs(attrs) }

// WithGroup returns slog's handler with the group.
func (h *Handler) WithGroup(name string) slog.Handler { return h.slow.WithGroup(name) }

// Handle writes r as one line, in one Write.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if !h.direct(r.Time) {
		return h.slow.Handle(ctx, r)
	}
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	b, ok := h.head((*bp)[:0], r.Time, r.Level, r.Message)
	if ok {
		r.Attrs(func(a slog.Attr) bool {
			b, ok = h.attr(b, a)
			return ok
		})
	}
	return h.finish(ctx, bp, b, ok, r)
}

// LogAttrs writes a record of msg and attrs at time t, as Handle would,
// without making the record: the way of a logger called for every
// request, which then costs no more than encoding the line. The caller
// checks Enabled first.
func (h *Handler) LogAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs ...slog.Attr) error {
	if !h.direct(t) {
		return h.slow.Handle(ctx, record(t, level, msg, attrs))
	}
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	b, ok := h.head((*bp)[:0], t, level, msg)
	for i := 0; ok && i < len(attrs); i++ {
		b, ok = h.attr(b, attrs[i])
	}
	if ok {
		return h.finish(ctx, bp, b, true, slog.Record{})
	}
	return h.slow.Handle(ctx, record(t, level, msg, attrs))
}

func record(t time.Time, level slog.Level, msg string, attrs []slog.Attr) slog.Record {
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

// direct reports whether a record at t may be encoded here.
func (h *Handler) direct(t time.Time) bool {
	if h.w == nil || t.IsZero() {
		return false
	}
	y := t.Year()
	return y >= 0 && y < 10000
}

// finish writes the line b, or, when it is not one encoded here (!ok),
// hands r to slog; bp is b's pooled buffer.
func (h *Handler) finish(ctx context.Context, bp *[]byte, b []byte, ok bool, r slog.Record) error {
	if !ok {
		*bp = b[:0] // the pool keeps the buffer as it grew
		return h.slow.Handle(ctx, r)
	}
	if h.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	*bp = b[:0]
	_, err := h.w.Write(b)
	return err
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// head appends a line's time, level and message; false when the message
// is not one this handler writes itself.
func (h *Handler) head(b []byte, t time.Time, level slog.Level, msg string) ([]byte, bool) {
	if !plain(msg, h.json) {
		return b, false
	}
	if h.json {
		b = append(b, `{"time":"`...)
		b = appendRFC3339Nano(b, t)
		b = append(b, `","level":"`...)
		b = append(b, level.String()...)
		b = append(b, `","msg":"`...)
		b = append(b, msg...)
		return append(b, '"'), true
	}
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, " level="...)
	b = append(b, level.String()...)
	b = append(b, " msg="...)
	return append(b, msg...), true
}

// attr appends one attribute, as a key and a plain value.
func (h *Handler) attr(b []byte, a slog.Attr) ([]byte, bool) {
	if a.Key == "" || !plain(a.Key, h.json) {
		return b, false
	}
	if h.json {
		b = append(b, ',', '"')
		b = append(b, a.Key...)
		b = append(b, '"', ':')
	} else {
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
	}
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if !plain(s, h.json) {
			return b, false
		}
		if h.json {
			b = append(b, '"')
			b = append(b, s...)
			return append(b, '"'), true
		}
		return append(b, s...), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindDuration:
		if h.json {
			return strconv.AppendInt(b, int64(v.Duration()), 10), true
		}
		return append(b, v.Duration().String()...), true
	}
	return b, false
}

// plain reports whether s is written as it is: printable ASCII that
// neither a JSON string escapes nor the text format quotes (no quote,
// backslash, space or equals sign there), and not empty.
func plain(s string, json bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || !json && (c == ' ' || c == '=') {
			return false
		}
	}
	return true
}

// appendRFC3339Millis writes t as the text handler does: RFC 3339 with
// exactly three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	st := stampOf(t)
	b = append(b, st.clock...)
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, st.zone...)
}

// appendRFC3339Nano writes t as t.AppendFormat(b, time.RFC3339Nano) does:
// the nanoseconds without their trailing zeros, and no fraction at all on
// a whole second.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	st := stampOf(t)
	b = append(b, st.clock...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(frac)
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, st.zone...)
}

// stamp is one second of one time zone as RFC 3339 writes it: the date
// and time of day, and the zone after the fraction. Every line of a
// second shares it, so that a line formats its time in a copy.
type stamp struct {
	unix  int64
	loc   *time.Location
	clock string // 2006-01-02T15:04:05
	zone  string // Z or -07:00
}

// lastStamp is the second last written.
var lastStamp atomic.Pointer[stamp]

// stampOf returns the stamp of t's second. A zone's offset changes only
// on a whole second, so a second has one.
func stampOf(t time.Time) *stamp {
	unix, loc := t.Unix(), t.Location()
	if st := lastStamp.Load(); st != nil && st.unix == unix && st.loc == loc {
		return st
	}
	full := t.AppendFormat(make([]byte, 0, 32), "2006-01-02T15:04:05Z07:00")
	const clockLen = len("2006-01-02T15:04:05")
	st := &stamp{unix: unix, loc: loc, clock: string(full[:clockLen]), zone: string(full[clockLen:])}
	lastStamp.Store(st)
	return st
}
