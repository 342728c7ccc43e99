package limit

import (
	"context"
	"errors"
	"time"
)

// Ask is one question in a batch put to limiters and meters together: a
// Limiter asked to let one event for Key through, or a Meter asked whether
// Key holds Need units and then to give up Take of them (or all it holds,
// if that is fewer).
type Ask struct {
	Limiter Limiter
	Meter   Meter
	Key     string
	Need    int
	Take    int
}

// Answer is a batch's answer. Refused is the index of the Ask that
// refused, or -1 when every one allowed; Have is what a refusing meter
// held.
type Answer struct {
	Refused int
	Have    int
}

// Asker answers a batch of Asks at once. The store's answers one on Redis
// in one round trip, and counts nothing unless every Ask allows: a request
// refused by one limit (its address's, a script's time) uses up none of
// the others. A request's limits are asked in one batch, as a round trip
// per limit is most of what checking them costs.
type Asker interface {
	Ask(ctx context.Context, asks []Ask) (Answer, error)
}

// AskEach answers asks one at a time, in order, and stops at the first
// that refuses; limiters asked before it have counted their event. It is
// how an Asker answers when its limiters cannot be asked together (in this
// process, or on a Redis Cluster, whose keys live on different nodes).
// Each Ask fails open: one whose limiter or meter fails allows, and its
// error is returned with the answer.
func AskEach(ctx context.Context, asks []Ask) (Answer, error) {
	var errs error
	for i, a := range asks {
		switch {
		case a.Limiter != nil:
			ok, err := allow(ctx, a.Limiter, a.Key)
			errs = errors.Join(errs, err)
			if !ok {
				return Answer{Refused: i}, errs
			}
		case a.Meter != nil:
			if a.Need > 0 {
				have, err := a.Meter.Available(ctx, a.Key)
				errs = errors.Join(errs, err)
				if err == nil && have < a.Need {
					return Answer{Refused: i, Have: have}, errs
				}
			}
			errs = errors.Join(errs, take(ctx, a.Meter, a.Key, a.Take))
		}
	}
	return Answer{Refused: -1}, errs
}

// batch is a request's limits being gathered into one batch of Asks, with
// each one's limit name and the time a unit takes to come back (for a
// limiter, the wait it asks of a refused client).
type batch struct {
	asks  []Ask
	names []string
	every []time.Duration
}

// limiter adds a limiter asked to let one event for key through; a nil l
// is no limit and adds nothing.
func (q *batch) limiter(l Limiter, key, name string) {
	if l != nil {
		q.asks = append(q.asks, Ask{Limiter: l, Key: key})
		q.names = append(q.names, name)
		q.every = append(q.every, limiterWait)
	}
}

// need adds a meter that must hold need units for key, one coming back
// every every; a nil m adds nothing.
func (q *batch) need(m Meter, key string, need int, every time.Duration, name string) {
	if m != nil {
		q.asks = append(q.asks, Ask{Meter: m, Key: key, Need: need})
		q.names = append(q.names, name)
		q.every = append(q.every, every)
	}
}

// take adds n units taken from key's meter; a nil m or n <= 0 adds
// nothing.
func (q *batch) take(m Meter, key string, n int) {
	if m != nil && n > 0 {
		q.asks = append(q.asks, Ask{Meter: m, Key: key, Take: n})
		q.names = append(q.names, "")
		q.every = append(q.every, 0)
	}
}

// ask puts the batch to a (AskEach when a is nil) and turns its answer
// into a Decision. The limits fail open: an error allows, and is returned
// for the caller to log.
func (q *batch) ask(ctx context.Context, a Asker) (Decision, error) {
	if len(q.asks) == 0 {
		return Decision{}, nil
	}
	var ans Answer
	var err error
	if a != nil {
		ans, err = a.Ask(ctx, q.asks)
	} else {
		ans, err = AskEach(ctx, q.asks)
	}
	i := ans.Refused
	if i < 0 || i >= len(q.asks) {
		return Decision{}, err
	}
	if q.asks[i].Limiter != nil {
		return Decision{Limit: q.names[i], Wait: q.every[i]}, err
	}
	return Decision{Limit: q.names[i], Wait: time.Duration(q.asks[i].Need-ans.Have) * q.every[i]}, err
}
