package store

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// learnerReads batches the reads of learners' workshop views. Every open
// workshop page asks for its learner's view once a second (its event
// stream), so a room of a thousand is a thousand reads a second, each a
// round trip. While one pipeline of reads is out, the reads asked for
// meanwhile wait and go together in the next one: a lone read goes at
// once, as before, and under load a round trip carries many.
type learnerReads struct {
	mu      sync.Mutex
	queue   []*learnerRead
	running bool // a goroutine is sending the queue
	// timeout bounds each batch's call: the store's call timeout, or
	// defaultOpTimeout if 0.
	timeout time.Duration
}

// learnerRead is one read: what it asks, and once done is closed, its
// script's reply or error.
type learnerRead struct {
	keys    []string
	learner string
	vals    []any
	err     error
	done    chan struct{}
}

// maxLearnerBatch bounds one pipeline, so that one reply stays small.
const maxLearnerBatch = 256

var learnerScriptRun = redis.NewScript(learnerScript)

// read runs learnerScript for one learner, batched with others.
func (q *learnerReads) read(ctx context.Context, rdb redis.UniversalClient, keys []string, learner string) ([]any, error) {
	rd := &learnerRead{keys: keys, learner: learner, done: make(chan struct{})}
	q.mu.Lock()
	q.queue = append(q.queue, rd)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.send(rdb)
	}
	select {
	case <-rd.done:
		return rd.vals, rd.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send sends the queue, a pipeline at a time, until it is empty.
func (q *learnerReads) send(rdb redis.UniversalClient) {
	for {
		q.mu.Lock()
		batch := q.queue
		if len(batch) > maxLearnerBatch {
			batch = batch[:maxLearnerBatch]
		}
		q.queue = q.queue[len(batch):]
		if len(batch) == 0 {
			q.queue = nil
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		sendLearnerReads(rdb, batch, q.timeout)
	}
}

// sendLearnerReads runs learnerScript once per read in one pipeline; a
// Redis that has lost the script (restarted, flushed) is sent the
// script itself for the reads it refused.
func sendLearnerReads(rdb redis.UniversalClient, batch []*learnerRead, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(timeout, defaultOpTimeout))
	defer cancel()
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, rd := range batch {
			cmds[i] = learnerScriptRun.EvalSha(ctx, p, rd.keys, rd.learner)
		}
		return nil
	})
	for i, rd := range batch {
		cmd := cmds[i]
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			cmd = learnerScriptRun.Eval(ctx, rdb, rd.keys, rd.learner)
		}
		rd.vals, rd.err = cmd.Slice()
		close(rd.done)
	}
}
