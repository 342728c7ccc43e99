package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// The poll phase: with an admin token, the run starts a workshop that
// every well-behaved learner joins first, and at Config.PollAt an
// instructor opens a poll on a race run. Each learner then reads the poll
// and predicts on its next turn, so that the whole room answers within a
// few seconds of the poll opening, as it does when an instructor asks.
// A little later the instructor reads the counts, which must show every
// joined learner's prediction exactly once, and reveals the run.

// PollResult is what the poll phase found.
type PollResult struct {
	Workshop string        // the join code
	Joined   int           // learners whose join was answered as expected
	ID       string        // the poll opened, "" if none was
	OpenedAt time.Duration // since the start of the run
	Answered int           // predictions the server counted
	Total    int           // the server's count of joined learners
	Revealed bool
	Err      error // what went wrong on the instructor's side, if anything
}

// pollBoard tells learners which poll is open.
type pollBoard struct {
	id     atomic.Pointer[string]
	joined atomic.Int64
	// sent is when the instructor sent the request that opened the
	// poll, in Unix nanoseconds; the poll's fan-out is measured from it.
	sent atomic.Int64
}

// sentAt is when the request that opened the poll was sent, or the zero
// time.
func (b *pollBoard) sentAt() time.Time {
	if n := b.sent.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (b *pollBoard) open() string {
	if p := b.id.Load(); p != nil {
		return *p
	}
	return ""
}

// instructor drives the workshop with the admin token, as a script does,
// through the same load balancer as the learners: its requests go to the
// replicas in turn.
type instructor struct {
	bases   []*url.URL
	turn    int
	token   string
	client  *http.Client
	csrf    string
	timeout time.Duration
	// location is the last answer's Location header (a local path).
	location string
}

func newInstructor(cfg Config, transport http.RoundTripper) (*instructor, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("cookie jar: %w", err)
	}
	return &instructor{bases: cfg.Targets, token: cfg.AdminToken, timeout: cfg.Timeout, client: &http.Client{
		Transport: transport, Jar: sharedJar{jar, cfg.Targets[0]}, Timeout: cfg.Timeout,
		CheckRedirect: noRedirects,
	}}, nil
}

// call sends one request with the token (and the CSRF token for writes)
// and returns the status and the body.
func (in *instructor) call(ctx context.Context, method, path, ctype string, body string) (int, []byte, error) {
	base := in.bases[in.turn%len(in.bases)]
	in.turn++
	req, err := http.NewRequestWithContext(ctx, method, base.String()+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+in.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", in.csrf)
	}
	resp, err := in.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	in.location = ""
	if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		in.location = loc
	}
	if in.csrf == "" {
		for _, c := range in.client.Jar.Cookies(in.bases[0]) {
			if c.Name == "_csrf" {
				in.csrf = c.Value
			}
		}
	}
	return resp.StatusCode, b, err
}

var joinCodeOnPage = regexp.MustCompile(`class="join-code">([A-Z0-9]{4,12})<`)

// startWorkshop starts a workshop and returns its join code.
func (in *instructor) startWorkshop(ctx context.Context) (string, error) {
	if _, _, err := in.call(ctx, http.MethodGet, "/healthz", "", ""); err != nil {
		return "", fmt.Errorf("instructor: %w", err)
	}
	status, page, err := in.call(ctx, http.MethodPost, "/admin/workshops", "application/x-www-form-urlencoded", url.Values{"title": {"Load test"}}.Encode())
	if err != nil {
		return "", fmt.Errorf("start a workshop: %w", err)
	}
	if status == http.StatusSeeOther && in.location != "" {
		// The form answers with the new workshop's dashboard.
		if status, page, err = in.call(ctx, http.MethodGet, in.location, "", ""); err != nil {
			return "", fmt.Errorf("start a workshop: %w", err)
		}
	}
	m := joinCodeOnPage.FindSubmatch(page)
	if status != http.StatusOK || m == nil {
		return "", fmt.Errorf("start a workshop: status %d, no join code on the page: %s", status, clip(page))
	}
	return string(m[1]), nil
}

// openPoll opens a poll on the GC-pause race and returns its id; it
// notes on board when it sent the request.
func (in *instructor) openPoll(ctx context.Context, code string, board *pollBoard) (string, error) {
	board.sent.Store(time.Now().UnixNano())
	status, body, err := in.call(ctx, http.MethodPost, "/admin/workshops/"+code+"/polls", "application/json", `{"scenario":"gc-pause","params":{"fencing":"true"}}`)
	if err != nil {
		return "", fmt.Errorf("open a poll: %w", err)
	}
	var out struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &out) != nil || out.ID == "" {
		return "", fmt.Errorf("open a poll: status %d: %s", status, clip(body))
	}
	return out.ID, nil
}

// counts reads the poll's counts.
func (in *instructor) counts(ctx context.Context, code, id string) (answered, joined int, err error) {
	status, body, err := in.call(ctx, http.MethodGet, "/admin/workshops/"+code+"/polls/"+id, "", "")
	if err != nil {
		return 0, 0, fmt.Errorf("read the poll: %w", err)
	}
	var out struct{ Answered, Joined int }
	if status != http.StatusOK || json.Unmarshal(body, &out) != nil {
		return 0, 0, fmt.Errorf("read the poll: status %d: %s", status, clip(body))
	}
	return out.Answered, out.Joined, nil
}

func (in *instructor) reveal(ctx context.Context, code, id string) error {
	status, body, err := in.call(ctx, http.MethodPost, "/admin/workshops/"+code+"/polls/"+id+"/reveal", "", "")
	if err != nil {
		return fmt.Errorf("reveal: %w", err)
	}
	if status != http.StatusOK && status != http.StatusNoContent {
		return fmt.Errorf("reveal: status %d: %s", status, clip(body))
	}
	return nil
}

// runPoll opens the poll at start+cfg.PollAt, gives the room pollAnswerTime
// to answer, checks the counts and reveals. It returns when done or when
// ctx ends.
func (in *instructor) runPoll(ctx context.Context, cfg Config, start time.Time, code string, board *pollBoard, res *PollResult) {
	if !sleepUntil(ctx, start.Add(cfg.PollAt)) {
		return
	}
	id, err := in.openPoll(ctx, code, board)
	if err != nil {
		res.Err = err
		return
	}
	res.ID, res.OpenedAt = id, time.Since(start)
	board.id.Store(&id)
	// Learners answer on their next turns, a second or two apart; the
	// counts are read once the slowest has had a few turns.
	wait := pollAnswerTime(cfg)
	if !sleepUntil(ctx, time.Now().Add(wait)) {
		return
	}
	if res.Answered, res.Total, err = in.counts(ctx, code, id); err != nil {
		res.Err = err
		return
	}
	if err := in.reveal(ctx, code, id); err != nil {
		res.Err = err
		return
	}
	res.Revealed = true
}

// pollAnswerTime is how long the room has to answer: four of a learner's
// turns, and at least 3 seconds.
func pollAnswerTime(cfg Config) time.Duration {
	return max(3*time.Second, time.Duration(4*float64(time.Second)/cfg.Rate))
}

// pollSteps are what a joined learner does when a poll it has not
// answered is open: read it, then predict a few of the outcomes it
// offers. The choices come from the poll, as a participant's page gets
// them, so the learner picks what the server offers today.
func (l *learner) pollSteps(id string) []step {
	return []step{{
		method: "GET", path: "/api/workshop/poll", check: expectContains(`"id":"` + id + `"`),
		then: func(r reply) []step {
			var p struct {
				Choices []struct {
					ID string `json:"id"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(r.body, &p); err != nil || len(p.Choices) == 0 {
				return nil // the check passed; a poll without choices cannot be answered
			}
			var picks []string
			for _, c := range p.Choices {
				if l.rng.IntN(2) == 0 {
					picks = append(picks, c.ID)
				}
			}
			if len(picks) == 0 {
				picks = []string{p.Choices[l.rng.IntN(len(p.Choices))].ID}
			}
			return []step{{method: "POST", path: "/api/workshop/poll/" + id + "/predict", body: map[string][]string{"prediction": picks}}}
		},
	}}
}

// joinSteps join the workshop: the join page (which gives the browser its
// cookies) and the form, answered with a redirect to the workshop page.
func (l *learner) joinSteps(code string, board *pollBoard) []step {
	return []step{
		{method: "GET", path: "/join/" + code, check: expectContains(code)},
		{method: "POST", path: "/join", form: url.Values{"code": {code}, "nickname": {fmt.Sprintf("learner %d", l.id)}}, redirect: true,
			then: func(reply) []step {
				board.joined.Add(1)
				if l.streams != nil {
					l.streams.start(l)
				}
				return nil
			}},
	}
}

// pollState is a learner's part in the poll phase.
type pollState struct {
	board    *pollBoard
	answered string // the poll this learner predicted on
}

// nextPollSteps returns the poll steps when a poll this learner has not
// answered is open.
func (p *pollState) nextPollSteps(l *learner) []step {
	if p == nil {
		return nil
	}
	id := p.board.open()
	if id == "" || id == p.answered {
		return nil
	}
	p.answered = id
	return l.pollSteps(id)
}
