package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/workshop"
)

// Polls in the bolt file: a workshop's polls/ bucket, made with its first
// poll, holds one bucket per poll:
//
//	poll     key: the poll as JSON, reveal time included
//	picks/   learner -> prediction (ids joined by commas)
//	counts/  outcome -> participants who picked it, and #answered
const (
	wsPollsBucket   = "polls"
	pollKey         = "poll"
	pollPicksBucket = "picks"
)

// openPollBucket finds a poll's bucket and reads the poll.
func openPollBucket(ws boltWorkshop, id string) (*bolt.Bucket, workshop.Poll, error) {
	var p workshop.Poll
	polls := ws.b.Bucket([]byte(wsPollsBucket))
	if polls == nil {
		return nil, p, workshop.ErrNoPoll
	}
	pb := polls.Bucket([]byte(id))
	if pb == nil {
		return nil, p, workshop.ErrNoPoll
	}
	if err := json.Unmarshal(pb.Get([]byte(pollKey)), &p); err != nil {
		return nil, p, fmt.Errorf("poll %s: %w", id, err)
	}
	p.OpenedAt = fromMillis(p.OpenedAt.UnixMilli())
	if p.Revealed() {
		p.RevealedAt = fromMillis(p.RevealedAt.UnixMilli())
	}
	return pb, p, nil
}

func (b *boltBackend) openPoll(_ context.Context, code string, p workshop.Poll, limit int) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openRunningWorkshop(tx, code)
		if err != nil {
			return err
		}
		if ws.meta.Polls >= limit {
			return workshop.ErrTooManyPolls
		}
		polls, err := ws.b.CreateBucketIfNotExists([]byte(wsPollsBucket))
		if err != nil {
			return err
		}
		pb, err := polls.CreateBucket([]byte(p.ID))
		if err != nil {
			return fmt.Errorf("poll %s: %w", p.ID, workshop.ErrExists)
		}
		for _, name := range []string{pollPicksBucket, wsCountsBucket} {
			if _, err := pb.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		if err := putJSON(pb, pollKey, p); err != nil {
			return err
		}
		ws.meta.Poll, ws.meta.Polls = p.ID, ws.meta.Polls+1
		return putJSON(ws.b, wsMetaKey, ws.meta)
	})
}

func (b *boltBackend) predict(_ context.Context, code, id, learner string, prediction []string, at int64) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		st, ws, pb, p, err := predictState(tx, code, id, learner)
		if err != nil {
			return err
		}
		if err := st.MayPredict(); err != nil {
			return err
		}
		prediction, err := p.CheckPrediction(prediction)
		if err != nil {
			return err
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		m, _, err := getMember(members, learner)
		if err != nil {
			return err
		}
		picks, counts := pb.Bucket([]byte(pollPicksBucket)), pb.Bucket([]byte(wsCountsBucket))
		if err := addAll(counts, workshop.Tally(storedPrediction(picks, learner), prediction)); err != nil {
			return err
		}
		if err := picks.Put([]byte(learner), []byte(workshop.JoinPrediction(prediction))); err != nil {
			return err
		}
		m.Last = max(m.Last, at)
		return putJSON(members, learner, m)
	})
}

// predictState reads what workshop.PredictState names about learner's
// prediction on poll id, with the workshop and the poll's bucket when
// they exist.
func predictState(tx *bolt.Tx, code, id, learner string) (st workshop.PredictState, ws boltWorkshop, pb *bolt.Bucket, p workshop.Poll, err error) {
	ws, err = openWorkshop(tx, code)
	if errors.Is(err, workshop.ErrNotFound) {
		return st, ws, nil, p, nil
	}
	if err != nil {
		return st, ws, nil, p, err
	}
	st.Found, st.Ended = true, ws.meta.Ended != 0
	if _, st.Joined, err = getMember(ws.b.Bucket([]byte(wsMembersBucket)), learner); err != nil {
		return st, ws, nil, p, err
	}
	pb, p, err = openPollBucket(ws, id)
	if errors.Is(err, workshop.ErrNoPoll) {
		return st, ws, nil, p, nil
	}
	if err != nil {
		return st, ws, nil, p, err
	}
	st.PollFound, st.Revealed = true, p.Revealed()
	return st, ws, pb, p, nil
}

// dropPredictions takes a removed participant's predictions out of every
// poll of the workshop, and out of its counts.
func dropPredictions(ws boltWorkshop, learner string) error {
	polls := ws.b.Bucket([]byte(wsPollsBucket))
	if polls == nil {
		return nil
	}
	// The polls are listed first: a bucket must not change while it is
	// walked.
	var ids []string
	if err := polls.ForEachBucket(func(id []byte) error { ids = append(ids, string(id)); return nil }); err != nil {
		return err
	}
	for _, id := range ids {
		pb := polls.Bucket([]byte(id))
		picks, counts := pb.Bucket([]byte(pollPicksBucket)), pb.Bucket([]byte(wsCountsBucket))
		old := storedPrediction(picks, learner)
		if old == nil {
			continue
		}
		if err := addAll(counts, workshop.Tally(old, nil)); err != nil {
			return err
		}
		if err := picks.Delete([]byte(learner)); err != nil {
			return err
		}
	}
	return nil
}

// storedPrediction is a learner's prediction in a poll's picks, nil if
// they made none.
func storedPrediction(picks *bolt.Bucket, learner string) []string {
	v := picks.Get([]byte(learner))
	if v == nil {
		return nil
	}
	return workshop.SplitPrediction(string(v))
}

// addAll adds a workshop.Tally to a poll's counters.
func addAll(b *bolt.Bucket, tally map[string]int) error {
	for name, n := range tally {
		if err := add(b, name, n); err != nil {
			return err
		}
	}
	return nil
}

// add adds n to a counter.
func add(b *bolt.Bucket, name string, n int) error {
	v, err := count(b, name)
	if err != nil {
		return err
	}
	return b.Put([]byte(name), []byte(strconv.Itoa(v+n)))
}

func count(b *bolt.Bucket, name string) (int, error) {
	v := b.Get([]byte(name))
	if v == nil {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("counter %s: %w", name, err)
	}
	return n, nil
}

func (b *boltBackend) revealPoll(_ context.Context, code, id string, at int64) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		pb, p, err := openPollBucket(ws, id)
		if err != nil || p.Revealed() {
			return err
		}
		p.RevealedAt = fromMillis(at)
		return putJSON(pb, pollKey, p)
	})
}

// pollResult reads a poll's counters.
func pollResult(pb *bolt.Bucket, p workshop.Poll, joined int) (workshop.PollResult, error) {
	counters := map[string]int{}
	err := pb.Bucket([]byte(wsCountsBucket)).ForEach(func(k, v []byte) error {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return fmt.Errorf("counter %s: %w", k, err)
		}
		counters[string(k)] = n
		return nil
	})
	if err != nil {
		return workshop.PollResult{}, err
	}
	return p.Result(counters, joined), nil
}

func (b *boltBackend) pollResult(_ context.Context, code, id string) (workshop.PollResult, error) {
	var res workshop.PollResult
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		if id == "" {
			id = ws.meta.Poll
		}
		if id == "" {
			return workshop.ErrNoPoll
		}
		pb, p, err := openPollBucket(ws, id)
		if err != nil {
			return err
		}
		res, err = pollResult(pb, p, ws.b.Bucket([]byte(wsMembersBucket)).Stats().KeyN)
		return err
	})
	return res, err
}

func (b *boltBackend) polls(_ context.Context, code string) ([]workshop.PollResult, error) {
	var out []workshop.PollResult
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		polls := ws.b.Bucket([]byte(wsPollsBucket))
		if polls == nil {
			return nil
		}
		joined := ws.b.Bucket([]byte(wsMembersBucket)).Stats().KeyN
		return polls.ForEachBucket(func(k []byte) error {
			pb, p, err := openPollBucket(ws, string(k))
			if err != nil {
				return err
			}
			res, err := pollResult(pb, p, joined)
			out = append(out, res)
			return err
		})
	})
	return out, err
}

// workshopVersion is "": a learner's state is read from this process's
// own file, as cheap as a version would be.
func (b *boltBackend) workshopVersion(context.Context, string) (string, error) { return "", nil }

func (b *boltBackend) learnerState(_ context.Context, code, learner string) (workshop.LearnerState, error) {
	var st workshop.LearnerState
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		m, ok, err := getMember(ws.b.Bucket([]byte(wsMembersBucket)), learner)
		if err != nil {
			return err
		}
		if !ok {
			return workshop.ErrNotJoined
		}
		st = workshop.LearnerState{Workshop: ws.meta.workshop(code), Nickname: m.Nickname}
		if ws.meta.Poll == "" {
			return nil
		}
		pb, p, err := openPollBucket(ws, ws.meta.Poll)
		if err != nil {
			return err
		}
		st.Poll = &p
		st.Prediction = workshop.SplitPrediction(string(pb.Bucket([]byte(pollPicksBucket)).Get([]byte(learner))))
		return nil
	})
	return st, err
}
