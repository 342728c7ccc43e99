package worker

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

// TestQuickCommandsOfAFullSandboxLeaveTheReader: the reading goroutine
// runs a quick command itself only in a sandbox of few keys. In a full
// one even a GET walks every key (miniredis's expiry, once the clock has
// moved), so it goes to the sandbox's own goroutine, and the other
// sandboxes' requests do not wait behind it.
func TestQuickCommandsOfAFullSandboxLeaveTheReader(t *testing.T) {
	s := &server{
		ctx:     context.Background(),
		limits:  playground.Limits{},
		scripts: luaredis.NewCache(0),
		boxes:   map[uint64]*wbox{},
		errlog:  io.Discard,
		cancels: map[uint64]context.CancelFunc{},
		out:     &batchWriter{w: io.Discard, epoch: time.Now()},
		ready:   make(chan *wbox),
		failed:  make(chan error, 1),
		trim:    newTrimmer(),
	}
	now := time.Now().UnixNano()
	s.handle(&request{Op: opOpen, Box: 1, Now: now})
	s.handle(&request{Op: opOpen, Box: 2, Now: now})
	fill := func(box uint64, keys int) {
		b := s.boxes[box]
		for i := range keys {
			if _, _, err := b.sb.ExecWithin(context.Background(), playground.ClientA, fmt.Sprintf("SET key:%d v", i), 1<<22); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill(1, 3)
	fill(2, 500)
	// A learner who writes one key again and again still has one.
	for range 200 {
		if _, _, err := s.boxes[1].sb.ExecWithin(context.Background(), playground.ClientA, "SET key:1 again PX 30000", 1<<22); err != nil {
			t.Fatal(err)
		}
	}
	get := func(box, id uint64) *request {
		return &request{ID: id, Op: opExec, Box: box, Now: time.Now().UnixNano(), Client: playground.ClientA, Line: "GET key:1", Allow: 1 << 22}
	}
	if !quick(get(1, 1)) {
		t.Fatal("GET is not a quick command")
	}
	if ran := s.handle(get(1, 1)); !ran {
		t.Error("a GET in a sandbox of 3 keys, written 200 times, was not run by the reading goroutine")
	}
	if ran := s.handle(get(2, 2)); ran {
		t.Error("a GET in a sandbox of 500 keys was run by the reading goroutine")
	}
	if ran := s.handle(&request{Op: opAdvance, Box: 2, Now: time.Now().UnixNano(), D: int64(time.Second)}); ran {
		t.Error("a clock advance of a sandbox of 500 keys was run by the reading goroutine")
	}
}
