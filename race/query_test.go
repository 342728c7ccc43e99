package race

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQueryRoundTrip: the query of a run, read over any scenario's
// defaults, gives the run's parameters back.
func TestQueryRoundTrip(t *testing.T) {
	full := defaults()
	full.Pause, full.ClockJump, full.RestartDelay, full.ReplicationLag = 15*time.Second, 3*time.Second, 250*time.Millisecond, 40*time.Millisecond
	full.Fencing, full.Wait, full.Release, full.Renew, full.Seed = true, true, ReleaseDel, RenewProgress, 1<<63+5
	full.Faults = []Fault{
		{Kind: FaultPause, Target: "client1", At: time.Second, Length: 15 * time.Second},
		{Kind: FaultCrash, Target: "node3", At: 500 * time.Millisecond, Length: 2 * time.Second, Persist: true},
		{Kind: FaultCrash, Target: "client2", At: 700 * time.Millisecond},
		{Kind: FaultClockBack, Target: "redis", Length: MaxDuration},
		{Kind: FaultDelay, Target: "client2", Length: time.Millisecond},
	}
	for _, in := range List() {
		// A query names no renewal mode when p has none ("" in every
		// scenario but the watchdog), so a scenario's own defaults and
		// a run with every setting make the round trip over any.
		for _, tt := range []struct {
			name string
			p    Params
		}{
			{"its defaults", in.Defaults},
			{"every setting", full},
		} {
			t.Run(in.ID+" "+tt.name, func(t *testing.T) {
				q := tt.p.Query()
				// Through the text of a URL, as a browser sends it.
				back, err := url.ParseQuery(q.Encode())
				if err != nil {
					t.Fatal(err)
				}
				got, err := ParseQuery(in.Defaults, back)
				if err != nil {
					t.Fatalf("ParseQuery(%s) = %v", q.Encode(), err)
				}
				if !reflect.DeepEqual(got, tt.p) {
					t.Errorf("ParseQuery(%s) = %+v; want %+v", q.Encode(), got, tt.p)
				}
			})
		}
	}
	q := RunQuery("gc-pause", full)
	if q.Get(ParamScenario) != "gc-pause" || !slices.Equal(q[ParamFault], []string{"pause:client1:1000:15000", "crash:node3:500:2000-persist", "crash:client2:700:0", "clock-back:redis:0:600000", "delay:client2:0:1"}) {
		t.Errorf("RunQuery(gc-pause, ...) = %s; want the scenario and the faults in order", q.Encode())
	}
}

// TestParseQuery checks each setting read over the defaults, and that a
// bad value gives an error wrapping ErrBadParams that names it.
func TestParseQuery(t *testing.T) {
	base := defaults()
	base.Fencing, base.Faults = true, []Fault{{Kind: FaultPause, Target: "client1", Length: time.Second}}
	for _, tt := range []struct {
		name, query string
		edit        func(*Params) // nil when the query is bad
		err         string
	}{
		{name: "nothing", query: "", edit: func(*Params) {}},
		{name: "a duration", query: "ttl_ms=4000&pause_ms=0", edit: func(p *Params) { p.TTL, p.Pause = 4*time.Second, 0 }},
		{name: "boxes", query: "fencing=false&wait=1", edit: func(p *Params) { p.Fencing, p.Wait = false, true }},
		{name: "the form leaves a box unticked", query: "run=1", edit: func(p *Params) { p.Fencing, p.Wait = false, false }},
		{name: "faults replace the defaults'", query: "fault=delay:redis:0:10", edit: func(p *Params) {
			p.Faults = []Fault{{Kind: FaultDelay, Target: "redis", Length: 10 * time.Millisecond}}
		}},
		{name: "an empty fault adds nothing", query: "fault=", edit: func(p *Params) { p.Faults = nil }},
		{name: "modes and seed", query: "release=del&renew=timer&seed=42", edit: func(p *Params) { p.Release, p.Renew, p.Seed = ReleaseDel, RenewTimer, 42 }},
		{name: "not a number", query: "work_ms=2s", err: `work_ms = "2s": not a whole number of milliseconds`},
		{name: "negative", query: "pause_ms=-1", err: "pause_ms = -1: out of range"},
		{name: "too long", query: "clock_jump_ms=600001", err: "clock_jump_ms = 600001: out of range"},
		{name: "ttl too short", query: "ttl_ms=1", err: "ttl_ms = 1: must be between 100 and 120000"},
		{name: "not a boolean", query: "fencing=yes", err: `fencing = "yes": want true or false`},
		{name: "bad release", query: "release=unlink", err: `release = "unlink"`},
		{name: "bad renew", query: "renew=never", err: `renew = "never"`},
		{name: "bad seed", query: "seed=-1", err: `seed = "-1": not a whole number`},
		{name: "bad fault", query: "fault=nap:client1:0:10", err: "must be pause, crash, clock-jump, clock-back or delay"},
		{name: "fault too long", query: "fault=pause:client1:0:" + strings.Repeat("1", MaxFaultText), err: fmt.Sprintf("at most %d", MaxFaultText)},
		{name: "too many faults", query: strings.Repeat("fault=&", MaxFaults+1), err: fmt.Sprintf("%d faults: at most %d", MaxFaults+1, MaxFaults)},
		{name: "as many faults as allowed", query: strings.Repeat("fault=pause:client1:0:1&", MaxFaults), edit: func(p *Params) {
			p.Faults = slices.Repeat([]Fault{{Kind: FaultPause, Target: "client1", Length: time.Millisecond}}, MaxFaults)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseQuery(base, q)
			if tt.edit == nil {
				if !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ParseQuery(%s) = %v; want ErrBadParams mentioning %q", tt.query, err, tt.err)
				}
				return
			}
			want := base
			want.Faults = slices.Clone(base.Faults)
			tt.edit(&want)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("ParseQuery(%s) = %+v, %v; want %+v", tt.query, got, err, want)
			}
		})
	}
}

// TestFormFault: the fault form's fields give the text form, which
// ParseFault then reads.
func TestFormFault(t *testing.T) {
	for _, tt := range []struct {
		kind, target, at, arg string
		persist               bool
		want                  string
	}{
		{"pause", "client1", "1000", "5000", false, "pause:client1:1000:5000"},
		{"crash", "node2", "1500", "3000", true, "crash:node2:1500:3000-persist"},
		{"crash", "client1", "0", "0", true, "crash:client1:0:0"},
		{"delay", "redis", "10", "20", true, "delay:redis:10:20"},
	} {
		if got := FormFault(tt.kind, tt.target, tt.at, tt.arg, tt.persist); got != tt.want {
			t.Errorf("FormFault(%q, %q, %q, %q, %v) = %q; want %q", tt.kind, tt.target, tt.at, tt.arg, tt.persist, got, tt.want)
		}
		if _, err := ParseFault(tt.want); err != nil {
			t.Errorf("ParseFault(%q) = %v", tt.want, err)
		}
	}
}

// TestFaultKinds: the form offers every kind, each hitting exactly the
// targets Fault.Validate accepts for it.
func TestFaultKinds(t *testing.T) {
	for _, k := range FaultKinds() {
		if k.Title == "" || k.ArgLabel == "" {
			t.Errorf("%s has no words: %+v", k.Kind, k)
		}
		for target, client := range map[string]bool{"client1": true, "redis": false, "node3": false} {
			f := Fault{Kind: k.Kind, Target: target, Length: time.Second}
			if ok := f.Validate() == nil; ok != (client && k.Clients || !client && k.Nodes) {
				t.Errorf("%s on %s: Validate ok = %v; the form says clients %v, nodes %v", k.Kind, target, ok, k.Clients, k.Nodes)
			}
		}
	}
}

// TestFaultTargets names each target for learners.
func TestFaultTargets(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want string
	}{
		{"normal", "client1=client 1 client2=client 2 redis=redis"},
		{"failover", "client1=client 1 client2=client 2 redis=the primary node1=node 1 node2=node 2"},
	} {
		i := slices.IndexFunc(List(), func(in Info) bool { return in.ID == tt.id })
		if i < 0 {
			t.Fatalf("no scenario %q", tt.id)
		}
		in := List()[i]
		var got []string
		for _, tg := range in.FaultTargets() {
			got = append(got, tg.ID+"="+tg.Title)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s FaultTargets = %q; want %q", tt.id, strings.Join(got, " "), tt.want)
		}
	}
}

// TestDropFormFields keeps only the run.
func TestDropFormFields(t *testing.T) {
	q, _ := url.ParseQuery("run=1&from=normal&scenario=gc-pause&ttl_ms=1000&add_fault=1&fault_kind=pause&fault_target=client1&fault_at_ms=0&fault_arg_ms=1&fault_persist=true&drop_fault=0&fault=pause:client1:0:1")
	DropFormFields(q)
	if got := q.Encode(); got != "fault=pause%3Aclient1%3A0%3A1&scenario=gc-pause&ttl_ms=1000" {
		t.Errorf("DropFormFields left %s", got)
	}
}

// TestFormQuery checks how a submitted settings form becomes a run:
// a scenario change takes the new scenario's defaults for the values the
// learner left alone, and faults are added and dropped.
func TestFormQuery(t *testing.T) {
	for _, tt := range []struct {
		name, form string
		want       map[string]string // "" means absent
		faults     []string
	}{
		{
			name: "to fencing, nothing changed",
			form: "run=1&from=gc-pause&scenario=fencing&ttl_ms=10000&pause_ms=15000&work_ms=2000&seed=1",
			want: map[string]string{"fencing": "true", "ttl_ms": "", "pause_ms": "", "scenario": "fencing", "run": "1", "from": ""},
		},
		{
			name: "to fencing, TTL changed",
			form: "run=1&from=gc-pause&scenario=fencing&ttl_ms=4000&pause_ms=15000",
			want: map[string]string{"fencing": "true", "ttl_ms": "4000"},
		},
		{
			name: "to release-del, defaults of gc-pause",
			form: "run=1&from=gc-pause&scenario=release-del&ttl_ms=10000&pause_ms=15000&work_ms=2000&release=script",
			want: map[string]string{"release": "", "pause_ms": "", "work_ms": "", "fencing": "false"},
		},
		{
			name: "from fencing to gc-pause, box left ticked",
			form: "run=1&from=fencing&scenario=gc-pause&fencing=true",
			want: map[string]string{"fencing": "false"},
		},
		{
			name: "from gc-pause to fencing, box ticked by the learner then the scenario changed",
			form: "run=1&from=normal&scenario=fencing&fencing=true",
			want: map[string]string{"fencing": "true"},
		},
		{
			name:   "same scenario keeps the unticked box",
			form:   "run=1&from=fencing&scenario=fencing",
			want:   map[string]string{"fencing": ""},
			faults: nil,
		},
		{
			name:   "scenario change drops faults",
			form:   "run=1&from=gc-pause&scenario=fencing&fault=pause:client2:6000:5000",
			faults: nil,
		},
		{
			name:   "add a crash with persistence",
			form:   "run=1&from=redlock-crash&scenario=redlock-crash&fault=pause:client1:100:200&add_fault=1&fault_kind=crash&fault_target=node2&fault_at_ms=1500&fault_arg_ms=3000&fault_persist=true",
			want:   map[string]string{"add_fault": "", "fault_kind": ""},
			faults: []string{"pause:client1:100:200", "crash:node2:1500:3000-persist"},
		},
		{
			name:   "add a client's crash: a client has no data to keep",
			form:   "run=1&from=normal&scenario=normal&add_fault=1&fault_kind=crash&fault_target=client1&fault_at_ms=1000&fault_arg_ms=0&fault_persist=true",
			faults: []string{"crash:client1:1000:0"},
		},
		{
			name:   "add a clock jump back",
			form:   "run=1&from=normal&scenario=normal&add_fault=1&fault_kind=clock-back&fault_target=redis&fault_at_ms=1000&fault_arg_ms=3000",
			faults: []string{"clock-back:redis:1000:3000"},
		},
		{
			name:   "drop the first fault",
			form:   "run=1&from=gc-pause&scenario=gc-pause&fault=pause:client1:100:200&fault=delay:client2:300:400&drop_fault=0",
			faults: []string{"delay:client2:300:400"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.form)
			if err != nil {
				t.Fatal(err)
			}
			got := FormQuery(q)
			for k, v := range tt.want {
				if got.Get(k) != v {
					t.Errorf("FormQuery(%s)[%s] = %q; want %q", tt.form, k, got.Get(k), v)
				}
			}
			if !slices.Equal(got["fault"], tt.faults) {
				t.Errorf("FormQuery(%s) faults = %q; want %q", tt.form, got["fault"], tt.faults)
			}
		})
	}
}
