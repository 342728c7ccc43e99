package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/locklab/locklab/playground"
)

func (l *learnerClient) execOn(client, line string, node any) (int, playground.Result, string) {
	l.t.Helper()
	b, _ := json.Marshal(execRequest{Line: line, Client: client, Node: node})
	code, body := l.do("POST", "/api/playground/exec", "application/json", string(b))
	var r playground.Result
	_ = json.Unmarshal([]byte(body), &r)
	return code, r, body
}

func (l *learnerClient) node(n, body string) (int, nodeResponse, string) {
	l.t.Helper()
	code, out := l.do("POST", "/api/playground/nodes/"+n, "application/json", body)
	var r nodeResponse
	_ = json.Unmarshal([]byte(out), &r)
	return code, r, out
}

// TestPlaygroundNodesAPI drives the five nodes and the storage through the
// API, as the terminal's node selector and buttons do.
func TestPlaygroundNodesAPI(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	for _, st := range []struct {
		line string
		node any
		want string
	}{
		{"SET lock a NX PX 30000", 3.0, "OK"},
		{"SET lock a NX PX 30000", "3", "(nil)"},
		{"GET lock", nil, "(nil)"},
		{"@3 GET lock", nil, `"a"`},
		{"GET lock", "all", "@1 ("},
		{"WRITE 34 report", "storage", "accepted"},
		{"WRITE 33 stale", "storage", "rejected: token 33 is lower than 34, which it has already seen"},
	} {
		code, r, body := l.execOn("A", st.line, st.node)
		if code != 200 || !strings.HasPrefix(r.Output, st.want) {
			t.Errorf("exec %q on %v = %d %s; want output starting %q", st.line, st.node, code, body, st.want)
		}
	}
	for _, bad := range []any{6.0, 0.0, "seven", 2.5, true} {
		if code, _, body := l.execOn("A", "PING", bad); code != 400 || !strings.Contains(body, "node must be") {
			t.Errorf("exec on node %v = %d %s; want 400 naming the nodes", bad, code, body)
		}
	}
	ks := l.keys()
	if len(ks) != 1 || ks[0].Node != 3 || ks[0].Key != "lock" {
		t.Errorf("keys = %+v; want lock on node 3", ks)
	}
	if code, body := l.do("GET", "/api/playground/keys?node=1", "", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("keys of node 1 = %d %s; want none", code, body)
	}
	if code, _ := l.do("GET", "/api/playground/keys?node=9", "", ""); code != 400 {
		t.Errorf("keys of node 9 = %d; want 400", code)
	}

	code, r, body := l.node("3", `{"action": "stop"}`)
	if code != 200 || r.Nodes[2].Up || !strings.Contains(r.TranscriptHTML, "Node 3 stopped") {
		t.Fatalf("stop node 3 = %d %s", code, body)
	}
	if strings.Contains(r.KeysHTML, "lock") {
		t.Errorf("the inspector lists a stopped node's keys: %s", r.KeysHTML)
	}
	if _, r, _ := l.execOn("B", "GET lock", 3.0); r.Output != "Could not connect to Redis at node 3: Connection refused" {
		t.Errorf("a line to a stopped node = %q", r.Output)
	}
	if code, r, body := l.node("3", `{"action": "start", "persist": true}`); code != 200 || !r.Nodes[2].Up || !strings.Contains(r.KeysHTML, "lock") {
		t.Errorf("start node 3 with its data = %d %s", code, body)
	}
	if code, r, body := l.node("3", `{"action": "clock", "ms": 31000}`); code != 200 || len(r.Expired) != 1 || r.Nodes[2].SkewMS != 31000 {
		t.Errorf("jump node 3's clock = %d %s; want lock expired and a skew of 31 s", code, body)
	}
	if code, body := l.do("GET", "/api/playground/nodes", "", ""); code != 200 || !strings.Contains(body, `"skew_ms":31000`) {
		t.Errorf("GET nodes = %d %s", code, body)
	}
	for _, bad := range []struct{ n, body string }{
		{"3", `{"action": "explode"}`},
		{"3", `{"action": "clock"}`},
		{"3", `{"action": "clock", "ms": 90000000}`},
		{"3", `{"action": "stop", "ms": 5}`},
		{"3", `{"action": "stop", "force": true}`},
	} {
		if code, _, body := l.node(bad.n, bad.body); code != 400 {
			t.Errorf("node %s %s = %d %s; want 400", bad.n, bad.body, code, body)
		}
	}
	for _, n := range []string{"0", "6", "x"} {
		if code, _, body := l.node(n, `{"action": "stop"}`); code != 404 {
			t.Errorf("node %s = %d %s; want 404", n, code, body)
		}
	}
}

// TestPlaygroundNodesWithoutJavaScript: the node form and the node field
// of the line form work as posts that lead back to the page.
func TestPlaygroundNodesWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	post := func(action string, v url.Values) string {
		t.Helper()
		code, page := l.do("POST", "/playground/"+action, "application/x-www-form-urlencoded", v.Encode())
		if code != http.StatusOK {
			t.Fatalf("POST /playground/%s %v = %d", action, v, code)
		}
		return html.UnescapeString(page)
	}
	page := post("exec", url.Values{"line": {"SET k v"}, "node": {"2"}, "client": {"A"}, "from": {"page"}})
	if !strings.Contains(page, "@2") {
		t.Errorf("the inspector does not say the key is on node 2")
	}
	page = post("node", url.Values{"node": {"2"}, "node_action": {"restart"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}})
	if !strings.Contains(page, "Node 2 started again without persistence") {
		t.Errorf("the page after a restart does not say what happened")
	}
	page = post("exec", url.Values{"line": {"GET k"}, "node": {"2"}, "client": {"A"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}})
	if !strings.Contains(page, "Error: Server closed the connection") {
		t.Errorf("A's first line after node 2 restarted does not find its connection closed, as redis-cli does")
	}
	page = post("exec", url.Values{"line": {"GET k"}, "node": {"2"}, "client": {"A"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}})
	if !strings.Contains(page, "(nil)") {
		t.Errorf("node 2 kept its key through a restart without persistence")
	}
	if !strings.Contains(page, `<option value="2" selected>`) {
		t.Errorf("the page after a line sent to node 2 has the selector back on another node")
	}
	page = post("advance", url.Values{"ms": {"1000"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}})
	if !strings.Contains(page, `<option value="2" selected>`) {
		t.Errorf("node 2 kept its key through a restart without persistence")
	}
	if code, _ := l.do("POST", "/playground/node", "application/x-www-form-urlencoded", url.Values{"node": {"9"}, "node_action": {"stop"}}.Encode()); code != 400 {
		t.Errorf("a form for node 9 = %d; want 400", code)
	}
}
