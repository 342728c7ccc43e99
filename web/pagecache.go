package web

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/web/views"
)

// Pages are rendered once per content version and learner state, and kept
// as bytes: a page costs what copying its bytes costs. What differs per
// browser or per request is left as a hole in the kept bytes and filled in
// as the page is written: the CSRF token (the same for a browser on every
// page) and the playground widget (its keys and clock are the learner's
// sandbox's, now). The learner's state that shapes a page (a topic's
// status, the questions they solved) is part of the key, and small.
//
// The gzip variant is kept too, compressed once: each stretch between
// holes is compressed on its own and ends on a byte boundary (a sync
// flush), so a request only writes the kept stretches with the holes in
// between as uncompressed (stored) blocks, and the checksum.

// hole is what a gap between two stretches of a kept page is filled with.
type hole uint8

const (
	holeCSRF       hole = iota // the request's CSRF token
	holePlayground             // the playground widget, per request
	holeClockMS                // the playground's clock, in the widget
	holeClockText
	holes
)

// pageMarkers are what a page is rendered with in place of its holes:
// random per process, so that no content can contain them by chance.
var pageMarkers = func() [holes]string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	tag := "locklab-hole-" + hex.EncodeToString(b)
	// Letters, digits and dashes only: escaping leaves them as they are.
	return [holes]string{holeCSRF: tag + "-csrf", holePlayground: tag + "-playground",
		holeClockMS: tag + "-clock-ms", holeClockText: tag + "-clock-text"}
}()

// maxCachedPages bounds the page cache: at most this many pages of up to
// some 40 KB with their gzip variant, 20 MB. The keys are the page and
// the learner's state on it (a topic's status and the questions solved;
// on the home page every topic's status), a few dozen variants for the
// shipped course; when full, the cache starts over.
const maxCachedPages = 512

// keptPage is a rendered page split at its holes: len(parts) is
// len(holes)+1.
type keptPage struct {
	code  int
	parts [][]byte
	holes []hole
	// gz are the parts compressed, each a run of deflate blocks that ends
	// on a byte boundary; made once, on first use.
	gzOnce sync.Once
	gz     [][]byte
	// course and version are what the page was rendered from (the
	// course, and the topic's quiz), compared on lookup.
	course  *content.Course
	version any
}

// pageCache keeps pages by key. A page is served only for the content it
// was rendered from: the same course (with -content DIR every load is a
// new one) and the same version of what else it shows (a topic's quiz).
type pageCache struct {
	mu    sync.RWMutex
	pages map[string]*keptPage
}

// get looks a page up by its key, given as bytes: a request builds its key
// on the stack, and the lookup copies nothing.
func (pc *pageCache) get(course *content.Course, key []byte, version any) *keptPage {
	pc.mu.RLock()
	defer pc.mu.RUnlock()
	if p := pc.pages[string(key)]; p != nil && p.course == course && p.version == version {
		return p
	}
	return nil
}

func (pc *pageCache) put(course *content.Course, key string, p *keptPage) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.pages == nil || len(pc.pages) >= maxCachedPages {
		pc.pages = map[string]*keptPage{}
	}
	p.course = course
	pc.pages[key] = p
}

// keepPage renders comp with its holes marked and splits it at them.
func keepPage(ctx context.Context, code int, comp templ.Component, version any) (*keptPage, error) {
	var buf bytes.Buffer
	if err := comp.Render(views.WithCSRF(ctx, pageMarkers[holeCSRF]), &buf); err != nil {
		return nil, err
	}
	return splitPage(buf.Bytes(), code, version), nil
}

// splitPage splits a page rendered with markers at them.
func splitPage(rest []byte, code int, version any) *keptPage {
	p := &keptPage{code: code, version: version}
	for {
		at, which := -1, hole(0)
		for h, m := range pageMarkers {
			if i := bytes.Index(rest, []byte(m)); i >= 0 && (at < 0 || i < at) {
				at, which = i, hole(h)
			}
		}
		if at < 0 {
			break
		}
		p.parts = append(p.parts, rest[:at])
		p.holes = append(p.holes, which)
		rest = rest[at+len(pageMarkers[which]):]
	}
	p.parts = append(p.parts, rest)
	return p
}

// widgetClock is the clock the kept playground widget is rendered with,
// in its place the request's is filled in: 2099-12-31 23:59:59.999 UTC,
// a time no sandbox shows.
const widgetClock = 4102444799999

// playgroundWidget renders the playground widget. The widget of a learner
// with an empty sandbox (or none yet) and no transcript differs only in
// its clock: it is kept, by where it is shown, and the clock filled in.
func (s *Server) playgroundWidget(ctx context.Context, b *bytes.Buffer, v views.Playground, token string) error {
	if len(v.Keys) > 0 || len(v.Entries) > 0 || v.Transcript != "" || v.Client != "A" {
		return views.PlaygroundWidget(v).Render(views.WithCSRF(ctx, token), b)
	}
	key := v.From + "|" + v.Topic
	kept, _ := s.widgets.Load(key)
	p, _ := kept.(*keptPage)
	if p == nil {
		w := v
		w.ClockMS = widgetClock
		var page bytes.Buffer
		if err := views.PlaygroundWidget(w).Render(views.WithCSRF(ctx, pageMarkers[holeCSRF]), &page); err != nil {
			return err
		}
		kept := bytes.ReplaceAll(page.Bytes(), []byte(strconv.FormatInt(widgetClock, 10)), []byte(pageMarkers[holeClockMS]))
		kept = bytes.ReplaceAll(kept, []byte(views.ClockText(widgetClock)), []byte(pageMarkers[holeClockText]))
		p = splitPage(kept, http.StatusOK, nil)
		s.widgets.Store(key, p)
	}
	b.Grow(p.size() + len(token) + 64)
	for i, part := range p.parts {
		b.Write(part)
		if i < len(p.holes) {
			switch p.holes[i] {
			case holeCSRF:
				b.WriteString(token)
			case holeClockMS:
				b.WriteString(strconv.FormatInt(v.ClockMS, 10))
			case holeClockText:
				b.WriteString(views.ClockText(v.ClockMS))
			}
		}
	}
	return nil
}

// size is the length of the page's kept parts, its holes left out.
func (p *keptPage) size() int {
	n := 0
	for _, part := range p.parts {
		n += len(part)
	}
	return n
}

// playgroundHole stands where a kept page has the playground widget.
var playgroundHole = templ.Raw(pageMarkers[holePlayground])

// compressed returns the parts as deflate blocks, compressing them once.
func (p *keptPage) compressed() [][]byte {
	p.gzOnce.Do(func() {
		for _, part := range p.parts {
			var b bytes.Buffer
			zw, _ := flate.NewWriter(&b, 5) // a valid level never fails
			_, _ = zw.Write(part)
			_ = zw.Flush() // ends on a byte boundary, not the final block
			p.gz = append(p.gz, b.Bytes())
		}
	})
	return p.gz
}

// pageFill is what a request fills a page's holes with.
type pageFill struct {
	csrf string
	// playground writes the playground widget.
	playground func(*bytes.Buffer) error
}

// writePage writes a kept page with its holes filled, gzipped when the
// client accepts it and the compress middleware left it to us.
func (s *Server) writePage(c echo.Context, p *keptPage, fill pageFill) error {
	// A page has at most one playground, rendered once here.
	var widget []byte
	size := p.size()
	for _, h := range p.holes {
		switch h {
		case holeCSRF:
			size += len(fill.csrf)
		case holePlayground:
			if fill.playground != nil && widget == nil {
				wb := pageBuffers.Get().(*bytes.Buffer)
				defer putPageBuffer(wb)
				wb.Reset()
				if err := fill.playground(wb); err != nil {
					return err
				}
				widget = wb.Bytes()
			}
			size += len(widget)
		}
	}
	h := c.Response().Header()
	// Vary before the new keys: a Go map of eight entries grows on any
	// assignment, even to a key it has (noStore set Vary already).
	h[echo.HeaderVary] = varyPage
	h[echo.HeaderContentType] = htmlType
	// The page goes out in one write: a write per part would be a system
	// call per part, dearer than copying the bytes.
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer putPageBuffer(buf)
	buf.Reset()
	if !selfGzipped(c) || !acceptsGzip(c.Request()) {
		buf.Grow(size)
		for i, part := range p.parts {
			buf.Write(part)
			if i < len(p.holes) {
				switch p.holes[i] {
				case holeCSRF:
					buf.WriteString(fill.csrf)
				case holePlayground:
					buf.Write(widget)
				}
			}
		}
	} else {
		// The CRC reads the token as bytes (a copy: crc32 keeps no
		// promise not to hold on to what it reads).
		token := []byte(fill.csrf)
		// The gzip header: deflate, no name, no time, unknown OS.
		buf.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
		crc := uint32(0)
		for i, part := range p.compressed() {
			crc = crc32.Update(crc, crc32.IEEETable, p.parts[i])
			buf.Write(part)
			if i >= len(p.holes) {
				continue
			}
			var f []byte
			switch p.holes[i] {
			case holeCSRF:
				f = token
			case holePlayground:
				f = widget
			}
			if len(f) > 0 {
				crc = crc32.Update(crc, crc32.IEEETable, f)
				writeStored(buf, f)
			}
		}
		// The final block (fixed Huffman, empty), then CRC-32 and size.
		var tail [10]byte
		tail[0] = 0x03
		binary.LittleEndian.PutUint32(tail[2:], crc)
		binary.LittleEndian.PutUint32(tail[6:], uint32(size))
		buf.Write(tail[:])
		h[echo.HeaderContentEncoding] = gzipEncoding
	}
	if buf.Len() > framedInOneWrite {
		// Chunked framing would cost a write of its own at the end.
		h.Set(echo.HeaderContentLength, strconv.Itoa(buf.Len()))
	}
	c.Response().WriteHeader(p.code)
	_, err := c.Response().Write(buf.Bytes())
	return err
}

// framedInOneWrite is the largest page sent without a Content-Length.
// net/http writes a connection's answer through a 4 KB buffer: a page of
// up to 3 KB goes out with its headers in one write, framed (chunked) or
// not, and the header it would cost is dearer than the framing. A larger
// page, framed, costs one more write than with its length.
const framedInOneWrite = 3 << 10

// htmlType is the Content-Type of pages, shared (net/http copies the
// header as it writes it).
var htmlType = []string{echo.MIMETextHTMLCharsetUTF8}

// gzipEncoding is the Content-Encoding of a gzipped page, shared as
// htmlType.
var gzipEncoding = []string{"gzip"}

// varyPage is the Vary of a page: it differs by the learner's cookie and
// by whether it is gzipped. One line, as a list; shared, as htmlType.
var varyPage = []string{echo.HeaderCookie + ", " + echo.HeaderAcceptEncoding}

// pageBuffers are the buffers pages and widgets are assembled in, and
// JSON request bodies read into (decodeJSON).
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putPageBuffer returns buf to the pool, unless it grew past a megabyte:
// no one page keeps that much memory in the pool.
func putPageBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= 1<<20 {
		pageBuffers.Put(buf)
	}
}

// writeStored writes b as uncompressed deflate blocks, which may follow
// a sync flush: each a header byte (not final, stored), LEN and its
// complement, and up to 65,535 bytes.
func writeStored(buf *bytes.Buffer, b []byte) {
	for len(b) > 0 {
		n := min(len(b), 65535)
		var head [5]byte
		binary.LittleEndian.PutUint16(head[1:], uint16(n))
		binary.LittleEndian.PutUint16(head[3:], ^uint16(n))
		buf.Write(head[:])
		buf.Write(b[:n])
		b = b[n:]
	}
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values(echo.HeaderAcceptEncoding) {
		for enc := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(enc), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
			if !ok {
				return true
			}
			f, err := strconv.ParseFloat(q, 64)
			return err == nil && f > 0
		}
	}
	return false
}

// csrfOf is the request's CSRF token, as the CSRF middleware left it.
func csrfOf(c echo.Context) string {
	token, _ := c.Get(csrfContextKey).(string)
	return token
}

// setCSRF leaves the request's CSRF token for the handlers.
func setCSRF(c echo.Context, token string) {
	c.Set(csrfContextKey, token)
}
