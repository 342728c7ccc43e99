package web

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRaceAPI(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/api/race/scenarios")
	var list []scenarioJSON
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list) < 7 {
		t.Fatalf("GET /api/race/scenarios = %d, %d scenarios", resp.StatusCode, len(list))
	}
	for _, sc := range list {
		if sc.ID == "" || sc.Title == "" || sc.Summary == "" || sc.Defaults.TTL <= 0 {
			t.Errorf("scenario %+v lacks a field", sc)
		}
	}
	for _, tt := range []struct {
		query, verdict string
	}{
		{"gc-pause?fencing=false", "stale-write-accepted"},
		{"gc-pause?fencing=true", "stale-write-rejected"},
		{"gc-pause?fencing=false&pause_ms=2000", "safe"},
	} {
		resp, body := get(t, ts.URL, "/api/race/"+tt.query)
		var r raceJSON
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil {
			t.Fatalf("GET %s = %d %.200s", tt.query, resp.StatusCode, body)
		}
		if r.Verdict != tt.verdict || len(r.Events) == 0 || r.Events[0].Text == "" {
			t.Errorf("GET %s: verdict %q with %d events; want %q", tt.query, r.Verdict, len(r.Events), tt.verdict)
		}
		for i := 1; i < len(r.Events); i++ {
			if r.Events[i].TMS < r.Events[i-1].TMS {
				t.Errorf("GET %s: events out of time order at %d", tt.query, i)
			}
		}
	}
	// Every scenario runs with its defaults, and the verdict uses the API's names.
	names := map[string]bool{"safe": true, "two-holders": true, "stale-write-accepted": true, "stale-write-rejected": true, "foreign-lock-deleted": true}
	for _, sc := range list {
		resp, body := get(t, ts.URL, "/api/race/"+sc.ID)
		var r raceJSON
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil || !names[r.Verdict] {
			t.Errorf("GET /api/race/%s = %d, verdict %q", sc.ID, resp.StatusCode, r.Verdict)
		}
	}
	for _, tt := range []struct {
		query  string
		status int
		want   string
	}{
		{"gc-pause?ttl_ms=5", 400, "ttl_ms"},
		{"gc-pause?ttl_ms=abc", 400, "ttl_ms"},
		{"gc-pause?pause_ms=-1", 400, "pause_ms"},
		{"gc-pause?fencing=maybe", 400, "fencing"},
		{"gc-pause?release=drop", 400, "release"},
		{"nope", 404, "no race scenario"},
	} {
		resp, body := get(t, ts.URL, "/api/race/"+tt.query)
		var e apiError
		if resp.StatusCode != tt.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
			t.Errorf("GET /api/race/%s = %d %s; want %d mentioning %q", tt.query, resp.StatusCode, body, tt.status, tt.want)
		}
	}
}
