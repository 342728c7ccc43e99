package main

import (
	"io"
	"sync"
	"time"
)

// batchWriter collects log lines and writes them in batches: every
// interval, when maxBatch bytes are waiting, and on Close. A request log
// line per request written on its own is a system call per request, which
// costs about as much as serving a small page; batched, it costs a copy.
// A line waits at most interval, and nothing is lost on a clean shutdown
// (run closes the writer last). A crash of the whole process can lose
// what the last interval logged; handler panics are recovered and logged
// like any other line.
type batchWriter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	err    error // the last batch's error, reported to the next Write
	closed bool

	stop chan struct{}
	done chan struct{}
}

// maxBatch is how many bytes wait before they are written at once: about
// a hundred request lines.
const maxBatch = 32 << 10

// newBatchWriter writes to w in batches, flushing at least every interval
// until Close.
func newBatchWriter(w io.Writer, interval time.Duration) *batchWriter {
	b := &batchWriter{w: w, buf: make([]byte, 0, maxBatch), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop(interval)
	return b
}

func (b *batchWriter) loop(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write keeps p for the next batch. A line as large as a batch is written
// at once, after what waits before it, so lines keep their order.
func (b *batchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.err; err != nil {
		b.err = nil
		return 0, err
	}
	if len(b.buf)+len(p) > maxBatch {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	if b.closed || len(p) >= maxBatch {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes what waits.
func (b *batchWriter) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	if err != nil {
		b.err = err
	}
	return err
}

func (b *batchWriter) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Close stops the timer and writes what waits. Writes after Close go
// straight through, so that nothing logged late in a shutdown is lost.
func (b *batchWriter) Close() error {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.flushLocked()
}

// lockedWriter makes each Write whole: lines from several loggers never
// interleave, however large a batch is.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
