package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

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
//
// The workshop index bucket lists codes by start time, so Workshops reads
// the newest ones without looking at every workshop ever run.
const (
	workshopsBucket     = "workshops"
	workshopIndexBucket = "workshops-by-start"
	wsMetaKey           = "meta"
	wsMembersBucket     = "members"
	wsCountsBucket      = "counts"
)

type boltWorkshopMeta struct {
	Title   string `json:"title"`
	Started int64  `json:"started"`
	Ended   int64  `json:"ended,omitempty"`
	Poll    string `json:"poll,omitempty"`  // the current poll's id
	Polls   int    `json:"polls,omitempty"` // how many were opened
}

type boltMember struct {
	Nickname string         `json:"nickname,omitempty"`
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

func (m boltWorkshopMeta) workshop(code string) workshop.Workshop {
	w := workshop.Workshop{Code: code, Title: m.Title, StartedAt: fromMillis(m.Started)}
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

func (b *boltBackend) joinWorkshop(_ context.Context, code, learner, nickname string, at int64, limit int) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil {
			return err
		}
		if ws.meta.Ended != 0 {
			return workshop.ErrEnded
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		m, ok, err := getMember(members, learner)
		if err != nil {
			return err
		}
		if !ok {
			if members.Stats().KeyN >= limit {
				return workshop.ErrFull
			}
			m = boltMember{Joined: at, Last: at}
		}
		if nickname != "" {
			m.Nickname = nickname
		}
		m.Last = max(m.Last, at)
		return putJSON(members, learner, m)
	})
}

func (b *boltBackend) recordWorkshopEvent(_ context.Context, code, learner string, at int64, p workshop.Plan) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		ws, err := openWorkshop(tx, code)
		if err != nil || ws.meta.Ended != 0 {
			return err
		}
		members := ws.b.Bucket([]byte(wsMembersBucket))
		m, ok, err := getMember(members, learner)
		if err != nil || !ok {
			return err
		}
		m.Last = max(m.Last, at)
		counts := ws.b.Bucket([]byte(wsCountsBucket))
		bump := func(names, pnames []string) error {
			for _, name := range names {
				if err := incr(counts, name); err != nil {
					return err
				}
			}
			if len(pnames) > 0 && m.Counts == nil {
				m.Counts = map[string]int{}
			}
			for _, name := range pnames {
				m.Counts[name]++
			}
			return nil
		}
		if err := bump(p.Counts, p.MemberCounts); err != nil {
			return err
		}
		if p.Gate != workshop.GateNone {
			// Workshops started before a gate existed do not have its bucket.
			gate, err := ws.b.CreateBucketIfNotExists([]byte(p.Gate))
			if err != nil {
				return err
			}
			if gate.Get([]byte(p.GateMember)) == nil {
				if err := gate.Put([]byte(p.GateMember), nil); err != nil {
					return err
				}
				if err := bump(p.GateCounts, p.GateMemberCounts); err != nil {
					return err
				}
			}
		}
		return putJSON(members, learner, m)
	})
}

func incr(b *bolt.Bucket, name string) error {
	n := 0
	if v := b.Get([]byte(name)); v != nil {
		var err error
		if n, err = strconv.Atoi(string(v)); err != nil {
			return fmt.Errorf("counter %s: %w", name, err)
		}
	}
	return b.Put([]byte(name), []byte(strconv.Itoa(n+1)))
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
