package store

// Instructor-led workshops. An instructor starts a workshop, learners join
// it with its code, and a dashboard shows what the room is doing. Every
// piece of state lives in the back end, never in the process, so several
// replicas sharing one Redis show the same dashboard; and every write is
// one atomic step in the back end (a bbolt transaction, a Redis script), so
// replicas writing at the same time never lose each other's counts.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrNotFound means there is no workshop with that code (or it was
// dropped after a long time without use).
var ErrNotFound = errors.New("no such workshop")

// ErrExists means CreateWorkshop was given a code already taken; the
// caller should make a new code and try again.
var ErrExists = errors.New("workshop code already taken")

// ErrEnded means the workshop has ended, so nobody can join it any more.
var ErrEnded = errors.New("workshop has ended")

// ErrFull means the workshop has as many participants as it may have
// (SetMaxParticipants), so nobody new can join; those who joined before
// can still rejoin.
var ErrFull = errors.New("workshop is full")

// DefaultMaxParticipants is how many participants a workshop may have
// unless SetMaxParticipants says otherwise. It bounds what one workshop
// costs: its dashboard and export read every participant.
const DefaultMaxParticipants = 500

// SetMaxParticipants caps each workshop's participants at n (n < 1 means
// DefaultMaxParticipants). Call it before the store is used.
func (s *Store) SetMaxParticipants(n int) { s.maxParticipants = n }

func (s *Store) participantCap() int {
	if s.maxParticipants < 1 {
		return DefaultMaxParticipants
	}
	return s.maxParticipants
}

// ErrBadInput means an argument is malformed: a workshop code, a nickname
// or title that is too long, an unknown event kind, an id with characters
// that are not allowed. Nothing was written.
var ErrBadInput = errors.New("bad input")

// Kinds of workshop events.
const (
	EventAnswer   = "answer"   // a quiz answer: Question, Choice, Correct
	EventComplete = "complete" // the learner completed Topic
	EventCommand  = "command"  // a playground command line
	EventRace     = "race"     // a race scenario played to the end: Scenario, Predicted (bool: a prediction was made), PredictionRight
)

// Limits on what callers may store.
const (
	maxWorkshops    = 200 // Workshops returns at most this many
	maxTitleRunes   = 100
	maxNickRunes    = 40
	minCodeLen      = 4
	maxCodeLen      = 12
	maxIDLen        = 64
	learnerFieldSep = "/" // neither learner ids nor other ids contain it
)

// Workshop is one workshop run by an instructor.
type Workshop struct {
	Code      string // short join code, e.g. "K7QX2M" (the caller makes it)
	Title     string
	StartedAt time.Time
	EndedAt   time.Time // zero while running
}

// Running reports whether the workshop has not ended yet.
func (w Workshop) Running() bool { return w.EndedAt.IsZero() }

// WorkshopEvent is something a participant did. Which fields matter
// depends on Kind; the others are ignored.
type WorkshopEvent struct {
	Kind            string
	Topic           string
	Question        string
	Choice          string
	Correct         bool
	Scenario        string
	Predicted       bool
	PredictionRight bool
	At              time.Time
}

// QuestionStats is how a workshop answered one quiz question.
type QuestionStats struct {
	Choices    map[string]int // choice id -> how many answers chose it (all tries)
	FirstTries int            // participants who have answered it at least once
	FirstRight int            // of those, how many were right on their first try
}

// WorkshopStats is what the dashboard shows about a workshop.
type WorkshopStats struct {
	Workshop         Workshop
	Joined           int
	Active           int                      // participants active (joined or any event) at or after activeSince
	Questions        map[string]QuestionStats // by question id
	Completions      int                      // participants who completed a topic (count each participant once per topic)
	Commands         int
	Races            int
	Predictions      int
	PredictionsRight int
}

// Participant is one learner's part in a workshop, for the results export.
type Participant struct {
	Learner, Nickname    string
	JoinedAt, LastActive time.Time
	Answers, FirstRight  int // answers given; questions right on the first try
	Completed            bool
	Commands, Races      int
}

// workshopBackend is what a storage engine does for workshops. Codes,
// learners and texts arrive validated; times arrive as Unix milliseconds.
// Each method is one atomic step in the back end.
type workshopBackend interface {
	// createWorkshop returns ErrExists if the code is taken.
	createWorkshop(ctx context.Context, w Workshop) error
	// workshop returns ErrNotFound for an unknown code.
	workshop(ctx context.Context, code string) (Workshop, error)
	// workshops returns up to limit workshops, newest first (ties by code,
	// descending).
	workshops(ctx context.Context, limit int) ([]Workshop, error)
	// endWorkshop keeps the first end time if called again.
	endWorkshop(ctx context.Context, code string, at int64) error
	// joinWorkshop keeps the first join time, replaces the nickname unless
	// the new one is empty and moves the last-active time forward. It
	// returns ErrEnded for an ended workshop.
	// A new participant beyond limit gets ErrFull.
	joinWorkshop(ctx context.Context, code, learner, nickname string, at int64, limit int) error
	// recordWorkshopEvent applies p if learner has joined and the workshop
	// is running, and does nothing otherwise.
	recordWorkshopEvent(ctx context.Context, code, learner string, at int64, p eventPlan) error
	// workshopData returns everything kept about a workshop.
	workshopData(ctx context.Context, code string) (workshopData, error)
}

// workshopData is a workshop's raw state as both back ends keep it:
// workshop-wide counters (see the count* functions) and the participants.
type workshopData struct {
	workshop     Workshop
	counts       map[string]int
	participants []Participant
}

// Workshop-wide counters. Question and choice ids cannot contain the
// separator, so the names cannot collide.
const (
	countCommands         = "commands"
	countRaces            = "races"
	countPredictions      = "predictions"
	countPredictionsRight = "predictions-right"
	countCompletions      = "completions"
	countChoicePrefix     = "choice/"     // choice/<question>/<choice>: answers with that choice
	countTriesPrefix      = "tries/"      // tries/<question>: participants who answered it
	countFirstRightPrefix = "firstright/" // firstright/<question>: right on the first try
)

// Per-participant counters.
const (
	pcountAnswers    = "answers"
	pcountFirstRight = "firstright"
	pcountCompleted  = "completed" // topics completed
	pcountCommands   = "commands"
	pcountRaces      = "races"
)

// Sets that gate counters: a counter behind a gate counts only the first
// time its member goes into the set.
const (
	gateNone      = ""
	gateFirst     = "first"     // "<learner>/<question>": answered once
	gateCompleted = "completed" // "<learner>/<topic>": completed once
)

// eventPlan is what one event changes, worked out once so that both back
// ends apply exactly the same counters.
type eventPlan struct {
	counts  []string // workshop counters to add one to
	pcounts []string // the participant's counters to add one to
	// If gate is set, gateMember is added to that set, and only if it was
	// not there yet are gateCounts and gatePcounts added to.
	gate        string
	gateMember  string
	gateCounts  []string
	gatePcounts []string
}

func planEvent(learner string, ev WorkshopEvent) (eventPlan, error) {
	var p eventPlan
	switch ev.Kind {
	case EventAnswer:
		if err := checkID("question", ev.Question); err != nil {
			return p, err
		}
		if err := checkID("choice", ev.Choice); err != nil {
			return p, err
		}
		p.counts = []string{countChoicePrefix + ev.Question + "/" + ev.Choice}
		p.pcounts = []string{pcountAnswers}
		p.gate, p.gateMember = gateFirst, learner+learnerFieldSep+ev.Question
		p.gateCounts = []string{countTriesPrefix + ev.Question}
		if ev.Correct {
			p.gateCounts = append(p.gateCounts, countFirstRightPrefix+ev.Question)
			p.gatePcounts = []string{pcountFirstRight}
		}
	case EventComplete:
		if err := checkID("topic", ev.Topic); err != nil {
			return p, err
		}
		p.gate, p.gateMember = gateCompleted, learner+learnerFieldSep+ev.Topic
		p.gateCounts = []string{countCompletions}
		p.gatePcounts = []string{pcountCompleted}
	case EventCommand:
		p.counts = []string{countCommands}
		p.pcounts = []string{pcountCommands}
	case EventRace:
		if err := checkID("scenario", ev.Scenario); err != nil {
			return p, err
		}
		p.counts = []string{countRaces}
		if ev.Predicted {
			p.counts = append(p.counts, countPredictions)
			if ev.PredictionRight {
				p.counts = append(p.counts, countPredictionsRight)
			}
		}
		p.pcounts = []string{pcountRaces}
	default:
		return p, fmt.Errorf("event kind %q: %w", ev.Kind, ErrBadInput)
	}
	return p, nil
}

// CreateWorkshop starts a workshop. The caller makes the code; if it is
// taken, CreateWorkshop returns an error wrapping ErrExists and the caller
// should try another. w.EndedAt must be zero; the title is trimmed.
func (s *Store) CreateWorkshop(ctx context.Context, w Workshop) error {
	if err := checkCode(w.Code); err != nil {
		return fmt.Errorf("store: create workshop: %w", err)
	}
	title, err := cleanText("title", w.Title, maxTitleRunes)
	if err != nil {
		return fmt.Errorf("store: create workshop %s: %w", w.Code, err)
	}
	w.Title = title
	if err := checkTime("start time", w.StartedAt); err != nil {
		return fmt.Errorf("store: create workshop %s: %w", w.Code, err)
	}
	if !w.EndedAt.IsZero() {
		return fmt.Errorf("store: create workshop %s: already ended: %w", w.Code, ErrBadInput)
	}
	// Store what reads will return: times to the millisecond.
	w.StartedAt = fromMillis(toMillis(w.StartedAt))
	if err := s.b.createWorkshop(ctx, w); err != nil {
		return fmt.Errorf("store: create workshop %s: %w", w.Code, err)
	}
	return nil
}

// Workshop returns the workshop with the given code, or an error wrapping
// ErrNotFound.
func (s *Store) Workshop(ctx context.Context, code string) (Workshop, error) {
	if err := checkLookupCode(code); err != nil {
		return Workshop{}, fmt.Errorf("store: workshop: %w", err)
	}
	w, err := s.b.workshop(ctx, code)
	if err != nil {
		return Workshop{}, fmt.Errorf("store: workshop %s: %w", code, err)
	}
	return w, nil
}

// Workshops returns the most recent workshops, running or ended, newest
// first (by start time); at most 200 of them.
func (s *Store) Workshops(ctx context.Context) ([]Workshop, error) {
	ws, err := s.b.workshops(ctx, maxWorkshops)
	if err != nil {
		return nil, fmt.Errorf("store: list workshops: %w", err)
	}
	return ws, nil
}

// EndWorkshop ends a workshop at the given time. Its results are kept, and
// later events no longer change them. Ending an ended workshop changes
// nothing and is not an error.
func (s *Store) EndWorkshop(ctx context.Context, code string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("store: end workshop: %w", err)
	}
	if err := checkTime("end time", at); err != nil {
		return fmt.Errorf("store: end workshop %s: %w", code, err)
	}
	if err := s.b.endWorkshop(ctx, code, toMillis(at)); err != nil {
		return fmt.Errorf("store: end workshop %s: %w", code, err)
	}
	return nil
}

// JoinWorkshop adds a participant, or renames one who has joined before
// (keeping the first join time). The nickname is trimmed and may be empty;
// an empty nickname leaves an earlier one in place. Joining marks the
// participant active at the given time. Joining an ended workshop returns
// an error wrapping ErrEnded; an unknown one, ErrNotFound; a full one
// (to a learner who has not joined it before), ErrFull.
func (s *Store) JoinWorkshop(ctx context.Context, code, learner, nickname string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("store: join workshop: %w", err)
	}
	if err := checkLearner(learner); err != nil {
		return fmt.Errorf("store: join workshop %s: %w: %w", code, ErrBadInput, err)
	}
	nick, err := cleanText("nickname", nickname, maxNickRunes)
	if err != nil {
		return fmt.Errorf("store: join workshop %s: %w", code, err)
	}
	if err := checkTime("join time", at); err != nil {
		return fmt.Errorf("store: join workshop %s: %w", code, err)
	}
	if err := s.b.joinWorkshop(ctx, code, learner, nick, toMillis(at), s.participantCap()); err != nil {
		return fmt.Errorf("store: join workshop %s: %w", code, err)
	}
	return nil
}

// RecordWorkshopEvent records an event by a participant and marks the
// participant active at ev.At. It does nothing, and returns nil, if the
// learner has not joined the workshop or the workshop has ended, so that
// events after the end never change its results. An unknown workshop is
// ErrNotFound; a malformed event, ErrBadInput.
func (s *Store) RecordWorkshopEvent(ctx context.Context, code, learner string, ev WorkshopEvent) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("store: workshop event: %w", err)
	}
	if err := checkLearner(learner); err != nil {
		return fmt.Errorf("store: workshop %s event: %w: %w", code, ErrBadInput, err)
	}
	if err := checkTime("event time", ev.At); err != nil {
		return fmt.Errorf("store: workshop %s event: %w", code, err)
	}
	p, err := planEvent(learner, ev)
	if err != nil {
		return fmt.Errorf("store: workshop %s event: %w", code, err)
	}
	if err := s.b.recordWorkshopEvent(ctx, code, learner, toMillis(ev.At), p); err != nil {
		return fmt.Errorf("store: workshop %s event %s: %w", code, ev.Kind, err)
	}
	return nil
}

// WorkshopStats returns the workshop's aggregate results; participants
// count as active if they joined or did something at or after
// activeSince.
func (s *Store) WorkshopStats(ctx context.Context, code string, activeSince time.Time) (WorkshopStats, error) {
	if err := checkLookupCode(code); err != nil {
		return WorkshopStats{}, fmt.Errorf("store: workshop stats: %w", err)
	}
	d, err := s.b.workshopData(ctx, code)
	if err != nil {
		return WorkshopStats{}, fmt.Errorf("store: workshop %s stats: %w", code, err)
	}
	return d.stats(activeSince), nil
}

// WorkshopParticipants returns the workshop's participants in the order
// they joined.
func (s *Store) WorkshopParticipants(ctx context.Context, code string) ([]Participant, error) {
	if err := checkLookupCode(code); err != nil {
		return nil, fmt.Errorf("store: workshop participants: %w", err)
	}
	d, err := s.b.workshopData(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("store: workshop %s participants: %w", code, err)
	}
	ps := d.participants
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].JoinedAt.Equal(ps[j].JoinedAt) {
			return ps[i].JoinedAt.Before(ps[j].JoinedAt)
		}
		return ps[i].Learner < ps[j].Learner
	})
	return ps, nil
}

func (d workshopData) stats(activeSince time.Time) WorkshopStats {
	st := WorkshopStats{
		Workshop:         d.workshop,
		Joined:           len(d.participants),
		Questions:        map[string]QuestionStats{},
		Completions:      d.counts[countCompletions],
		Commands:         d.counts[countCommands],
		Races:            d.counts[countRaces],
		Predictions:      d.counts[countPredictions],
		PredictionsRight: d.counts[countPredictionsRight],
	}
	for _, p := range d.participants {
		if !p.LastActive.Before(activeSince) {
			st.Active++
		}
	}
	question := func(id string) QuestionStats {
		qs := st.Questions[id]
		if qs.Choices == nil {
			qs.Choices = map[string]int{}
		}
		return qs
	}
	for name, n := range d.counts {
		switch {
		case strings.HasPrefix(name, countChoicePrefix):
			q, c, ok := strings.Cut(strings.TrimPrefix(name, countChoicePrefix), "/")
			if !ok {
				continue
			}
			qs := question(q)
			qs.Choices[c] = n
			st.Questions[q] = qs
		case strings.HasPrefix(name, countTriesPrefix):
			q := strings.TrimPrefix(name, countTriesPrefix)
			qs := question(q)
			qs.FirstTries = n
			st.Questions[q] = qs
		case strings.HasPrefix(name, countFirstRightPrefix):
			q := strings.TrimPrefix(name, countFirstRightPrefix)
			qs := question(q)
			qs.FirstRight = n
			st.Questions[q] = qs
		}
	}
	return st
}

// newParticipant builds a participant from what a back end keeps.
func newParticipant(learner, nickname string, joined, last int64, pcounts map[string]int) Participant {
	return Participant{
		Learner:    learner,
		Nickname:   nickname,
		JoinedAt:   fromMillis(joined),
		LastActive: fromMillis(last),
		Answers:    pcounts[pcountAnswers],
		FirstRight: pcounts[pcountFirstRight],
		Completed:  pcounts[pcountCompleted] > 0,
		Commands:   pcounts[pcountCommands],
		Races:      pcounts[pcountRaces],
	}
}

func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms) }

// checkCode accepts ^[A-Z0-9]{4,12}$.
func checkCode(code string) error {
	ok := len(code) >= minCodeLen && len(code) <= maxCodeLen
	for i := 0; ok && i < len(code); i++ {
		c := code[i]
		ok = 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	if !ok {
		return fmt.Errorf("workshop code %q: %w", code, ErrBadInput)
	}
	return nil
}

// checkLookupCode is checkCode for a workshop that should exist: no
// workshop can have a malformed code, so the error is also ErrNotFound,
// and a learner who mistypes a code is told there is no such workshop.
func checkLookupCode(code string) error {
	if err := checkCode(code); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNotFound)
	}
	return nil
}

// checkID accepts ^[a-z0-9-]{1,64}$, the shape of question, choice,
// scenario and topic ids.
func checkID(what, id string) error {
	ok := len(id) >= 1 && len(id) <= maxIDLen
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%s id %q: %w", what, id, ErrBadInput)
	}
	return nil
}

// cleanText trims s and checks that it is valid UTF-8 without control
// characters and at most max runes long: titles and nicknames end up on
// dashboards and in CSV files.
func cleanText(what, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "", fmt.Errorf("%s: not UTF-8: %w", what, ErrBadInput)
	case utf8.RuneCountInString(s) > max:
		return "", fmt.Errorf("%s: longer than %d characters: %w", what, max, ErrBadInput)
	case strings.ContainsFunc(s, unicode.IsControl):
		return "", fmt.Errorf("%s: control characters: %w", what, ErrBadInput)
	}
	return s, nil
}

func checkTime(what string, t time.Time) error {
	if t.IsZero() {
		return fmt.Errorf("%s missing: %w", what, ErrBadInput)
	}
	return nil
}
