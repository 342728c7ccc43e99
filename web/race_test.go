package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/race"
)

func TestRaceAPI(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/api/race/scenarios")
	var list []scenarioJSON
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list) < 7 {
		t.Fatalf("GET /api/race/scenarios = %d, %d scenarios", resp.StatusCode, len(list))
	}
	for _, sc := range list {
		if sc.ID == "" || sc.Title == "" || len(sc.Setup) == 0 || sc.Defaults.TTL <= 0 || !slices.Contains(sc.Targets, "client1") ||
			len(sc.FaultTargets) != len(sc.Targets) || sc.FaultTargets[0] != (race.Target{ID: "client1", Title: "client 1"}) {
			t.Errorf("scenario %+v lacks a field", sc)
		}
	}
	for _, tt := range []struct {
		query, verdict string
	}{
		{"gc-pause?fencing=false", "two-holders"},
		{"gc-pause?fencing=true", "two-holders"},
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
	// Every scenario runs with its defaults, the verdict uses the API's
	// names, every outcome comes with the race's words for it, and the
	// setup is the scenario's.
	names := map[string]bool{}
	for _, o := range race.Outcomes() {
		names[string(o)] = true
	}
	for _, sc := range list {
		resp, body := get(t, ts.URL, "/api/race/"+sc.ID)
		var r raceJSON
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil || !names[r.Verdict] {
			t.Errorf("GET /api/race/%s = %d, verdict %q", sc.ID, resp.StatusCode, r.Verdict)
		}
		for _, o := range r.Outcomes {
			if id := race.Outcome(o.Outcome); o.Label != id.Label() || o.Short != id.Short() || o.Label == "" || o.Short == "" {
				t.Errorf("GET /api/race/%s: outcome %+v; want the race's label %q and short words %q", sc.ID, o, id.Label(), id.Short())
			}
		}
		if !slices.Equal(r.Setup, sc.Setup) {
			t.Errorf("GET /api/race/%s: setup %q; want the scenario's, %q", sc.ID, r.Setup, sc.Setup)
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
		{"watchdog?renew=sometimes", 400, "renew"},
		{"failover?wait=perhaps", 400, "wait"},
		{"failover?replication_lag_ms=-3", 400, "replication_lag_ms"},
		{"nope", 404, "no race scenario"},
	} {
		resp, body := get(t, ts.URL, "/api/race/"+tt.query)
		var e apiError
		if resp.StatusCode != tt.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
			t.Errorf("GET /api/race/%s = %d %s; want %d mentioning %q", tt.query, resp.StatusCode, body, tt.status, tt.want)
		}
	}
}

// TestRaceAPIOutcomes: every outcome of a run is listed with the event
// where it happened, and the verdict is the most serious of them.
func TestRaceAPIOutcomes(t *testing.T) {
	ts := newTestServer(t)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"gc-pause", []string{"two-holders", "stale-write-accepted"}},
		{"gc-pause?fencing=true", []string{"two-holders", "stale-write-rejected"}},
		{"gc-pause?pause_ms=2000", []string{"safe"}},
		{"normal", []string{"safe"}},
		{"failover", []string{"two-holders", "stale-write-accepted"}},
		{"failover?fencing=true", []string{"two-holders", "stale-write-accepted"}},
		{"failover?wait=true", []string{"safe"}},
		{"watchdog", []string{"lock-never-freed", "starved"}},
		{"watchdog?renew=progress", []string{"safe"}},
		{"release-del", []string{"foreign-lock-deleted", "two-holders", "stale-write-accepted"}},
		{"normal?fault=pause:client1:500:12000", []string{"two-holders", "stale-write-accepted"}},
	} {
		resp, body := get(t, ts.URL, "/api/race/"+tt.query)
		var r raceJSON
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil {
			t.Fatalf("GET %s = %d %.200s", tt.query, resp.StatusCode, body)
		}
		var got []string
		for _, o := range r.Outcomes {
			got = append(got, o.Outcome)
			if o.Event < 0 || o.Event >= len(r.Events) || r.Events[o.Event].TMS != o.TMS || o.Text == "" {
				t.Errorf("GET %s: outcome %+v does not point at one of the %d events", tt.query, o, len(r.Events))
			}
		}
		if !slices.Equal(got, tt.want) || r.Verdict != tt.want[0] {
			t.Errorf("GET %s: outcomes %q, verdict %q; want %q, verdict %q", tt.query, got, r.Verdict, tt.want, tt.want[0])
		}
	}
}

// TestRaceAPIFaults: fault= is repeatable, changes the run, comes back in
// the params, and a bad one is a 400 that says what is wrong.
func TestRaceAPIFaults(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/api/race/normal?fault=pause:client1:1000:12000&fault=delay:client2:0:10")
	var r struct {
		Params struct {
			Faults []string `json:"faults"`
		} `json:"params"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("GET normal with faults = %d %.300s", resp.StatusCode, body)
	}
	if want := []string{"pause:client1:1000:12000", "delay:client2:0:10"}; !slices.Equal(r.Params.Faults, want) {
		t.Errorf("GET normal with faults: params.faults = %q; want %q", r.Params.Faults, want)
	}
	// Each fault comes with its sentence, the last lines of the setup.
	var run raceJSON
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatal(err)
	}
	want := []raceFaultJSON{
		{"pause:client1:1000:12000", "At 1 s, client 1 pauses for 12 s."},
		{"delay:client2:0:10", "At 0 s, the next reply to client 2 is delayed by 0.01 s."},
	}
	if !slices.Equal(run.Faults, want) || len(run.Setup) < 3 || !slices.Equal(run.Setup[len(run.Setup)-2:], []string{want[0].Text, want[1].Text}) {
		t.Errorf("GET normal with faults: faults %+v, setup %q; want %+v, the setup ending with their sentences", run.Faults, run.Setup, want)
	}
	_, body = get(t, ts.URL, "/api/race/failover?fault=crash:redis:1000:500")
	if err := json.Unmarshal([]byte(body), &run); err != nil || len(run.Faults) != 1 || run.Faults[0].Text != "At 1 s, the primary crashes, losing its data, and restarts 0.5 s later." {
		t.Errorf("GET failover with a crash of redis: faults %+v; want the primary named", run.Faults)
	}
	for _, tt := range []struct {
		query string
		want  string
	}{
		{"normal?fault=pause:client1:1000", "KIND:TARGET:AT_MS:ARG"},
		{"normal?fault=nap:client1:0:10", "must be pause, crash, clock-jump, clock-back or delay"},
		{"normal?fault=pause:redis:0:10", "must be client1, client2 or client3"},
		{"normal?fault=pause:client1:0:abc", "not a whole number of milliseconds"},
		{"normal?fault=pause:client3:0:10", "has 2 clients"},
		{"redlock-crash?fault=crash:redis:0:10", "node1..node5"},
		{"normal?fault=crash:node4:0:10", "one Redis node"},
	} {
		resp, body := get(t, ts.URL, "/api/race/"+tt.query)
		var e apiError
		if resp.StatusCode != 400 || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
			t.Errorf("GET /api/race/%s = %d %s; want 400 mentioning %q", tt.query, resp.StatusCode, body, tt.want)
		}
	}
}

// TestRaceAPIAddsFault: the API takes the fault form's fields as /race
// does, and answers with the fault added and the address of the run.
func TestRaceAPIAddsFault(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/api/race/redlock-crash?fault=pause:client1:100:200&add_fault=1&fault_kind=crash&fault_target=node2&fault_at_ms=1500&fault_arg_ms=3000&fault_persist=true")
	var run raceJSON
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &run) != nil {
		t.Fatalf("GET redlock-crash adding a fault = %d %s", resp.StatusCode, body)
	}
	var specs []string
	for _, f := range run.Faults {
		specs = append(specs, f.Spec)
	}
	if want := []string{"pause:client1:100:200", "crash:node2:1500:3000-persist"}; !slices.Equal(specs, want) ||
		!strings.Contains(run.Query, "scenario=redlock-crash") || !strings.Contains(run.Query, "fault=crash%3Anode2%3A1500%3A3000-persist") {
		t.Errorf("adding a fault: faults %q, query %q; want %q, in the query too", specs, run.Query, want)
	}
	resp, body = get(t, ts.URL, "/api/race/normal?add_fault=1&fault_kind=pause&fault_target=redis&fault_at_ms=0&fault_arg_ms=10")
	if resp.StatusCode != 400 || !strings.Contains(body, "must be client1, client2 or client3") {
		t.Errorf("adding a pause of redis = %d %s; want 400 saying what a pause may hit", resp.StatusCode, body)
	}
}

// TestRaceDonePrediction: a prediction is a set of outcomes, judged one
// by one against the server's own run.
func TestRaceDonePrediction(t *testing.T) {
	ts := newTestServer(t)
	alice := newLearner(t, ts.URL)
	for _, tt := range []struct {
		name, body string
		right      bool
		judged     map[string][2]bool // outcome -> expected, happened
	}{
		{"all of them", `{"scenario":"gc-pause","params":{},"prediction":["two-holders","stale-write-accepted"]}`, true,
			map[string][2]bool{"two-holders": {true, true}, "stale-write-accepted": {true, true}, "safe": {false, false}}},
		{"one missed", `{"scenario":"gc-pause","params":{"fencing":"false"},"prediction":["two-holders"]}`, false,
			map[string][2]bool{"two-holders": {true, true}, "stale-write-accepted": {false, true}}},
		{"one name, as before", `{"scenario":"gc-pause","params":{"pause_ms":"2000"},"prediction":"safe"}`, true,
			map[string][2]bool{"safe": {true, true}, "two-holders": {false, false}}},
		{"faults in params", `{"scenario":"normal","params":{"fault":["pause:client1:1000:1"]},"prediction":["safe"]}`, true,
			map[string][2]bool{"safe": {true, true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := alice.do("POST", "/api/race/done", "application/json", tt.body)
			var r raceDoneJSON
			if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
				t.Fatalf("POST /api/race/done %s = %d %s", tt.body, code, body)
			}
			if n := len(race.Outcomes()); r.PredictionRight != tt.right || len(r.Judged) != n {
				t.Errorf("POST %s: prediction_right %v with %d judgements; want %v with %d", tt.body, r.PredictionRight, len(r.Judged), tt.right, n)
			}
			for _, j := range r.Judged {
				want, ok := tt.judged[j.Outcome]
				if ok && (j.Expected != want[0] || j.Happened != want[1]) {
					t.Errorf("POST %s: %s judged expected %v, happened %v; want %v, %v", tt.body, j.Outcome, j.Expected, j.Happened, want[0], want[1])
				}
				if j.Right != (j.Expected == j.Happened) {
					t.Errorf("POST %s: %+v: right should be expected == happened", tt.body, j)
				}
				// The outcomes the learner expected or that happened
				// are said in a sentence, with the race's label.
				if j.Label != race.Outcome(j.Outcome).Label() || (j.Expected || j.Happened) != (j.Text != "") || j.Text != "" && !strings.Contains(j.Text, "“"+j.Label+"”") {
					t.Errorf("POST %s: %+v; want the label, and a sentence with it exactly when expected or happened", tt.body, j)
				}
			}
		})
	}
	for _, tt := range []struct{ body, want string }{
		{`{"scenario":"gc-pause","params":{},"prediction":["two holders"]}`, "must be one of"},
		{`{"scenario":"gc-pause","params":{},"prediction":[1]}`, "malformed JSON"},
		{`{"scenario":"gc-pause","params":{"fault":"pause:x:0:1"},"prediction":["safe"]}`, "pause target"},
	} {
		code, body := alice.do("POST", "/api/race/done", "application/json", tt.body)
		if code != 400 || !strings.Contains(body, tt.want) {
			t.Errorf("POST /api/race/done %s = %d %s; want 400 mentioning %q", tt.body, code, body, tt.want)
		}
	}
}
