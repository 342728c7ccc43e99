package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// Playground runs learners' sandboxes.
type Playground interface {
	// Exec runs a line; its Result lists the keys after it (Result.Keys)
	// for the key inspector.
	Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
	Reset(learner string) error
	// Advance moves the sandbox clock and names the keys that expired,
	// in one call.
	Advance(learner string, d time.Duration) (playground.Advanced, error)
	// Keys lists the keys for the inspector; the sandbox workers' list
	// them from the copy the server keeps, without a round trip.
	Keys(learner string) ([]playground.KeyInfo, error)
	Clock(learner string) (time.Time, error)
	// Node stops, starts or restarts one of the learner's nodes, or
	// makes its clock jump; Nodes describes them all.
	Node(ctx context.Context, learner string, n int, op playground.NodeOp) (playground.NodeChange, error)
	Nodes(learner string) ([]playground.NodeInfo, error)
}

type execRequest struct {
	Line   string `json:"line"`
	Client string `json:"client"`
	// Node is where the line goes: 1 to 5, "all" or "storage"; without
	// it, node 1 or the target the line starts with ("@3 GET k").
	Node any `json:"node"`
}

type advanceRequest struct {
	MS int64 `json:"ms"`
}

// maxAdvance bounds one clock jump; a day is far beyond any lesson TTL.
const maxAdvance = 24 * time.Hour

func parseClient(s string) (playground.Client, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "A", "":
		return playground.ClientA, nil
	case "B":
		return playground.ClientB, nil
	}
	return "", echo.NewHTTPError(http.StatusBadRequest, `client must be "A" or "B"`)
}

func (s *Server) handleExecAPI(c echo.Context) error {
	var req execRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Client == "" {
		return echo.NewHTTPError(http.StatusBadRequest, `client must be "A" or "B"`)
	}
	client, err := parseClient(req.Client)
	if err != nil {
		return err
	}
	line, err := withTarget(req.Node, req.Line)
	if err != nil {
		return err
	}
	res, err := s.exec(c, client, line)
	if err != nil {
		return err
	}
	var nodes []byte
	if res.NodesChanged {
		_, nodes = s.nodeItems(c, s.learnerID(c))
	}
	if res.Keys == nil {
		// The keys are an extra around the reply: without them the page
		// keeps the rows it has.
		s.failures.Warn("playground keys", "error", "the sandbox could not list its keys after a line")
		return writeExecAnswer(c, res, nil, nodes)
	}
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer putPageBuffer(buf)
	buf.Reset()
	rows := appendKeyRows(buf.AvailableBuffer(), res.Keys)
	if rows == nil {
		rows = []byte{} // no keys: the page empties its rows
	}
	return writeExecAnswer(c, res, rows, nodes)
}

// keyRows are the key inspector's rows for the learner; none for a
// learner without a sandbox, or whose sandbox cannot say (the log says
// why).
func (s *Server) keyRows(id string) []views.PGKey {
	if id == "" {
		return nil
	}
	keys, err := s.playground.Keys(id)
	if err != nil {
		s.failures.Warn("playground keys", "error", err)
		return nil
	}
	return pgKeys(keys)
}

// pgKeys makes the key inspector's rows of a key listing.
func pgKeys(keys []playground.KeyInfo) []views.PGKey {
	rows := make([]views.PGKey, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, views.PGKey{Key: k.Key, Type: k.Type, Value: k.Value, TTL: ttlText(k.PTTLMS), PTTLMS: k.PTTLMS, Node: k.Node})
	}
	return rows
}

// exec runs one line for the learner and notes that they have started the
// topics that have a playground.
func (s *Server) exec(c echo.Context, client playground.Client, line string) (playground.Result, error) {
	id := s.ensureLearner(c)
	charge, err := s.limitScript(c, id, line)
	if err != nil {
		return playground.Result{}, err
	}
	start := time.Now()
	// The address counts the learner's sandbox towards its cap per address.
	ctx := playground.WithAddress(c.Request().Context(), clientAddress(c))
	res, err := s.playground.Exec(ctx, id, client, line)
	used := limit.LineCost(res.ScriptTime, res.RunTime)
	if err != nil && (res.Output == "" || errors.Is(err, playground.ErrStopped)) {
		// The sandbox could not say what the line used (its worker stopped
		// while running it, perhaps because of it): it may have run all
		// that time, and a line that brings a worker down must not be free.
		used = time.Since(start)
	}
	charge(used, res.Stopped)
	// A refused line (not allowed, over a limit) is still a reply: the
	// terminal shows it as an (error) line, as redis-cli would.
	refused := errors.Is(err, playground.ErrNotAllowed) || errors.Is(err, playground.ErrLimit)
	if err != nil && !(refused && res.Output != "") {
		return res, err
	}
	s.markStarted(c.Request().Context(), id, clientAddress(c))
	s.metrics.exec(client)
	s.workshopEvent(c, workshop.Event{Kind: workshop.EventCommand})
	return res, nil
}

func (s *Server) handleResetAPI(c echo.Context) error {
	id := s.ensureLearner(c)
	if err := s.playground.Reset(id); err != nil {
		return err
	}
	// A transcript kept from the forms is of the sandbox just emptied.
	s.clearFlash(c)
	now, err := s.playground.Clock(id)
	if err != nil {
		return err
	}
	var transcript strings.Builder
	if err := views.PGEntries(noticeEntries([]string{resetNotice})).Render(c.Request().Context(), &transcript); err != nil {
		return err
	}
	_, nodes := s.nodeItems(c, id)
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "clock_ms": now.UnixMilli(), "transcript_html": transcript.String(), "nodes_html": string(nodes)})
}

// resetNotice is the transcript after a reset.
const resetNotice = "The sandbox was reset: no keys, no scripts."

func (s *Server) handleAdvanceAPI(c echo.Context) error {
	var req advanceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	d, err := advanceBy(req.MS)
	if err != nil {
		return err
	}
	id := s.ensureLearner(c)
	a, err := s.playground.Advance(id, d)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var transcript, keys strings.Builder
	if err := views.PGEntries(noticeEntries(advanceNotices(req.MS, a.Expired))).Render(ctx, &transcript); err != nil {
		return err
	}
	if err := views.PGKeyRows(s.keyRows(id)).Render(ctx, &keys); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, advanceResponse{
		ClockMS: a.Now.UnixMilli(), Expired: a.Expired,
		TranscriptHTML: transcript.String(), KeysHTML: keys.String(),
	})
}

// advanceResponse is the answer to a clock advance: the sandbox clock
// after it, the keys whose TTL ran out in it, and the markup the page
// puts in place: the transcript's notices and the key inspector's rows.
type advanceResponse struct {
	ClockMS        int64    `json:"clock_ms"`
	Expired        []string `json:"expired"`
	TranscriptHTML string   `json:"transcript_html"`
	KeysHTML       string   `json:"keys_html"`
}

// noticeEntries makes transcript entries of notices.
func noticeEntries(notices []string) []views.PGEntry {
	entries := make([]views.PGEntry, len(notices))
	for i, n := range notices {
		entries[i] = views.PGEntry{Notice: n}
	}
	return entries
}

// advanceNotices are the transcript's lines for a clock advance: how far
// it moved, then each key that expired, "lock:invoice:7 expired". The
// page without JavaScript and the advance API render them alike.
func advanceNotices(ms int64, expired []string) []string {
	lines := []string{"The sandbox clock moved forward " + views.Seconds(ms) + "."}
	if len(expired) == 0 {
		return append(lines, "No key expired.")
	}
	return append(lines, playground.ExpiredLines(expired)...)
}

func advanceBy(ms int64) (time.Duration, error) {
	d := time.Duration(ms) * time.Millisecond
	if ms <= 0 || d > maxAdvance {
		return 0, echo.NewHTTPError(http.StatusBadRequest, "ms must be between 1 and 86400000 (a day)")
	}
	return d, nil
}

func (s *Server) handleKeysAPI(c echo.Context) error {
	id := s.learnerID(c)
	if id == "" {
		return c.JSON(http.StatusOK, []playground.KeyInfo{})
	}
	node := 0
	if q := c.QueryParam("node"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > playground.MaxNodes {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("node must be 1 to %d", playground.MaxNodes))
		}
		node = n
	}
	keys, err := s.playground.Keys(id)
	if err != nil {
		return err
	}
	out := make([]playground.KeyInfo, 0, len(keys))
	for _, k := range keys {
		if node == 0 || k.Node == node {
			out = append(out, k)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// markStarted records, once per learner and process, that the learner has
// begun the topics that carry a playground. A store that is down must not
// break the playground, so errors only go to the log.
func (s *Server) markStarted(ctx context.Context, learner, addr string) {
	if !s.started.add(learner) {
		return
	}
	course, err := s.content.Course()
	if err != nil {
		// An author's broken -content file: forget the learner, so that
		// the next command, after the fix, marks them.
		s.failures.Warn("mark topic started", "error", err)
		s.started.remove(learner)
		return
	}
	// A newcomer whose progress may not be saved (saving.go) is not
	// asked again by this process: their commands run all the same.
	if notSaved, err := s.admitProgress(ctx, learner, addr); notSaved != "" || err != nil {
		if err != nil {
			s.failures.Warn("mark topic started", "error", err)
			s.started.remove(learner)
		}
		return
	}
	for _, l := range course.Lessons() {
		if !l.Playground {
			continue
		}
		err := s.progress.MarkStarted(ctx, learner, l.Slug)
		if notSavedFor(err) != "" {
			return
		}
		if err != nil {
			s.failures.Warn("mark topic started", "error", err)
			s.started.remove(learner)
		}
	}
}

// seenSet remembers up to a bound of ids; when full it starts over, which
// costs at most one more store write per learner.
type seenSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
	max int
}

func (s *seenSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	if s.ids == nil || len(s.ids) >= s.max {
		s.ids = map[string]struct{}{}
	}
	s.ids[id] = struct{}{}
	return true
}

func (s *seenSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// Transcripts for the no-JavaScript forms travel with the page, in a
// hidden field, so the server keeps no per-learner screen state.
const (
	maxTranscriptEntries = 30
	maxTranscriptBytes   = 24 << 10
)

// maxShownLine is how much of a typed line the transcript repeats: a
// longer one (a paste, or a line the playground refused for its length)
// is cut, so that the page costs what a reply does, not what was posted.
const maxShownLine = 1 << 10

// shownLine is line as the transcript shows it: cut at maxShownLine
// bytes, on a character boundary, saying how long it was.
func shownLine(line string) string {
	if len(line) <= maxShownLine {
		return line
	}
	cut := maxShownLine
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "… (" + strconv.Itoa(len(line)) + " bytes in all)"
}

func decodeTranscript(raw string) []views.PGEntry {
	var entries []views.PGEntry
	if raw == "" || len(raw) > 4*maxTranscriptBytes || json.Unmarshal([]byte(raw), &entries) != nil {
		return nil
	}
	return trimTranscript(entries)
}

func trimTranscript(entries []views.PGEntry) []views.PGEntry {
	if len(entries) > maxTranscriptEntries {
		entries = entries[len(entries)-maxTranscriptEntries:]
	}
	for {
		b, _ := json.Marshal(entries)
		if len(b) <= maxTranscriptBytes || len(entries) <= 1 {
			return entries
		}
		entries = entries[1:]
	}
}

func encodeTranscript(entries []views.PGEntry) string {
	b, _ := json.Marshal(trimTranscript(entries))
	return string(b)
}

// handlePlaygroundForm is the playground without JavaScript: the forms post
// here with the transcript so far, and are sent back to the page they came
// from (post/redirect/get), which shows it with the new reply.
func (s *Server) handlePlaygroundForm(c echo.Context) error {
	entries := decodeTranscript(c.FormValue("transcript"))
	if _, sent := c.Request().PostForm["transcript"]; !sent {
		// A lesson example's form, cached with the page, carries no
		// transcript: the one the last redirect left goes on instead.
		if st := s.flashState(c); st != nil {
			entries = st.entries
		}
	}
	id := s.ensureLearner(c)
	client, err := parseClient(c.FormValue("client"))
	if err != nil {
		return err
	}
	switch action := c.Param("action"); action {
	case "exec":
		line, err := withTarget(c.FormValue("node"), c.FormValue("line"))
		if err != nil {
			return err
		}
		res, err := s.exec(c, client, line)
		if err != nil {
			return err
		}
		if res.Clear {
			entries = nil
		} else {
			entries = append(entries, views.PGEntry{Client: string(client), Line: shownLine(line), Output: res.Output, Notice: res.Notice})
		}
	case "advance":
		ms, _ := strconv.ParseInt(c.FormValue("ms"), 10, 64)
		d, err := advanceBy(ms)
		if err != nil {
			return err
		}
		a, err := s.playground.Advance(id, d)
		if err != nil {
			return err
		}
		entries = append(entries, noticeEntries(advanceNotices(ms, a.Expired))...)
	case "reset":
		if err := s.playground.Reset(id); err != nil {
			return err
		}
		entries = noticeEntries([]string{resetNotice})
	case "node":
		more, err := s.nodeForm(c, id)
		if err != nil {
			return err
		}
		entries = append(entries, more...)
	default:
		return echo.ErrNotFound
	}
	target, err := s.pgRedirect(c)
	if err != nil {
		return err
	}
	// The line form's target stays chosen on the page it leads back to;
	// the other forms keep the one it had.
	var node string
	if c.Param("action") == "exec" {
		t, _ := nodeTarget(c.FormValue("node"))
		node = strings.TrimPrefix(t, "@")
	} else if st := s.flashState(c); st != nil {
		node = st.node
	}
	s.setFlash(c, pgFlash{Client: string(client), Entries: entries, Node: node})
	return c.Redirect(http.StatusSeeOther, target)
}

// pgState is what the playground view shows after a form post.
type pgState struct {
	entries []views.PGEntry
	client  string
	node    string // the line form's target, as nodeTarget reads it
}

// playgroundView builds the playground widget for the learner.
func (s *Server) playgroundView(c echo.Context, st *pgState, from, topic string) views.Playground {
	v := views.Playground{From: from, Topic: topic, Client: "A", Nodes: pgNodes(playground.FreshNodes())}
	if st == nil {
		st = s.flashState(c)
	}
	if st != nil {
		v.Entries, v.Client, v.Target = st.entries, st.client, st.node
		v.Transcript = encodeTranscript(st.entries)
	}
	// The keys and the clock are extras around the terminal: if the
	// sandbox cannot say (a worker restarting), the page still works
	// without them, and the log says why they are missing.
	if id := s.learnerID(c); id != "" {
		v.Keys = s.keyRows(id)
		if nodes, _ := s.nodeItems(c, id); nodes != nil {
			v.Nodes = nodes
		}
		if now, err := s.playground.Clock(id); err != nil {
			s.failures.Warn("playground clock", "error", err)
		} else {
			v.ClockMS = now.UnixMilli()
		}
	}
	return v
}

func ttlText(ms int64) string {
	if ms < 0 {
		return "no TTL"
	}
	return views.Seconds(ms - ms%100)
}

func (s *Server) handlePlaygroundPage(c echo.Context) error {
	s.ensureLearner(c)
	m := views.PlaygroundPage{
		Page:       s.page("Playground", "A private Redis sandbox: type redis-cli commands as client A or B.", "playground"),
		Playground: s.playgroundView(c, nil, "page", ""),
	}
	m.Page.Scripts = append(m.Page.Scripts, s.assets.href("playground.js"))
	return render(c, http.StatusOK, views.PlaygroundFullPage(m))
}
