package workshop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Who may join: the instructor can close a workshop to newcomers and
// remove a participant, and no two participants share a nickname. The
// back end checks these rules in the same atomic step as the join, so two
// replicas cannot both let in one more or hand out one name twice.

// ErrJoinClosed means the instructor has closed the workshop to newcomers;
// those who joined before can still rejoin.
var ErrJoinClosed = errors.New("workshop is not taking new participants")

// ErrNicknameTaken means another participant of the workshop has that
// nickname (compared without regard to case); the learner may pick
// another.
var ErrNicknameTaken = errors.New("nickname is taken in this workshop")

// ErrRemoved means the instructor removed the learner from the workshop:
// they no longer take part in it and cannot join it again with the same
// learner id.
var ErrRemoved = errors.New("removed from this workshop by the instructor")

// ErrNoParticipant means the workshop has no participant with that key.
var ErrNoParticipant = errors.New("no such participant in this workshop")

// Joining is one join as a Backend applies it.
type Joining struct {
	Learner string
	// Nickname is the cleaned nickname, or "" to keep the one the
	// learner has; NickKey is NicknameKey(Nickname), what must be unique.
	Nickname, NickKey string
	At                time.Time
	// Limit is the most participants the workshop may have.
	Limit int
}

// NicknameKey is what two nicknames must not share within a workshop:
// the nickname with every letter case-folded and every run of spaces made
// one, so that "Ann", "ANN" and "ann" are one name. It takes a nickname
// already cleaned (cleanText).
func NicknameKey(nickname string) string {
	return strings.Map(foldRune, strings.Join(strings.Fields(nickname), " "))
}

// foldRune is the smallest rune of r's case-folding orbit ('K', 'k' and
// the Kelvin sign all become 'K'), as strings.EqualFold compares them.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// participantKeyLen is how many hex digits of the hash a participant key
// keeps: 64 bits, so that two of a workshop's participants never share
// one.
const participantKeyLen = 16

// ParticipantKey names a participant of the workshop code on the
// instructor's pages. It is not the learner id, which is the learner's
// session and must not be shown to anyone, nor can it be turned back
// into one.
func ParticipantKey(code, learner string) string {
	sum := sha256.Sum256([]byte(code + "/" + learner))
	return hex.EncodeToString(sum[:])[:participantKeyLen]
}

// checkParticipantKey accepts what ParticipantKey makes and reports
// anything else as a participant who does not exist.
func checkParticipantKey(key string) error {
	ok := len(key) == participantKeyLen
	for i := 0; ok && i < len(key); i++ {
		c := key[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
	}
	if !ok {
		return fmt.Errorf("participant %q: %w (%w)", key, ErrBadInput, ErrNoParticipant)
	}
	return nil
}

// SetJoining opens the workshop to newcomers (open) or closes it to them.
// Participants who joined before may rejoin either way. An ended
// workshop is ErrEnded.
func (s *Service) SetJoining(ctx context.Context, code string, open bool) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: joining: %w", err)
	}
	if err := s.b.SetJoinClosed(ctx, code, !open); err != nil {
		return fmt.Errorf("workshop: %s joining: %w", code, err)
	}
	s.forgetWorkshop(code)
	return nil
}

// Remove removes the participant with the given key (ParticipantKey)
// from the workshop: they are no longer a member, their nickname is free
// again, their predictions leave the polls' counts, and they cannot join
// the workshop again with the same learner id. What they did before stays
// in the workshop's totals. An unknown key is ErrNoParticipant.
func (s *Service) Remove(ctx context.Context, code, key string) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: remove: %w", err)
	}
	if err := checkParticipantKey(key); err != nil {
		return fmt.Errorf("workshop: %s remove: %w", code, err)
	}
	d, err := s.b.WorkshopData(ctx, code)
	if err != nil {
		return fmt.Errorf("workshop: %s remove: %w", code, err)
	}
	learner := ""
	for _, m := range d.Members {
		if ParticipantKey(code, m.Learner) == key {
			learner = m.Learner
		}
	}
	if learner == "" {
		return fmt.Errorf("workshop: %s remove %s: %w", code, key, ErrNoParticipant)
	}
	// What they did until now counts: their batch is written first.
	s.mu.Lock()
	lw := s.workshops[code]
	s.mu.Unlock()
	if lw != nil {
		if err := s.flush(ctx, code, lw); err != nil {
			return fmt.Errorf("workshop: %s remove %s: %w", code, key, err)
		}
	}
	s.forgetMember(code, learner)
	if err := s.b.RemoveParticipant(ctx, code, learner); err != nil {
		return fmt.Errorf("workshop: %s remove %s: %w", code, key, err)
	}
	return nil
}
