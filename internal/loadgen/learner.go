package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxBody bounds how much of an answer a learner reads.
const maxBody = 16 << 20

// errNoCSRF means a learner has no CSRF token to send with a POST.
var errNoCSRF = errors.New("no _csrf cookie: the server set none on earlier answers")

// learner is one simulated workshop participant with its own browser
// state: a cookie jar (learner id and CSRF token) and a place in the
// lesson.
type learner struct {
	id      int
	hostile bool
	// forwardedFor, if set, is sent as X-Forwarded-For.
	forwardedFor string
	client       *http.Client
	// bases are the replicas; request i goes to
	// bases[(turn+i)%len(bases)] for the turn the learner started at.
	bases  []*url.URL
	turn   int // the learner's first turn, plus requests sent so far
	routes Routes
	rec    *Recorder
	// byReplica, if not nil, also records each request with its
	// replica as the route.
	byReplica *Recorder
	rng       *rand.Rand

	queue     []step // what the learner does next
	cycles    int    // cycles started
	requests  int    // requests sent, hostile ones included
	cssPath   string // the style sheet the lesson links to
	lockSetAt time.Time
	payloads  []step     // hostile payloads, for a hostile learner
	poll      *pollState // the poll phase, for a learner who joined
	// streams, if not nil, opens the learner's event stream once it has
	// joined the workshop.
	streams *streamRunner
}

// nextBase returns the replica the learner's next request goes to: each
// in turn, as a load balancer without sticky sessions sends them.
func (l *learner) nextBase() *url.URL {
	b := l.bases[l.turn%len(l.bases)]
	l.turn++
	return b
}

// run sends requests until deadline, at most maxRequests of them, starting
// at start and then about every interval (between 0.5 and 1.5 intervals,
// from one request's start to the next).
func (l *learner) run(ctx context.Context, start, deadline time.Time, interval time.Duration, maxRequests int) {
	next := start
	for range maxRequests {
		if !sleepUntil(ctx, next) || !time.Now().Before(deadline) {
			return
		}
		sent := time.Now()
		l.do(ctx, l.nextStep())
		next = sent.Add(time.Duration((0.5 + l.rng.Float64()) * float64(interval)))
	}
}

// nextStep returns the learner's next request. A hostile learner sends a
// hostile payload every other request and an ordinary one in between.
func (l *learner) nextStep() step {
	l.requests++
	if l.hostile && l.requests%2 == 0 {
		return l.payloads[l.rng.IntN(len(l.payloads))]
	}
	if ps := l.poll.nextPollSteps(l); ps != nil {
		l.queue = append(ps, l.queue...)
	}
	if len(l.queue) == 0 {
		l.queue = l.cycle()
	}
	s := l.queue[0]
	l.queue = l.queue[1:]
	return s
}

// do sends one step and records how it went. A request cut short because
// ctx ended is not recorded: that is the run stopping, not the server
// failing.
func (l *learner) do(ctx context.Context, s step) {
	route := l.routes.Group(s.method, strings.SplitN(s.path, "?", 2)[0])
	if s.hostile != "" {
		route += " [" + s.hostile + "]"
	}
	base := l.nextBase()
	r, err := l.send(ctx, base, s)
	if ctx.Err() != nil {
		return
	}
	o := Outcome{Route: route, Latency: time.Since(r.sent)}
	switch {
	case err != nil:
		o.Err = fmt.Errorf("learner %d: %s %s: %w", l.id, s.method, s.path, err)
		var ne net.Error
		o.Timeout = errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
		switch {
		case o.Timeout:
			o.Class = "timeout"
		case errors.Is(err, errNoCSRF):
			o.Class = "no _csrf cookie"
		default:
			o.Class = "transport error"
		}
	case s.hostile != "" && r.status >= 400 && r.status < 500:
		o.Refused = true // a 4xx is a fine answer to a hostile request
	case s.redirect && r.status >= 300 && r.status <= 399:
		if s.then != nil {
			l.queue = append(s.then(r), l.queue...)
		}
	case r.status < 200 || r.status > 299:
		o.Err = fmt.Errorf("learner %d: %s %s: status %d: %s", l.id, s.method, s.path, r.status, clip(r.body))
		o.Class = fmt.Sprintf("status %d", r.status)
	default:
		if s.path == "/api/playground/exec" && bytes.Contains(r.body, []byte(`"output":"(error)`)) {
			o.Refused = true
		}
		if s.check != nil && !l.hostile {
			if err := s.check(r); err != nil {
				o.Err = fmt.Errorf("learner %d: %s %s %s: %w", l.id, s.method, s.path, describe(s), err)
				o.Class = "unexpected answer"
			}
		}
		if o.Err == nil && s.then != nil {
			l.queue = append(s.then(r), l.queue...)
		}
	}
	if o.Err != nil && s.inCycle {
		l.queue = nil // the rest of the cycle expected this step's effect
	}
	l.rec.Add(o)
	if l.byReplica != nil {
		o.Route = base.Host
		l.byReplica.Add(o)
	}
}

// describe names a step's body for an error message.
func describe(s step) string {
	if s.body == nil {
		return ""
	}
	b, err := json.Marshal(s.body)
	if err != nil {
		return ""
	}
	return clip(b)
}

// send makes the request of s to base and reads the whole answer. It
// sets reply.sent even when the request fails.
func (l *learner) send(ctx context.Context, base *url.URL, s step) (reply, error) {
	r := reply{sent: time.Now()}
	var body io.Reader
	switch {
	case s.form != nil:
		body = strings.NewReader(s.form.Encode())
	case s.raw != nil:
		body = bytes.NewReader(s.raw)
	case s.body != nil:
		b, err := json.Marshal(s.body)
		if err != nil {
			return r, fmt.Errorf("encode body: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, s.method, base.String()+s.path, body)
	if err != nil {
		return r, fmt.Errorf("new request: %w", err)
	}
	switch {
	case s.form != nil:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	if l.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", l.forwardedFor)
	}
	if strings.HasPrefix(s.path, "/api/") {
		req.Header.Set("Accept", "application/json")
	} else {
		req.Header.Set("Accept", "text/html,*/*")
	}
	if s.method != http.MethodGet {
		token := l.csrfToken()
		if token == "" {
			return r, errNoCSRF
		}
		req.Header.Set("X-CSRF-Token", token)
	}
	r.sent = time.Now()
	resp, err := l.client.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	r.body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return r, fmt.Errorf("read answer: %w", err)
	}
	return r, nil
}

// csrfToken returns the _csrf cookie's value from the learner's jar.
func (l *learner) csrfToken() string {
	for _, c := range l.client.Jar.Cookies(l.bases[0]) {
		if c.Name == "_csrf" {
			return c.Value
		}
	}
	return ""
}

// sleepUntil waits until t and reports false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// sharedJar keeps the cookies of every replica under one origin's, as a
// browser does behind a load balancer, where the replicas are one site:
// replicas on other ports of the same host share cookies anyway, but
// "localhost" and "127.0.0.1" would not.
type sharedJar struct {
	jar http.CookieJar
	as  *url.URL // the origin whose cookies every replica's are
}

func (j sharedJar) key(u *url.URL) *url.URL {
	k := *u
	k.Scheme, k.Host = j.as.Scheme, j.as.Host
	return &k
}

func (j sharedJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.jar.SetCookies(j.key(u), cookies)
}

func (j sharedJar) Cookies(u *url.URL) []*http.Cookie { return j.jar.Cookies(j.key(u)) }
