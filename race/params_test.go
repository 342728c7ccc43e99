package race

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := defaults()
	for _, tt := range []struct {
		name string
		edit func(*Params)
		want string // "" for valid
	}{
		{name: "defaults", edit: func(*Params) {}},
		{name: "shortest ttl", edit: func(p *Params) { p.TTL = 100 * time.Millisecond }},
		{name: "longest ttl", edit: func(p *Params) { p.TTL = 120 * time.Second }},
		{name: "ttl too short", edit: func(p *Params) { p.TTL = 99 * time.Millisecond }, want: "ttl_ms = 99"},
		{name: "ttl too long", edit: func(p *Params) { p.TTL = 121 * time.Second }, want: "ttl_ms = 121000"},
		{name: "ttl not whole ms", edit: func(p *Params) { p.TTL = 200*time.Millisecond + time.Microsecond }, want: "whole number of milliseconds"},
		{name: "negative pause", edit: func(p *Params) { p.Pause = -time.Millisecond }, want: "pause_ms"},
		{name: "longest pause", edit: func(p *Params) { p.Pause = 10 * time.Minute }},
		{name: "pause too long", edit: func(p *Params) { p.Pause = 10*time.Minute + time.Millisecond }, want: "pause_ms"},
		{name: "work too long", edit: func(p *Params) { p.Work = time.Hour }, want: "work_ms"},
		{name: "negative clock jump", edit: func(p *Params) { p.ClockJump = -time.Second }, want: "clock_jump_ms"},
		{name: "restart delay too long", edit: func(p *Params) { p.RestartDelay = 11 * time.Minute }, want: "restart_delay_ms"},
		{name: "unknown release", edit: func(p *Params) { p.Release = "unlink" }, want: `release = "unlink"`},
		{name: "empty release", edit: func(p *Params) { p.Release = "" }, want: "release"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate(%+v) = %v; want nil", p, err)
				}
				return
			}
			if !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate(%+v) = %v; want ErrBadParams mentioning %q", p, err, tt.want)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	long := defaults()
	long.TTL, long.Work = 100*time.Millisecond, 10*time.Minute
	bad := defaults()
	bad.TTL = 0
	for _, tt := range []struct {
		id   string
		p    Params
		want error
	}{
		{id: "no-such-scenario", p: defaults(), want: ErrUnknownScenario},
		{id: "normal", p: bad, want: ErrBadParams},
		{id: "normal", p: Params{}, want: ErrBadParams},
		{id: "renewal", p: long, want: ErrBadParams}, // tens of thousands of renewals
	} {
		if _, err := Run(tt.id, tt.p); !errors.Is(err, tt.want) {
			t.Errorf("Run(%q, %+v) error = %v; want %v", tt.id, tt.p, err, tt.want)
		}
	}
}

func TestParamsJSON(t *testing.T) {
	p := Params{
		TTL: 10 * time.Second, Pause: 1500 * time.Millisecond, Work: 2 * time.Second, Fencing: true,
		Release: ReleaseDel, ClockJump: 3 * time.Second, RestartDelay: 4 * time.Second,
		ReplicationLag: 250 * time.Millisecond, Wait: true, Seed: 7,
		Faults: []Fault{{Kind: FaultCrash, Target: "redis", At: time.Second, Length: 2 * time.Second, Persist: true}},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ttl_ms":10000,"pause_ms":1500,"work_ms":2000,"fencing":true,"release":"del","clock_jump_ms":3000,"restart_delay_ms":4000,"replication_lag_ms":250,"wait":true,"seed":7,"faults":["crash:redis:1000:2000-persist"]}`
	if string(b) != want {
		t.Errorf("json.Marshal(%+v) = %s; want %s", p, b, want)
	}
	var back Params
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("json.Unmarshal(%s) = %+v; want %+v", b, back, p)
	}
	if err := json.Unmarshal([]byte(`{"ttl_ms":"ten"}`), &back); err == nil {
		t.Errorf("json.Unmarshal of a string TTL = nil; want an error")
	}
}

func TestList(t *testing.T) {
	known := []string{ParamTTL, ParamPause, ParamWork, ParamFencing, ParamRelease, ParamClockJump, ParamRestartDelay, ParamReplicationLag, ParamWait, ParamRenew, ParamSeed}
	list := List()
	if len(list) < 7 {
		t.Errorf("List() has %d scenarios; want at least 7", len(list))
	}
	seen := map[string]bool{}
	for _, in := range list {
		if seen[in.ID] {
			t.Errorf("List(): duplicate id %q", in.ID)
		}
		seen[in.ID] = true
		if in.Title == "" || len(in.Setup) == 0 {
			t.Errorf("List(): %q has no title or setup", in.ID)
		}
		if err := in.Defaults.Validate(); err != nil {
			t.Errorf("List(): %q defaults: %v", in.ID, err)
		}
		for _, a := range in.Applies {
			if !slices.Contains(known, a) {
				t.Errorf("List(): %q applies unknown parameter %q", in.ID, a)
			}
		}
	}
}
