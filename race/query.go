package race

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The race page's URL: a run is a scenario and its settings, each under
// its Param name, with one fault= per added fault. The settings form
// sends more fields, which say what the learner did rather than what the
// run is: FormQuery turns them into the run they ask for.
const (
	// ParamScenario names the scenario of a run.
	ParamScenario = "scenario"
	// FormRun says that the settings form was sent: a checkbox left
	// unticked sends nothing, which then reads as false.
	FormRun = "run"
	// FormFrom is the scenario the form was showing.
	FormFrom = "from"
	// FormAddFault asks for the fault in the FormFault fields to be
	// added; FormDropFault drops the fault at the index it gives.
	FormAddFault  = "add_fault"
	FormDropFault = "drop_fault"
	// The fields of a fault being added: its kind, its target, when in
	// milliseconds, its ARG in milliseconds, and whether a crashed node
	// keeps its data ("true").
	FormFaultKind    = "fault_kind"
	FormFaultTarget  = "fault_target"
	FormFaultAt      = "fault_at_ms"
	FormFaultArg     = "fault_arg_ms"
	FormFaultPersist = "fault_persist"
)

// formFields are the fields FormQuery consumes.
var formFields = []string{FormFrom, FormAddFault, FormDropFault, FormFaultKind, FormFaultTarget, FormFaultAt, FormFaultArg, FormFaultPersist}

// boxes are the settings that are checkboxes in the settings form.
var boxes = []string{ParamFencing, ParamWait}

// durationParams are the settings given in whole milliseconds.
func (p *Params) durationParams() []struct {
	name string
	d    *time.Duration
} {
	return []struct {
		name string
		d    *time.Duration
	}{
		{ParamTTL, &p.TTL}, {ParamPause, &p.Pause}, {ParamWork, &p.Work},
		{ParamClockJump, &p.ClockJump}, {ParamRestartDelay, &p.RestartDelay},
		{ParamReplicationLag, &p.ReplicationLag},
	}
}

// ParseQuery reads a run's settings from a race URL's query, over p (a
// scenario's defaults): each setting given replaces p's, and the fault=
// values, if any, replace p's faults. An empty fault= adds nothing. The
// work is linear in the query: at most MaxFaults faults are read, each of
// at most MaxFaultText bytes. Errors wrap ErrBadParams and say which
// value is wrong and what is allowed.
func ParseQuery(p Params, q url.Values) (Params, error) {
	for _, f := range p.durationParams() {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("%s = %q: not a whole number of milliseconds: %w", f.name, v, ErrBadParams)
		}
		if n < 0 || n > MaxDuration.Milliseconds() {
			return p, fmt.Errorf("%s = %d: out of range: %w", f.name, n, ErrBadParams)
		}
		*f.d = msDur(n)
	}
	for _, b := range []struct {
		name string
		v    *bool
	}{{ParamFencing, &p.Fencing}, {ParamWait, &p.Wait}} {
		v := q.Get(b.name)
		if v == "" {
			if q.Has(FormRun) {
				// An HTML form sends no value for an unticked checkbox.
				*b.v = false
			}
			continue
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return p, fmt.Errorf("%s = %q: want true or false: %w", b.name, v, ErrBadParams)
		}
		*b.v = on
	}
	if fs, ok := q[ParamFault]; ok {
		if len(fs) > MaxFaults {
			return p, fmt.Errorf("%d faults: at most %d: %w", len(fs), MaxFaults, ErrBadParams)
		}
		p.Faults = nil
		for _, v := range fs {
			if v == "" {
				continue
			}
			f, err := ParseFault(v)
			if err != nil {
				return p, err
			}
			p.Faults = append(p.Faults, f)
		}
	}
	if v := q.Get(ParamRelease); v != "" {
		p.Release = ReleaseMode(v)
	}
	if v := q.Get(ParamRenew); v != "" {
		p.Renew = RenewMode(v)
	}
	if v := q.Get(ParamSeed); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("%s = %q: not a whole number: %w", ParamSeed, v, ErrBadParams)
		}
		p.Seed = n
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}

// Query is the query that reproduces a run with p: every setting, the
// faults included, so that ParseQuery over any scenario's defaults gives
// p back. Its encoding is also a key for p.
func (p Params) Query() url.Values {
	v := url.Values{}
	for _, f := range p.durationParams() {
		v.Set(f.name, strconv.FormatInt(f.d.Milliseconds(), 10))
	}
	v.Set(ParamFencing, strconv.FormatBool(p.Fencing))
	v.Set(ParamWait, strconv.FormatBool(p.Wait))
	v.Set(ParamRelease, string(p.Release))
	v.Set(ParamSeed, strconv.FormatUint(p.Seed, 10))
	if p.Renew != "" {
		v.Set(ParamRenew, string(p.Renew))
	}
	for _, f := range p.Faults {
		v.Add(ParamFault, f.String())
	}
	return v
}

// RunQuery is the query of the race page that shows scenario id run with
// p: p.Query and the scenario.
func RunQuery(id string, p Params) url.Values {
	q := p.Query()
	q.Set(ParamScenario, id)
	return q
}

// FormQuery turns a sent settings form into the query of the run it asks
// for. When the form changes scenario, every setting the learner left at
// the old scenario's default takes the new scenario's default, so that
// "the same pause, with fencing tokens" runs with fencing on; the faults
// added to the old scenario are dropped, since they name its nodes and
// times. It then drops or adds a fault, and removes the form's own
// fields. Values are not checked here: ParseQuery does that.
func FormQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	id, from := q.Get(ParamScenario), q.Get(FormFrom)
	if from != "" && id != "" && from != id {
		if old, ok := scenarioByID(from); ok {
			for name, def := range old.Defaults.Query() {
				got := q.Get(name)
				if slices.Contains(boxes, name) && q.Has(FormRun) && got == "" {
					got = "false" // an unticked box
				}
				if got == def[0] {
					out.Del(name)
				}
			}
			// An unticked box sends nothing, which the run reads as
			// false: a box left alone gets the new default said aloud.
			if nw, ok := scenarioByID(id); ok && q.Has(FormRun) {
				defs := nw.Defaults.Query()
				for _, name := range boxes {
					if out.Get(name) == "" {
						out.Set(name, defs.Get(name))
					}
				}
			}
		}
		out.Del(ParamFault)
		out.Del(FormAddFault)
	}
	if i, err := strconv.Atoi(q.Get(FormDropFault)); err == nil {
		faults := out[ParamFault]
		if i >= 0 && i < len(faults) {
			out[ParamFault] = slices.Delete(slices.Clone(faults), i, i+1)
		}
	}
	if out.Get(FormAddFault) != "" {
		out.Add(ParamFault, FormFault(q.Get(FormFaultKind), q.Get(FormFaultTarget), q.Get(FormFaultAt), q.Get(FormFaultArg), q.Get(FormFaultPersist) == "true"))
	}
	for _, k := range formFields {
		out.Del(k)
	}
	return out
}

// FormFault writes a fault from the fault form's fields in its text form,
// KIND:TARGET:AT_MS:ARG, unchecked: ParseFault says what is wrong with
// it. A node's crash's ARG is its restart delay, followed by "-persist"
// when the node keeps its data; a client has no data to keep.
func FormFault(kind, target, at, arg string, persist bool) string {
	if FaultKind(kind) == FaultCrash && persist && !isClientTarget(target) {
		arg += persistSuffix
	}
	return kind + ":" + target + ":" + at + ":" + arg
}

// Target is something a fault can hit in a scenario, with its name for
// learners.
type Target struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// FaultTargets lists what a fault can hit in the scenario, named for
// learners: "node3" is "node 3", and "redis" is "the primary" where there
// are other nodes.
func (in Info) FaultTargets() []Target {
	nodes := slices.ContainsFunc(in.Targets, func(t string) bool { return strings.HasPrefix(t, "node") })
	out := make([]Target, 0, len(in.Targets))
	for _, t := range in.Targets {
		title := t
		for _, p := range []string{"client", "node"} {
			if n, ok := strings.CutPrefix(t, p); ok && n != "" {
				title = p + " " + n
			}
		}
		if t == "redis" && nodes {
			title = "the primary"
		}
		out = append(out, Target{ID: t, Title: title})
	}
	return out
}

// FaultKindInfo is a fault kind as the fault form offers it: what it
// does, what its ARG is, and what it can hit.
type FaultKindInfo struct {
	Kind  FaultKind `json:"kind"`
	Title string    `json:"title"` // "pause a client"
	// ArgLabel names the ARG field, in milliseconds.
	ArgLabel string `json:"arg_label"`
	// Clients and Nodes say whether the kind can hit a client and a
	// node (redis, node1..node5).
	Clients bool `json:"clients"`
	Nodes   bool `json:"nodes"`
}

// FaultKinds lists the fault kinds in the fault form's order, with their
// words; Fault.Validate checks the same targets.
func FaultKinds() []FaultKindInfo {
	return []FaultKindInfo{
		{Kind: FaultPause, Title: "pause a client", ArgLabel: "For (ms)", Clients: true},
		{Kind: FaultCrash, Title: "crash a client or a node", ArgLabel: "Restart after (ms)", Clients: true, Nodes: true},
		{Kind: FaultClockJump, Title: "jump a node's clock ahead", ArgLabel: "Jump ahead by (ms)", Nodes: true},
		{Kind: FaultClockBack, Title: "jump a node's clock back", ArgLabel: "Jump back by (ms)", Nodes: true},
		{Kind: FaultDelay, Title: "delay a reply", ArgLabel: "Delay (ms)", Clients: true, Nodes: true},
	}
}

// DropFormFields removes from q the settings form's own fields, leaving
// the run's scenario and settings: a link copied after the form was sent
// then names the run on screen, whatever button was pressed.
func DropFormFields(q url.Values) {
	q.Del(FormRun)
	for _, k := range formFields {
		q.Del(k)
	}
}
