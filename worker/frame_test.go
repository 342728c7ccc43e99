package worker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// TestBatchWriter sends frames from many goroutines, now and then one
// larger than the buffer the writer keeps, to a slow writer, and reads
// them all back whole. A writer that went on appending to the buffer it
// was writing from corrupted frames once.
func TestBatchWriter(t *testing.T) {
	var out slowWriter
	w := &batchWriter{w: &out}
	const goroutines, frames = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range frames {
				resp := &response{ID: uint64(g*frames + i + 1), Result: playground.Result{Output: fmt.Sprint(i)}}
				if i%50 == 7 {
					resp.Result.Output = strings.Repeat("x", 1<<20+i)
				}
				if err := w.send(resp.appendTo); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	in := &frameReader{r: bufio.NewReader(&out.buf)}
	seen := map[uint64]bool{}
	for {
		frame, err := in.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := decodeResponse(frame)
		if err != nil {
			t.Fatalf("frame %d: %v", len(seen), err)
		}
		seen[resp.ID] = true
	}
	if len(seen) != goroutines*frames {
		t.Errorf("%d distinct frames read; want %d", len(seen), goroutines*frames)
	}
}

// slowWriter keeps what is written, taking its time, as a pipe to a busy
// reader does.
type slowWriter struct{ buf bytes.Buffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(100 * time.Microsecond)
	return w.buf.Write(bytes.Clone(p))
}

// TestBatchWriterAfterLargeFrame is the case that corrupted frames, step
// by step: after a frame too large to keep the buffer of, a write went
// out from the buffer that the next frames were appended to.
func TestBatchWriterAfterLargeFrame(t *testing.T) {
	gate := &gatedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	w := &batchWriter{w: gate}
	frame := func(id uint64, size int) func([]byte) []byte {
		return (&response{ID: id, Result: playground.Result{Output: strings.Repeat("x", size)}}).appendTo
	}
	w.send(frame(1, 10))
	w.send(frame(2, 2<<20))
	gate.block = true
	done := make(chan struct{})
	go func() {
		w.send(frame(3, 10)) // writes, and blocks in the gate
		close(done)
	}()
	<-gate.entered
	w.send(frame(4, 10)) // appended while 3 is being written
	close(gate.release)
	<-done
	in := &frameReader{r: bufio.NewReader(&gate.buf)}
	for want := uint64(1); want <= 4; want++ {
		frame, err := in.read()
		if err != nil {
			t.Fatalf("frame %d: %v", want, err)
		}
		if resp, err := decodeResponse(frame); err != nil || resp.ID != want {
			t.Fatalf("frame %d decodes as %+v, %v", want, resp, err)
		}
	}
}

// gatedWriter keeps what is written; once block is set, a write waits
// for release, and keeps the bytes as they are when released.
type gatedWriter struct {
	buf     bytes.Buffer
	block   bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if w.block {
		w.once.Do(func() { close(w.entered) })
		<-w.release
	}
	return w.buf.Write(p)
}

// TestFrameLimits: a frame header over the limit or a short frame is an
// error, not an allocation or a hang.
func TestFrameLimits(t *testing.T) {
	for _, input := range [][]byte{
		{0xff, 0xff, 0xff, 0xff},
		{0, 0, 0, 10, 1, 2},
		{0, 0},
	} {
		in := &frameReader{r: bufio.NewReader(bytes.NewReader(input))}
		if _, err := in.read(); err == nil {
			t.Errorf("read(% x) succeeded; want an error", input)
		}
	}
}
