package store

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"
)

// A workshop's version on Redis is its start time and the 'v' field of
// its hash, which every script that changes what every participant sees
// increments: ending it, closing or opening it to newcomers, opening or
// revealing a poll, and removing a participant (whose stream then ends).
// What changes one learner's own view only, their joining and their
// predictions, does not move it: their page has the answer already, and
// their other tabs' streams read it within their reread (see the web
// package), so that a room joining or answering a poll at once does not
// send every stream to read again each second. The start time tells a
// workshop from an earlier one under the same code.

// versionFresh is how long a replica reuses a workshop's version: each
// open event stream asks for it every second, and one read shared by a
// room of a thousand streams is a thousand reads fewer. It is what a
// change may wait beyond the stream's own second.
const versionFresh = 250 * time.Millisecond

// maxVersions bounds the versions a replica keeps; past it the oldest
// half goes. Each is a few dozen bytes.
const maxVersions = 4096

// workshopVersions keeps this replica's last reads of workshops'
// versions, and has one read out per workshop at a time.
type workshopVersions struct {
	mu    sync.Mutex
	byWS  map[string]*wsVersion
	sweep time.Time // when entries older than versionFresh were last dropped
	// timeout bounds each read: the store's call timeout, or
	// defaultOpTimeout if 0.
	timeout time.Duration
}

// wsVersion is one workshop's version as last read; done is closed
// when a read that is out lands.
type wsVersion struct {
	token string
	err   error
	at    time.Time
	done  chan struct{}
}

// get returns code's version, reading it with read unless a read that
// landed within versionFresh, or one that is out now, answers.
func (v *workshopVersions) get(ctx context.Context, code string, now func() time.Time, read func(context.Context) (string, error)) (string, error) {
	v.mu.Lock()
	if v.byWS == nil {
		v.byWS = map[string]*wsVersion{}
	}
	e := v.byWS[code]
	if e != nil {
		select {
		case <-e.done:
			if now().Sub(e.at) < versionFresh {
				v.mu.Unlock()
				return e.token, e.err
			}
			e = nil
		default:
		}
	}
	if e == nil {
		e = &wsVersion{done: make(chan struct{})}
		v.put(code, e, now())
		v.mu.Unlock()
		// The read is shared: it does not end with this caller.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(v.timeout, defaultOpTimeout))
		e.token, e.err = read(rctx)
		cancel()
		e.at = now()
		close(e.done)
		return e.token, e.err
	}
	v.mu.Unlock()
	select {
	case <-e.done:
		return e.token, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// put keeps e as code's version, first dropping what is stale when the
// map is full.
func (v *workshopVersions) put(code string, e *wsVersion, now time.Time) {
	if len(v.byWS) >= maxVersions && now.Sub(v.sweep) >= versionFresh {
		v.sweep = now
		for c, old := range v.byWS {
			select {
			case <-old.done:
				if now.Sub(old.at) >= versionFresh {
					delete(v.byWS, c)
				}
			default:
			}
		}
	}
	if len(v.byWS) >= maxVersions {
		// Every entry is fresh or being read: too many workshops at once
		// to keep; this read is not shared.
		return
	}
	v.byWS[code] = e
}

// workshopVersion reads code's version: "" when the workshop does not
// exist.
func (r *redisBackend) workshopVersion(ctx context.Context, code string) (string, error) {
	return r.versions.get(ctx, code, r.now, func(ctx context.Context) (string, error) {
		vals, err := r.rdb.HMGet(ctx, r.wsKeys(code)[wsKeyMeta], "started", "v").Result()
		if err != nil {
			return "", unavailable(err)
		}
		if len(vals) != 2 || vals[0] == nil {
			return "", nil
		}
		return fmt.Sprintf("%v/%v", vals[0], vals[1]), nil
	})
}
