// Package workshop is instructor-led workshops as a domain. An instructor
// starts a workshop and gets a join code, learners join it with the code,
// what they do (quiz answers, completed topics, playground commands, races
// and their predictions) becomes events, and a dashboard and a CSV export
// show what the room is doing.
//
// The package holds the rules: which codes, titles, nicknames and ids are
// valid, what each event counts, how counters become statistics and rows.
// It has no HTTP and no storage code. A Backend keeps the state; store's
// bbolt and Redis adapters implement it, and every write is one atomic step
// there, so replicas sharing one Redis show the same dashboard and never
// lose each other's counts. Participants' activity is counted in memory
// and written in batches (batch.go); joins, and who may join (join.go),
// are written at once.
package workshop

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrNotFound means there is no workshop with that code (or it was
// dropped after a long time without use).
var ErrNotFound = errors.New("no such workshop")

// ErrExists means a code is already taken; Start makes a new code and
// tries again.
var ErrExists = errors.New("workshop code already taken")

// ErrEnded means the workshop has ended, so nobody can join it any more.
var ErrEnded = errors.New("workshop has ended")

// ErrFull means the workshop has as many participants as it may have
// (Options.MaxParticipants), so nobody new can join; those who joined
// before can still rejoin.
var ErrFull = errors.New("workshop is full")

// ErrBadInput means an argument is malformed: a workshop code, a nickname
// or title that is too long, an unknown event kind, an id with characters
// that are not allowed. Nothing was written.
var ErrBadInput = errors.New("bad input")

// DefaultMaxParticipants is how many participants a workshop may have
// unless Options.MaxParticipants says otherwise. It bounds what one
// workshop costs: its dashboard and export read every participant.
const DefaultMaxParticipants = 500

// ActiveWindow is how recently a participant must have done something to
// count as active on the dashboard.
const ActiveWindow = 5 * time.Minute

// maxWorkshops is how many workshops List returns at most.
const maxWorkshops = 200

// Workshop is one workshop run by an instructor.
type Workshop struct {
	Code      string // short join code, e.g. "K7QX2M"
	Title     string
	StartedAt time.Time
	EndedAt   time.Time // zero while running
	// JoinClosed: the instructor closed the workshop to newcomers.
	JoinClosed bool
}

// Running reports whether the workshop has not ended yet.
func (w Workshop) Running() bool { return w.EndedAt.IsZero() }

// Joinable reports whether newcomers may join: the workshop is running
// and not closed to them.
func (w Workshop) Joinable() bool { return w.Running() && !w.JoinClosed }

// Participant is one learner's part in a workshop, for the results export.
type Participant struct {
	Learner, Nickname string
	// Key names the participant on the instructor's pages
	// (ParticipantKey); the learner id must not be shown.
	Key                  string
	JoinedAt, LastActive time.Time
	Answers, FirstRight  int // answers given; questions right on the first try
	Completed            bool
	Commands, Races      int
	LabSolves            int // lab challenges solved
}

// Backend keeps workshops. Codes, texts and times arrive validated; the
// back end checks learner ids, whose rule is the store's. Each method is
// one atomic step in the back end.
type Backend interface {
	// CreateWorkshop returns ErrExists if the code is taken.
	CreateWorkshop(ctx context.Context, w Workshop) error
	// Workshop returns ErrNotFound for an unknown code.
	Workshop(ctx context.Context, code string) (Workshop, error)
	// Workshops returns up to limit workshops, newest first (ties by
	// code, descending).
	Workshops(ctx context.Context, limit int) ([]Workshop, error)
	// EndWorkshop keeps the first end time if called again.
	EndWorkshop(ctx context.Context, code string, at time.Time) error
	// JoinWorkshop keeps the first join time, replaces the nickname unless
	// the new one is empty and moves the last-active time forward. It
	// returns ErrEnded for an ended workshop and ErrRemoved for a learner
	// the instructor removed; a new participant gets ErrJoinClosed while
	// the workshop is closed to newcomers and ErrFull beyond j.Limit; a
	// nickname whose NickKey another participant holds, ErrNicknameTaken.
	// Nothing is written then.
	JoinWorkshop(ctx context.Context, code string, j Joining) error
	// IsMember reports whether learner is a participant; it only reads.
	IsMember(ctx context.Context, code, learner string) (bool, error)
	// FlushWorkshop adds a batch: for each learner who is still a
	// participant, and whose part is not AfterEnd the workshop's end, it
	// adds the counters, applies each gated plan (its counters count only
	// if the gate member is new) and moves the last-active time forward
	// to Last. Counters are added to, never set, so that replicas
	// writing batches of the same workshop lose none of each other's.
	FlushWorkshop(ctx context.Context, code string, b Batch) error
	// SetJoinClosed closes the workshop to newcomers, or opens it; an
	// ended workshop is ErrEnded.
	SetJoinClosed(ctx context.Context, code string, closed bool) error
	// RemoveParticipant removes a participant (ErrNoParticipant if
	// learner is not one): their membership, nickname and predictions go
	// (the polls' counts with them), and learner may not join again.
	RemoveParticipant(ctx context.Context, code, learner string) error
	// WorkshopData returns everything kept about a workshop.
	WorkshopData(ctx context.Context, code string) (Data, error)
	PollBackend
}

// Options change how a Service behaves.
type Options struct {
	// MaxParticipants caps each workshop's participants; below 1 it is
	// DefaultMaxParticipants.
	MaxParticipants int
	// NewCode makes join codes; nil is NewCode. Tests set it to make
	// codes collide.
	NewCode func() string
	// FlushEvery is how long participants' activity may wait in memory
	// before it is written; below 1 it is DefaultFlushEvery.
	FlushEvery time.Duration
	// Now is the clock of the batches; nil is time.Now.
	Now func() time.Time
}

// Service runs workshops on a Backend: it validates what callers give it,
// works out what each event counts, keeps participants' activity in
// memory until it writes it in batches, and turns what the back end
// keeps into statistics. It is safe for concurrent use.
type Service struct {
	b               Backend
	maxParticipants int
	newCode         func() string
	flushEvery      time.Duration
	now             func() time.Time

	mu        sync.Mutex
	workshops map[string]*liveWorkshop // by code: those with recent activity
}

// New returns a Service over b. Whoever makes it calls Run, to write
// batches as they fall due, and Flush before the process exits.
func New(b Backend, o Options) *Service {
	s := &Service{b: b, maxParticipants: o.MaxParticipants, newCode: o.NewCode, flushEvery: o.FlushEvery, now: o.Now, workshops: map[string]*liveWorkshop{}}
	if s.maxParticipants < 1 {
		s.maxParticipants = DefaultMaxParticipants
	}
	if s.newCode == nil {
		s.newCode = NewCode
	}
	if s.flushEvery < 1 {
		s.flushEvery = DefaultFlushEvery
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// startTries is how many fresh codes Start tries before giving up; with
// 31^6 codes, even one collision is rare.
const startTries = 5

// Start starts a workshop at the given time with a fresh join code and
// returns it. An empty title becomes "Workshop <date>".
func (s *Service) Start(ctx context.Context, title string, at time.Time) (Workshop, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		title = "Workshop " + at.UTC().Format("2006-01-02")
	}
	for range startTries {
		w := Workshop{Code: s.newCode(), Title: title, StartedAt: time.UnixMilli(at.UnixMilli())}
		err := s.Create(ctx, w)
		if errors.Is(err, ErrExists) {
			continue
		}
		if err != nil {
			return Workshop{}, err
		}
		return w, nil
	}
	return Workshop{}, fmt.Errorf("workshop: start: no free code after %d tries", startTries)
}

// Create starts a workshop with the code the caller made; if it is
// taken, Create returns an error wrapping ErrExists. w.EndedAt must be
// zero; the title is trimmed.
func (s *Service) Create(ctx context.Context, w Workshop) error {
	if err := checkCode(w.Code); err != nil {
		return fmt.Errorf("workshop: create: %w", err)
	}
	title, err := cleanText("title", w.Title, MaxTitleRunes)
	if err != nil {
		return fmt.Errorf("workshop: create %s: %w", w.Code, err)
	}
	w.Title = title
	if err := checkTime("start time", w.StartedAt); err != nil {
		return fmt.Errorf("workshop: create %s: %w", w.Code, err)
	}
	if !w.EndedAt.IsZero() {
		return fmt.Errorf("workshop: create %s: already ended: %w", w.Code, ErrBadInput)
	}
	// Store what reads will return: times to the millisecond.
	w.StartedAt = time.UnixMilli(w.StartedAt.UnixMilli())
	if err := s.b.CreateWorkshop(ctx, w); err != nil {
		return fmt.Errorf("workshop: create %s: %w", w.Code, err)
	}
	return nil
}

// Get returns the workshop with the given code, or an error wrapping
// ErrNotFound.
func (s *Service) Get(ctx context.Context, code string) (Workshop, error) {
	if err := checkLookupCode(code); err != nil {
		return Workshop{}, fmt.Errorf("workshop: get: %w", err)
	}
	w, err := s.b.Workshop(ctx, code)
	if err != nil {
		return Workshop{}, fmt.Errorf("workshop: get %s: %w", code, err)
	}
	return w, nil
}

// List returns the most recent workshops, running or ended, newest first
// (by start time); at most 200 of them.
func (s *Service) List(ctx context.Context) ([]Workshop, error) {
	ws, err := s.b.Workshops(ctx, maxWorkshops)
	if err != nil {
		return nil, fmt.Errorf("workshop: list: %w", err)
	}
	return ws, nil
}

// End ends a workshop at the given time, after writing what its
// participants did until then. Its results are kept, and later events no
// longer change them. Ending an ended workshop changes nothing and is not
// an error.
func (s *Service) End(ctx context.Context, code string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: end: %w", err)
	}
	if err := checkTime("end time", at); err != nil {
		return fmt.Errorf("workshop: end %s: %w", code, err)
	}
	s.mu.Lock()
	lw := s.workshops[code]
	s.mu.Unlock()
	if lw != nil {
		if err := s.flush(ctx, code, lw); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("workshop: end %s: %w", code, err)
		}
	}
	if err := s.b.EndWorkshop(ctx, code, at); err != nil {
		return fmt.Errorf("workshop: end %s: %w", code, err)
	}
	s.forgetWorkshop(code)
	return nil
}

// Join adds a participant, or renames one who has joined before (keeping
// the first join time). The nickname is trimmed and may be empty; an empty
// nickname leaves an earlier one in place, and no two participants may
// have the same one (NicknameKey), though a participant may join again
// with their own. Joining marks the participant active at the given
// time. Errors wrap ErrNotFound, ErrEnded, ErrRemoved (the instructor
// removed this learner), ErrNicknameTaken, and for a learner who has not
// joined before ErrJoinClosed (closed to newcomers) or ErrFull.
func (s *Service) Join(ctx context.Context, code, learner, nickname string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: join: %w", err)
	}
	nick, err := cleanText("nickname", nickname, MaxNickRunes)
	if err != nil {
		return fmt.Errorf("workshop: join %s: %w", code, err)
	}
	if err := checkTime("join time", at); err != nil {
		return fmt.Errorf("workshop: join %s: %w", code, err)
	}
	j := Joining{Learner: learner, Nickname: nick, NickKey: NicknameKey(nick), At: at, Limit: s.maxParticipants}
	if err := s.b.JoinWorkshop(ctx, code, j); err != nil {
		return fmt.Errorf("workshop: join %s: %w", code, err)
	}
	s.mu.Lock()
	if lw := s.workshops[code]; lw != nil {
		lw.members[learner] = s.now()
	}
	s.mu.Unlock()
	return nil
}

// Record counts an event by a participant and marks the participant
// active at ev.At; the batch it goes to is written within a flush
// interval. It does nothing, and returns nil, if the learner has not
// joined the workshop or the workshop has ended, so that events after the
// end never change its results; such a learner is only looked up. An
// unknown workshop is ErrNotFound; a malformed event, ErrBadInput.
func (s *Service) Record(ctx context.Context, code, learner string, ev Event) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: event: %w", err)
	}
	if err := checkTime("event time", ev.At); err != nil {
		return fmt.Errorf("workshop: %s event: %w", code, err)
	}
	p, err := planEvent(learner, ev)
	if err != nil {
		return fmt.Errorf("workshop: %s event: %w", code, err)
	}
	lw, err := s.live(ctx, code)
	if err != nil {
		return fmt.Errorf("workshop: %s event %s: %w", code, ev.Kind, err)
	}
	if lw == nil {
		// At the ceiling of workshops kept in memory: written at once.
		return s.recordNow(ctx, code, learner, p, ev)
	}
	s.mu.Lock()
	ended := !lw.w.Running()
	s.mu.Unlock()
	if ended {
		return nil
	}
	member, err := s.isMember(ctx, code, lw, learner)
	if err != nil || !member {
		if err != nil {
			err = fmt.Errorf("workshop: %s event %s: %w", code, ev.Kind, err)
		}
		return err
	}
	if err := s.count(ctx, code, lw, learner, p, ev.At); err != nil {
		return fmt.Errorf("workshop: %s event %s: %w", code, ev.Kind, err)
	}
	return nil
}

// recordNow writes one event as a batch of its own.
func (s *Service) recordNow(ctx context.Context, code, learner string, p Plan, ev Event) error {
	member, err := s.b.IsMember(ctx, code, learner)
	if err == nil && member {
		mb := newMemberBatch()
		mb.add(p, ev.At)
		err = s.b.FlushWorkshop(ctx, code, Batch{learner: mb})
	}
	if err != nil {
		return fmt.Errorf("workshop: %s event %s: %w", code, ev.Kind, err)
	}
	return nil
}

// Stats returns the workshop's aggregate results; participants count as
// active if they joined or did something at or after activeSince.
func (s *Service) Stats(ctx context.Context, code string, activeSince time.Time) (Stats, error) {
	if err := checkLookupCode(code); err != nil {
		return Stats{}, fmt.Errorf("workshop: stats: %w", err)
	}
	d, err := s.data(ctx, code)
	if err != nil {
		return Stats{}, fmt.Errorf("workshop: %s stats: %w", code, err)
	}
	return d.Stats(activeSince), nil
}

// Participants returns the workshop's participants in the order they
// joined.
func (s *Service) Participants(ctx context.Context, code string) ([]Participant, error) {
	if err := checkLookupCode(code); err != nil {
		return nil, fmt.Errorf("workshop: participants: %w", err)
	}
	d, err := s.data(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("workshop: %s participants: %w", code, err)
	}
	return d.Participants(), nil
}

// Participants is every member as a Participant, in the order they joined
// (ties by learner id).
func (d Data) Participants() []Participant {
	var ps []Participant
	for _, m := range d.Members {
		ps = append(ps, m.participant(d.Workshop.Code))
	}
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].JoinedAt.Equal(ps[j].JoinedAt) {
			return ps[i].JoinedAt.Before(ps[j].JoinedAt)
		}
		return ps[i].Learner < ps[j].Learner
	})
	return ps
}
