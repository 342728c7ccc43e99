package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/workshop"
)

// In the bolt file, the workshops bucket holds one bucket per code:
//
//	meta       key: the workshop (boltWorkshopMeta as JSON)
//	members/   learner -> boltMember as JSON
//	counts/    counter name -> decimal count
//	first/     "<learner>/<question>" -> nothing
//	completed/ "<learner>/<topic>" -> nothing
//	lab/       "<learner>/<challenge>" -> nothing (made with the first)
//	polls/     one bucket per poll id (see workshop_poll_bolt.go)
//	nicks/     nickname key (workshop.NicknameKey) -> the learner who has
//	           it (made with the first nickname)
//	removed/   learner -> nothing: removed by the instructor (made with
//	           the first removal)
//
// The workshop index bucket lists codes by start time, so Workshops reads
// the newest ones without looking at every workshop ever run.
const (
	workshopsBucket     = "workshops"
	workshopIndexBucket = "workshops-by-start"
	wsMetaKey           = "meta"
	wsMembersBucket     = "members"
	wsCountsBucket      = "counts"
	wsNicksBucket       = "nicks"
	wsRemovedBucket     = "removed"
)

type boltWorkshopMeta struct {
	Title   string `json:"title"`
	Started int64  `json:"started"`
	Ended   int64  `json:"ended,omitempty"`
	Poll    string `json:"poll,omitempty"`   // the current poll's id
	Polls   int    `json:"polls,omitempty"`  // how many were opened
	Closed  bool   `json:"closed,omitempty"` // closed to newcomers
}

type boltMember struct {
	Nickname string         `json:"nickname,omitempty"`
	NickKey  string         `json:"nickkey,omitempty"` // what nicks/ holds for this member
	Joined   int64          `json:"joined"`
	Last     int64          `json:"last"`
	Counts   map[string]int `json:"counts,omitempty"`
}

// indexKey sorts by start time, then code: the millisecond count with its
// sign bit flipped, big-endian, so that byte order is time order.
func indexKey(started int64, code string) []byte {
	k := make([]byte, 8, 8+len(code))
	binary.BigEndian.PutUint64(k, uint64(started)^(1<<63))
	return append(k, code...)
}

// boltWorkshop is one workshop's bucket, read in a transaction.
type boltWorkshop struct {
	b    *bolt.Bucket
	meta boltWorkshopMeta
}

// openWorkshop finds a workshop's bucket, or returns workshop.ErrNotFound.
func openWorkshop(tx *bolt.Tx, code string) (boltWorkshop, error) {
	root := tx.Bucket([]byte(workshopsBucket))
	if root == nil {
		return boltWorkshop{}, workshop.ErrNotFound
	}
	b := root.Bucket([]byte(code))
	if b == nil {
		return boltWorkshop{}, workshop.ErrNotFound
	}
	var m boltWorkshopMeta
	if err := json.Unmarshal(b.Get([]byte(wsMetaKey)), &m); err != nil {
		return boltWorkshop{}, fmt.Errorf("workshop %s meta: %w", code, err)
	}
	return boltWorkshop{b: b, meta: m}, nil
}

// openRunningWorkshop is openWorkshop for a change that an ended
// workshop refuses: it returns workshop.ErrEnded for one.
func openRunningWorkshop(tx *bolt.Tx, code string) (boltWorkshop, error) {
	ws, err := openWorkshop(tx, code)
	if err == nil && ws.meta.Ended != 0 {
		return boltWorkshop{}, workshop.ErrEnded
	}
	return ws, err
}

func (m boltWorkshopMeta) workshop(code string) workshop.Workshop {
	w := workshop.Workshop{Code: code, Title: m.Title, StartedAt: fromMillis(m.Started), JoinClosed: m.Closed}
	if m.Ended != 0 {
		w.EndedAt = fromMillis(m.Ended)
	}
	return w
}

func putJSON(b *bolt.Bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), data)
}

func (b *boltBackend) createWorkshop(_ context.Context, w workshop.Workshop) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte(workshopsBucket))
		if root.Bucket([]byte(w.Code)) != nil {
			return workshop.ErrExists
		}
		wb, err := root.CreateBucket([]byte(w.Code))
		if err != nil {
			return err
		}
		started := toMillis(w.StartedAt)
		if err := putJSON(wb, wsMetaKey, boltWorkshopMeta{Title: w.Title, Started: started}); err != nil {
			return err
		}
		for _, name := range []string{wsMembersBucket, wsCountsBucket, workshop.GateFirst, workshop.GateCompleted} {
			if _, err := wb.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(workshopIndexBucket)).Put(indexKey(started, w.Code), nil)
	})
}

func (b *boltBackend) workshop(_ context.Context, code string) (workshop.Workshop, error) {
	var w workshop.Workshop
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		w = ws.meta.workshop(code)
		return nil
	})
	return w, err
}

func (b *boltBackend) workshops(_ context.Context, limit int) ([]workshop.Workshop, error) {
	var out []workshop.Workshop
	err := b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(workshopIndexBucket)).Cursor()
		for k, _ := c.Last(); k != nil && len(out) < limit; k, _ = c.Prev() {
			code := string(k[8:])
			ws, err := openWorkshop(tx, code)
			if err != nil {
				return err
			}
			out = append(out, ws.meta.workshop(code))
		}
		return nil
	})
	return out, err
}

func (b *boltBackend) endWorkshop(_ context.Context, code string, at int64) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil || ws.meta.Ended != 0 {
			return err
		}
		ws.meta.Ended = at
		return putJSON(ws.b, wsMetaKey, ws.meta)
	})
}

func getMember(members *bolt.Bucket, learner string) (boltMember, bool, error) {
	v := members.Get([]byte(learner))
	if v == nil {
		return boltMember{}, false, nil
	}
	var m boltMember
	if err := json.Unmarshal(v, &m); err != nil {
		return boltMember{}, false, fmt.Errorf("participant %s: %w", learner, err)
	}
	return m, true, nil
}

func (b *boltBackend) joinWorkshop(_ context.Context, code string, j workshop.Joining) error {
	at := toMillis(j.At)
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openRunningWorkshop(tx, code)
		if err != nil {
			return err
		}
		if removed := ws.b.Bucket([]byte(wsRemovedBucket)); removed != nil && removed.Get([]byte(j.Learner)) != nil {
			return workshop.ErrRemoved
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		m, ok, err := getMember(members, j.Learner)
		if err != nil {
			return err
		}
		if !ok {
			if ws.meta.Closed {
				return workshop.ErrJoinClosed
			}
			if members.Stats().KeyN >= j.Limit {
				return workshop.ErrFull
			}
			m = boltMember{Joined: at, Last: at}
		}
		if j.Nickname != "" {
			nicks, err := ws.b.CreateBucketIfNotExists([]byte(wsNicksBucket))
			if err != nil {
				return err
			}
			if holder := nicks.Get([]byte(j.NickKey)); holder != nil && string(holder) != j.Learner {
				return workshop.ErrNicknameTaken
			}
			if m.NickKey != "" && m.NickKey != j.NickKey {
				if err := nicks.Delete([]byte(m.NickKey)); err != nil {
					return err
				}
			}
			if err := nicks.Put([]byte(j.NickKey), []byte(j.Learner)); err != nil {
				return err
			}
			m.Nickname, m.NickKey = j.Nickname, j.NickKey
		}
		m.Last = max(m.Last, at)
		return putJSON(members, j.Learner, m)
	})
}

func (b *boltBackend) isMember(_ context.Context, code, learner string) (bool, error) {
	var ok bool
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		ok = ws.b.Bucket([]byte(wsMembersBucket)).Get([]byte(learner)) != nil
		return nil
	})
	return ok, err
}

// flushWorkshop applies a batch in one transaction, so one fsync, however
// many participants and events it holds.
func (b *boltBackend) flushWorkshop(_ context.Context, code string, batch workshop.Batch) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		ended := time.Time{}
		if ws.meta.Ended != 0 {
			ended = fromMillis(ws.meta.Ended)
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		counts := ws.b.Bucket([]byte(wsCountsBucket))
		for learner, mb := range batch {
			m, ok, err := getMember(members, learner)
			if err != nil {
				return err
			}
			if !ok || mb.AfterEnd(ended) {
				continue
			}
			if m.Counts == nil {
				m.Counts = map[string]int{}
			}
			for name, n := range mb.Counts {
				if err := add(counts, name, n); err != nil {
					return err
				}
			}
			for name, n := range mb.MemberCounts {
				m.Counts[name] += n
			}
			for _, p := range mb.Gated {
				// Workshops started before a gate existed do not have its bucket.
				gate, err := ws.b.CreateBucketIfNotExists([]byte(p.Gate))
				if err != nil {
					return err
				}
				if gate.Get([]byte(p.GateMember)) != nil {
					continue
				}
				if err := gate.Put([]byte(p.GateMember), nil); err != nil {
					return err
				}
				for _, name := range p.GateCounts {
					if err := add(counts, name, 1); err != nil {
						return err
					}
				}
				for _, name := range p.GateMemberCounts {
					m.Counts[name]++
				}
			}
			if len(m.Counts) == 0 {
				m.Counts = nil
			}
			m.Last = max(m.Last, toMillis(mb.Last))
			if err := putJSON(members, learner, m); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *boltBackend) setJoinClosed(_ context.Context, code string, closed bool) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openRunningWorkshop(tx, code)
		if err != nil {
			return err
		}
		if ws.meta.Closed == closed {
			return nil
		}
		ws.meta.Closed = closed
		return putJSON(ws.b, wsMetaKey, ws.meta)
	})
}

func (b *boltBackend) removeParticipant(_ context.Context, code, learner string) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		m, ok, err := getMember(members, learner)
		if err != nil {
			return err
		}
		if !ok {
			return workshop.ErrNoParticipant
		}
		if err := members.Delete([]byte(learner)); err != nil {
			return err
		}
		if nicks := ws.b.Bucket([]byte(wsNicksBucket)); nicks != nil && m.NickKey != "" && string(nicks.Get([]byte(m.NickKey))) == learner {
			if err := nicks.Delete([]byte(m.NickKey)); err != nil {
				return err
			}
		}
		removed, err := ws.b.CreateBucketIfNotExists([]byte(wsRemovedBucket))
		if err != nil {
			return err
		}
		if err := removed.Put([]byte(learner), nil); err != nil {
			return err
		}
		return dropPredictions(ws, learner)
	})
}

func (b *boltBackend) workshopData(_ context.Context, code string) (workshop.Data, error) {
	d := workshop.Data{Counts: map[string]int{}}
	err := b.db.View(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		d.Workshop = ws.meta.workshop(code)
		err = ws.b.Bucket([]byte(wsCountsBucket)).ForEach(func(k, v []byte) error {
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return fmt.Errorf("counter %s: %w", k, err)
			}
			d.Counts[string(k)] = n
			return nil
		})
		if err != nil {
			return err
		}
		return ws.b.Bucket([]byte(wsMembersBucket)).ForEach(func(k, v []byte) error {
			var m boltMember
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("participant %s: %w", k, err)
			}
			d.Members = append(d.Members, member(string(k), m.Nickname, m.Joined, m.Last, m.Counts))
			return nil
		})
	})
	return d, err
}
