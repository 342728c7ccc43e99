package loadgen

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Targets are what a workshop run must meet.
type Targets struct {
	P99     time.Duration // highest p99 latency of any well-behaved route
	PeakRSS int64         // highest RSS of the sampled processes and their children together, in bytes
}

// Verdict says whether a run met its targets, and if not, why not.
type Verdict struct {
	Pass    bool
	Reasons []string // one line per target, met or not
}

// Check holds the result against t: every well-behaved route's p99 under
// t.P99, no error for a well-behaved learner, and a measured peak memory
// under t.PeakRSS, where the peak is the sum of each sampled process
// tree's own peak (Usage.PeakSum). A run whose memory could not be
// measured fails. With the poll phase, every joined learner's prediction
// must be counted once, and every joined learner's event stream must
// have stayed open and delivered the poll.
func (r *Result) Check(t Targets) Verdict {
	v := Verdict{Pass: true}
	note := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark, v.Pass = "FAIL", false
		}
		v.Reasons = append(v.Reasons, mark+" "+fmt.Sprintf(format, args...))
	}
	worst := RouteStats{}
	for _, rs := range r.Requests.Routes {
		if rs.P99 > worst.P99 {
			worst = rs
		}
	}
	note(r.Requests.All.Count > 0 && worst.P99 < t.P99, "p99 under %v on every well-behaved route: worst %v (%s)", t.P99, ms(worst.P99), worst.Route)
	note(r.Requests.All.Count > 0 && r.Requests.All.Errors == 0, "no errors for well-behaved learners: %d of %d requests", r.Requests.All.Errors, r.Requests.All.Count)
	switch u := r.Usage; {
	case u.Err != nil || u.Samples == 0:
		note(false, "peak memory under %s: not measured (%v)", MB(t.PeakRSS), u.Err)
	default:
		note(u.PeakSum() < t.PeakRSS, "peak memory of the %d sampled process(es) and their children under %s: %s (the sum of each one's peak; %s at once at most)",
			len(u.Procs), MB(t.PeakRSS), MB(u.PeakSum()), MB(u.Peak))
	}
	if p := r.Poll; p != nil {
		switch {
		case p.Err != nil:
			note(false, "poll: %v", p.Err)
		case p.ID == "":
			note(false, "poll: never opened (the run ended first)")
		default:
			note(p.Joined == r.WellBehaved && p.Total == p.Joined && p.Answered == p.Joined && p.Revealed,
				"poll: all %d well-behaved learners joined and predicted within %v of the poll opening, each counted once: %d joined, the server counts %d joined and %d answered, revealed %v",
				r.WellBehaved, pollAnswerTime(r.Config), p.Joined, p.Total, p.Answered, p.Revealed)
		}
		if s := r.Streams; s != nil {
			note(s.Learners == p.Joined && s.Open == s.Learners && s.Failed == 0 && s.EndedEarly == 0,
				"event streams: every joined learner's stream opened and stayed open: %d of %d joined learners opened one, %d attempts failed, %d ended early",
				s.Open, p.Joined, s.Failed, s.EndedEarly)
			note(p.ID != "" && s.Delivered == p.Joined,
				"poll fan-out: every joined learner's stream delivered the poll: %d of %d, p50 %s, p99 %s, max %s after the instructor opened it",
				s.Delivered, p.Joined, ms(s.FanOut.P50), ms(s.FanOut.P99), ms(s.FanOut.Max))
		}
	}
	return v
}

// WriteReport writes the result as tables, followed by the verdict against
// t, and returns the verdict.
func (r *Result) WriteReport(w io.Writer, t Targets) (Verdict, error) {
	c := r.Config
	p := &printer{w: w}
	targets := make([]string, len(c.Targets))
	for i, t := range c.Targets {
		targets[i] = t.String()
	}
	p.printf("Lock Lab workshop load: %d learners (%d hostile, all joining within %v) at %.3g req/s each for %v against %s (seed %d)\n",
		c.Learners, r.HostileLearners, c.Ramp, c.Rate, c.Duration, strings.Join(targets, ", "), c.Seed)
	if len(targets) > 1 {
		p.printf("Each learner's requests go to the %d replicas in turn, with its cookies shared among them\n", len(targets))
	}
	if r.Interrupted {
		p.printf("INTERRUPTED after %v: the numbers cover only that part\n", r.Elapsed.Round(time.Millisecond))
	}
	elapsed := r.Elapsed.Seconds()
	p.printf("\nWell-behaved learners (%d): %d requests, %.1f req/s in all, %.2f req/s per learner\n",
		r.WellBehaved, r.Requests.All.Count, float64(r.Requests.All.Count)/elapsed, perLearner(r.Requests.All.Count, r.WellBehaved, elapsed))
	p.table(r.Requests, false)
	rate := 0.0
	if r.Requests.All.Count > 0 {
		rate = float64(r.Requests.All.Errors) / float64(r.Requests.All.Count)
	}
	p.printf("error rate: %d of %d requests (%.3f%%), %d timeouts\n", r.Requests.All.Errors, r.Requests.All.Count, 100*rate, r.Requests.All.Timeouts)
	p.classes(r.Requests.ErrorClasses)
	p.samples(r.Requests.ErrorSamples)
	if len(r.ByReplica.Routes) > 0 {
		p.printf("\nWell-behaved requests by replica:\n")
		p.table(r.ByReplica, false)
	}

	p.printf("\nHostile learners (%d): %d requests; their errors do not count against the targets\n", r.HostileLearners, r.Hostile.All.Count)
	if r.Hostile.All.Count > 0 {
		p.table(r.Hostile, true)
		p.printf("refused (a 4xx or an (error) reply to a hostile payload, as expected): %d; errors (any other non-2xx answer, transport): %d, of which timeouts: %d\n",
			r.Hostile.All.Refused, r.Hostile.All.Errors, r.Hostile.All.Timeouts)
		p.classes(r.Hostile.ErrorClasses)
		p.samples(r.Hostile.ErrorSamples)
	}

	if pr := r.Poll; pr != nil {
		p.printf("\nPoll phase: workshop %s, %d learners joined; poll %q opened at %v; the server counted %d answers of %d joined; revealed %v\n",
			pr.Workshop, pr.Joined, pr.ID, pr.OpenedAt.Round(time.Millisecond), pr.Answered, pr.Total, pr.Revealed)
	}
	if s := r.Streams; s != nil {
		p.printf("\nEvent streams (GET /api/workshop/events, one per joined learner, learner j's on replica j mod %d; not in the latency tables):\n", len(c.Targets))
		p.printf("  %d learners with a stream, %d of them accepted at least once; %d streams accepted in all (reconnections included), %d attempts failed, %d ended early\n",
			s.Learners, s.Open, s.Opened, s.Failed, s.EndedEarly)
		p.classes(s.ErrorClasses)
		p.samples(s.ErrorSamples)
		p.printf("  poll fan-out (from the instructor sending the request that opened the poll to each stream delivering it): %d of %d streams delivered it; p50 %s, p99 %s, max %s\n",
			s.Delivered, s.Learners, ms(s.FanOut.P50), ms(s.FanOut.P99), ms(s.FanOut.Max))
	}

	u := r.Usage
	p.printf("\nServer memory and CPU (%d process(es) and their children, sampled every %v):\n", len(u.Procs), c.SampleEvery)
	if u.Err != nil && u.Samples == 0 {
		p.printf("  not measured: %v\n", u.Err)
	} else {
		for _, pu := range u.Procs {
			p.printf("  pid %d (from %s): peak RSS %s at %v; last %s; most processes %d; CPU %v, %.2f cores on average\n",
				pu.PID, pu.Source, MB(pu.Peak), pu.PeakAt.Round(time.Second), MB(pu.Last), pu.MaxProcs, pu.CPU.Round(10*time.Millisecond), cores(pu.CPU, u.Span))
		}
		p.printf("  together: sum of the peaks %s; peak at one sample %s at %v with %d process(es); last %s; %d samples; most processes %d\n",
			MB(u.PeakSum()), MB(u.Peak), u.PeakAt.Round(time.Second), u.PeakProcs, MB(u.Last), u.Samples, u.MaxProcs)
		p.printf("  CPU %v over %v: %.2f cores on average\n", u.CPU.Round(10*time.Millisecond), u.Span.Round(time.Second), cores(u.CPU, u.Span))
		if u.Err != nil {
			p.printf("  sampling stopped early: %v\n", u.Err)
		}
		for _, w := range u.Warnings {
			p.printf("  WARNING: %s\n", w)
		}
	}
	p.printf("  (the load generator itself, not counted: peak RSS %s, CPU %v, %.2f cores on average)\n",
		MB(u.SelfPeak), u.SelfCPU.Round(10*time.Millisecond), cores(u.SelfCPU, r.Elapsed))
	if u.CPUs > 0 && u.Samples > 0 {
		others := otherPrograms(u.MachineCPU, u.CPU, u.SelfCPU)
		p.printf("Machine: %d CPUs, %.2f cores busy on average, of which other programs %.2f\n",
			u.CPUs, cores(u.MachineCPU, u.Span), cores(others, u.Span))
		if cores(others, u.Span) > 0.25 {
			p.printf("  WARNING: other programs competed for the CPU during the run; latencies are worse than the server alone would cause\n")
		}
	}

	v := r.Check(t)
	p.printf("\nTargets:\n")
	for _, reason := range v.Reasons {
		p.printf("  %s\n", reason)
	}
	if v.Pass {
		p.printf("PASS\n")
	} else {
		p.printf("FAIL\n")
	}
	return v, p.err
}

// cores is the average number of cores busy for cpu over span.
func cores(cpu, span time.Duration) float64 {
	if span <= 0 {
		return 0
	}
	return cpu.Seconds() / span.Seconds()
}

func perLearner(n, learners int, secs float64) float64 {
	if learners == 0 || secs <= 0 {
		return 0
	}
	return float64(n) / float64(learners) / secs
}

// printer writes formatted text and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) table(s Summary, hostile bool) {
	tw := tabwriter.NewWriter(&printerWriter{p}, 0, 4, 2, ' ', tabwriter.AlignRight)
	// tabwriter aligns every column right; padding the route names to the
	// widest keeps the first column aligned left.
	width := len(s.All.Route)
	for _, rs := range s.Routes {
		width = max(width, len(rs.Route))
	}
	row := func(rs RouteStats) {
		fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t%s\t%d\t", width, rs.Route, rs.Count, ms(rs.P50), ms(rs.P99), ms(rs.Max), rs.Errors)
		if hostile {
			fmt.Fprintf(tw, "%d\t%d\t", rs.Timeouts, rs.Refused)
		}
		fmt.Fprintln(tw)
	}
	if hostile {
		fmt.Fprintf(tw, "%-*s\tcount\tp50\tp99\tmax\terrors\ttimeouts\trefused\t\n", width, "route")
	} else {
		fmt.Fprintf(tw, "%-*s\tcount\tp50\tp99\tmax\terrors\t\n", width, "route")
	}
	for _, rs := range s.Routes {
		row(rs)
	}
	row(s.All)
	tw.Flush()
}

// printerWriter lets tabwriter write through a printer.
type printerWriter struct{ p *printer }

func (pw *printerWriter) Write(b []byte) (int, error) {
	pw.p.printf("%s", b)
	return len(b), pw.p.err
}

func (p *printer) classes(classes []ErrorClass) {
	if len(classes) == 0 {
		return
	}
	p.printf("errors by kind:")
	for i, c := range classes {
		sep := ","
		if i == 0 {
			sep = ""
		}
		p.printf("%s %d %s", sep, c.Count, c.Class)
	}
	p.printf("\n")
}

func (p *printer) samples(samples []string) {
	if len(samples) == 0 {
		return
	}
	p.printf("first errors of each route:\n")
	for _, s := range samples {
		p.printf("  %s\n", strings.ReplaceAll(s, "\n", `\n`))
	}
}

// ms formats a latency in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}
