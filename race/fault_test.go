package race

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Fault
		err  string // "" for valid
	}{
		{in: "pause:client1:1000:15000", want: Fault{Kind: FaultPause, Target: "client1", At: time.Second, Length: 15 * time.Second}},
		{in: "crash:node3:500:2000", want: Fault{Kind: FaultCrash, Target: "node3", At: 500 * time.Millisecond, Length: 2 * time.Second}},
		{in: "crash:redis:0:0-persist", want: Fault{Kind: FaultCrash, Target: "redis", Persist: true}},
		{in: "clock-jump:node5:100:9000", want: Fault{Kind: FaultClockJump, Target: "node5", At: 100 * time.Millisecond, Length: 9 * time.Second}},
		{in: "delay:client2:0:300", want: Fault{Kind: FaultDelay, Target: "client2", Length: 300 * time.Millisecond}},
		{in: "delay:redis:0:300", want: Fault{Kind: FaultDelay, Target: "redis", Length: 300 * time.Millisecond}},
		{in: "pause:client1:1000", err: "KIND:TARGET:AT_MS:ARG"},
		{in: "pause:client1:1000:15000:1", err: "KIND:TARGET:AT_MS:ARG"},
		{in: "freeze:client1:0:1", err: `kind "freeze"`},
		{in: "pause:redis:0:1", err: "must be client1, client2 or client3"},
		{in: "pause:client4:0:1", err: "must be client1"},
		{in: "crash:client1:2000:0", want: Fault{Kind: FaultCrash, Target: "client1", At: 2 * time.Second}},
		{in: "clock-back:redis:100:3000", want: Fault{Kind: FaultClockBack, Target: "redis", At: 100 * time.Millisecond, Length: 3 * time.Second}},
		{in: "crash:client1:0:0-persist", err: "a client has no data to keep"},
		{in: "clock-back:client1:0:1", err: "must be redis or node1..node5"},
		{in: "crash:node6:0:1", err: "must be client1..client3, redis or node1..node5"},
		{in: "clock-jump:node0:0:1", err: "must be redis or node1..node5"},
		{in: "delay:storage:0:1", err: "delay target"},
		{in: "pause:client1:-5:100", err: "AT_MS"},
		{in: "pause:client1:x:100", err: "AT_MS"},
		{in: "pause:client1:0:1.5", err: "ARG"},
		{in: "pause:client1:0:600001", err: "maximum of 600000"},
		{in: "pause:client1:0:0", err: "does nothing"},
		{in: "pause:client1:0:100-persist", err: "ARG"},
		{in: "crash:node1:0:100-persisted", err: "ARG"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFault(tt.in)
			if tt.err != "" {
				if !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ParseFault(%q) = %+v, %v; want ErrBadParams mentioning %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseFault(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if s := got.String(); s != tt.in {
				t.Errorf("ParseFault(%q).String() = %q; want the input back", tt.in, s)
			}
		})
	}
}

// A fault must name a client or node the scenario has.
func TestFaultTargetsOfScenario(t *testing.T) {
	for _, tt := range []struct {
		id, fault, err string
	}{
		{"gc-pause", "pause:client3:0:100", "has 2 clients"},
		{"gc-pause", "crash:node2:0:100", "one Redis node"},
		{"redlock-crash", "crash:redis:0:100", "name one, node1..node5"},
		{"gc-pause", "crash:node1:0:100", ""},
		{"redlock-crash", "clock-jump:node5:0:100", ""},
		{"release-del", "pause:client3:0:100", ""},
	} {
		f, err := ParseFault(tt.fault)
		if err != nil {
			t.Fatal(err)
		}
		p := defaultsOf(t, tt.id)
		p.Faults = []Fault{f}
		_, err = Run(tt.id, p)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Run(%q, fault %s) error %v; want none", tt.id, tt.fault, err)
		case tt.err != "" && (!errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Run(%q, fault %s) error %v; want ErrBadParams mentioning %q", tt.id, tt.fault, err, tt.err)
		}
	}
}

func TestTooManyFaults(t *testing.T) {
	p := defaults()
	for range MaxFaults + 1 {
		p.Faults = append(p.Faults, Fault{Kind: FaultPause, Target: "client1", Length: time.Millisecond})
	}
	if err := p.Validate(); !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), "at most") {
		t.Errorf("Validate(%d faults) = %v; want ErrBadParams saying at most %d", len(p.Faults), err, MaxFaults)
	}
}

func TestParseOutcome(t *testing.T) {
	for _, o := range Outcomes() {
		if got, err := ParseOutcome(string(o)); got != o || err != nil {
			t.Errorf("ParseOutcome(%q) = %q, %v; want it back", o, got, err)
		}
	}
	if _, err := ParseOutcome("Safe"); !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), "two-holders") {
		t.Errorf("ParseOutcome(Safe) error = %v; want ErrBadParams listing the names", err)
	}
}

// Info.Targets lists exactly the targets a scenario's faults may name.
func TestInfoTargets(t *testing.T) {
	all := []string{"client1", "client2", "client3", "redis", "node1", "node2", "node3", "node4", "node5"}
	for _, in := range List() {
		for _, target := range all {
			kind := FaultPause
			if !isClientTarget(target) {
				kind = FaultClockJump
			}
			p := in.Defaults
			p.Faults = []Fault{{Kind: kind, Target: target, At: 0, Length: time.Millisecond}}
			_, err := Run(in.ID, p)
			listed := slices.Contains(in.Targets, target)
			// node1 is the single Redis too, under its other name.
			if target == "node1" && slices.Contains(in.Targets, "redis") {
				listed = true
			}
			if listed != (err == nil) {
				t.Errorf("%s: target %s listed %v, but a fault on it gives error %v", in.ID, target, listed, err)
			}
		}
	}
}

// TestClientCrashAndClockBack: the kernel's fault vocabulary in the race.
// A holder that crashes releases nothing: its lock stays until its TTL
// runs out, and then the other client gets it; nobody starves and the
// crashed client is not counted as starving. A clock that jumps back
// keeps the lock longer than its TTL by true time.
func TestClientCrashAndClockBack(t *testing.T) {
	p := defaults()
	p.Faults = []Fault{{Kind: FaultCrash, Target: "client1", At: time.Second}}
	tl, err := Run("normal", p)
	if err != nil {
		t.Fatal(err)
	}
	var crashAt, grantAt int64 = -1, -1
	for _, e := range tl.Events {
		switch {
		case e.Kind == KindClientCrash && e.Actor == "client 1":
			crashAt = e.AtMS
		case e.Actor == "client 1" && crashAt >= 0 && e.Kind != KindExpire:
			t.Errorf("client 1 acts after its crash: %s at %d ms: %s", e.Kind, e.AtMS, e.Text)
		case e.Kind == KindAcquireOK && e.Actor == "client 2":
			grantAt = e.AtMS
		}
	}
	if crashAt != 1000 || grantAt < p.TTL.Milliseconds() {
		t.Errorf("client 1 crashed at %d ms, client 2 got the lock at %d ms; want the crash at 1000 and the grant once the %v TTL ran out", crashAt, grantAt, p.TTL)
	}
	if tl.Has(OutcomeStarved) || tl.Has(OutcomeTwoHolders) {
		t.Errorf("outcomes %v; want neither starved nor two holders", tl.OutcomeSet())
	}

	p = defaults()
	p.Faults = []Fault{{Kind: FaultClockBack, Target: "redis", At: time.Second, Length: 5 * time.Second}}
	tl, err = Run("normal", p)
	if err != nil {
		t.Fatal(err)
	}
	jumped := false
	for _, e := range tl.Events {
		if e.Kind == KindClockJump {
			jumped = strings.Contains(e.Text, "5 s back") && e.Nodes[0].ClockAheadMS == -5000
		}
	}
	if !jumped {
		t.Errorf("no clock-jump event saying 5 s back with the node 5 s behind")
	}
}
