package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/web/views"
)

// nodeTarget is the @ word that sends a line to the node an exec request
// names: 1 to 5, "all" or "storage", as a JSON number or string; "" for
// none (node 1, or the target the line itself starts with).
func nodeTarget(node any) (string, error) {
	s := "?"
	switch v := node.(type) {
	case nil:
		return "", nil
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		if s = strings.ToLower(strings.TrimSpace(v)); s == "" {
			return "", nil // a form's selector left at its default
		}
	}
	switch {
	case s == "all" || s == "storage":
		return "@" + s, nil
	case len(s) == 1 && s[0] >= '1' && int(s[0]-'0') <= playground.MaxNodes:
		return "@" + s, nil
	}
	return "", echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(`node must be 1 to %d, "all" or "storage"`, playground.MaxNodes))
}

// withTarget puts the @ word of node before line.
func withTarget(node any, line string) (string, error) {
	t, err := nodeTarget(node)
	if err != nil || t == "" {
		return line, err
	}
	return t + " " + line, nil
}

// nodeRequest is an action on one of the learner's nodes.
type nodeRequest struct {
	Action  string `json:"action"`
	Persist bool   `json:"persist"`
	MS      int64  `json:"ms"`
}

// nodeOp reads a node action as the API and the form send it.
func nodeOp(action string, persist bool, ms int64) (playground.NodeOp, error) {
	op := playground.NodeOp{Action: playground.NodeAction(action), Persist: persist}
	switch op.Action {
	case playground.NodeStop, playground.NodeStart, playground.NodeRestart:
		if ms != 0 {
			return op, echo.NewHTTPError(http.StatusBadRequest, `ms goes with "clock" only`)
		}
	case playground.NodeClock:
		d := time.Duration(ms) * time.Millisecond
		if ms == 0 || d > maxAdvance || -d > maxAdvance {
			return op, echo.NewHTTPError(http.StatusBadRequest, "ms must be a jump of 1 to 86400000 (a day), forward or back (negative)")
		}
		op.Jump = d
	default:
		return op, echo.NewHTTPError(http.StatusBadRequest, `action must be "stop", "start", "restart" or "clock"`)
	}
	return op, nil
}

// nodeNumber reads the node of a path.
func nodeNumber(c echo.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 || n > playground.MaxNodes {
		return 0, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("there are nodes 1 to %d", playground.MaxNodes))
	}
	return n, nil
}

// nodeNotices are the transcript's lines for a node action.
func nodeNotices(c playground.NodeChange) []string {
	return append([]string{c.Text}, playground.ExpiredLines(c.Expired)...)
}

// nodeResponse is the answer to a node action: what it did, in a
// sentence and as the transcript's and the inspector's markup, and every
// node's state.
type nodeResponse struct {
	Text           string                `json:"text"`
	Expired        []string              `json:"expired"`
	Nodes          []playground.NodeInfo `json:"nodes"`
	ClockMS        int64                 `json:"clock_ms"`
	TranscriptHTML string                `json:"transcript_html"`
	KeysHTML       string                `json:"keys_html"`
	NodesHTML      string                `json:"nodes_html"`
}

func (s *Server) handleNodeAPI(c echo.Context) error {
	n, err := nodeNumber(c)
	if err != nil {
		return err
	}
	var req nodeRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	op, err := nodeOp(req.Action, req.Persist, req.MS)
	if err != nil {
		return err
	}
	id := s.ensureLearner(c)
	ch, err := s.playground.Node(c.Request().Context(), id, n, op)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var transcript, keys, nodes strings.Builder
	if err := views.PGEntries(noticeEntries(nodeNotices(ch))).Render(ctx, &transcript); err != nil {
		return err
	}
	if err := views.PGNodeItems(pgNodes(ch.Nodes)).Render(ctx, &nodes); err != nil {
		return err
	}
	if err := views.PGKeyRows(s.keyRows(id)).Render(ctx, &keys); err != nil {
		return err
	}
	now, err := s.playground.Clock(id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, nodeResponse{
		Text: ch.Text, Expired: ch.Expired, Nodes: ch.Nodes, ClockMS: now.UnixMilli(),
		TranscriptHTML: transcript.String(), KeysHTML: keys.String(), NodesHTML: nodes.String(),
	})
}

func (s *Server) handleNodesAPI(c echo.Context) error {
	id := s.learnerID(c)
	nodes, err := s.playground.Nodes(id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, nodes)
}

// nodeForm is the node action of the playground's form without
// JavaScript: it returns the transcript's lines.
func (s *Server) nodeForm(c echo.Context, id string) ([]views.PGEntry, error) {
	n, err := strconv.Atoi(c.FormValue("node"))
	if err != nil || n < 1 || n > playground.MaxNodes {
		return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("node must be 1 to %d", playground.MaxNodes))
	}
	ms, _ := strconv.ParseInt(c.FormValue("ms"), 10, 64)
	action := c.FormValue("node_action")
	if action == "" && ms != 0 {
		action = string(playground.NodeClock) // a clock button sends only its ms
	}
	op, err := nodeOp(action, c.FormValue("persist") == "on", ms)
	if err != nil {
		return nil, err
	}
	ch, err := s.playground.Node(c.Request().Context(), id, n, op)
	if err != nil {
		return nil, err
	}
	return noticeEntries(nodeNotices(ch)), nil
}

// pgNodes makes the node panel's items.
func pgNodes(info []playground.NodeInfo) []views.PGNode {
	out := make([]views.PGNode, len(info))
	for i, n := range info {
		out[i] = views.PGNode{N: n.Node, State: n.State()}
		if n.SkewMS != 0 {
			out[i].Skew = skewText(n.SkewMS)
		}
	}
	return out
}

// skewText is a clock's distance from node 1's: "+31 s", "−10 s".
func skewText(ms int64) string {
	if ms < 0 {
		return "−" + views.Seconds(-ms)
	}
	return "+" + views.Seconds(ms)
}

// nodeItems are the node panel's items for the learner, nil if their
// sandbox cannot say (the log says why).
func (s *Server) nodeItems(c echo.Context, id string) ([]views.PGNode, []byte) {
	info, err := s.playground.Nodes(id)
	if err != nil {
		s.failures.Warn("playground nodes", "error", err)
		return nil, nil
	}
	items := pgNodes(info)
	var b bytes.Buffer
	if err := views.PGNodeItems(items).Render(c.Request().Context(), &b); err != nil {
		s.failures.Warn("playground nodes", "error", err)
		return items, nil
	}
	return items, b.Bytes()
}
