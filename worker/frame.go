package worker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Framing: each message between the server and a worker is a frame, a
// 4-byte big-endian length and that many bytes. Framing knows nothing of
// what a frame carries, so that many goroutines can share one pipe without
// waiting on each other; encoding.go turns requests and responses into frame
// bodies and back.

// maxFrame bounds a frame: a snapshot of a full sandbox (4 MiB of data,
// 1 MiB of scripts) with room to spare.
const maxFrame = 64 << 20

// errFrame is a frame, request or response that does not parse.
var errFrame = errors.New("malformed frame")

// batchWriter writes frames from many goroutines. A goroutine appends its
// frame under a short lock; the one that finds no write under way then
// writes all that is appended, its frame and those that come meanwhile,
// outside the lock. So no goroutine waits behind another's system call,
// and under load one write carries many frames.
type batchWriter struct {
	w     io.Writer
	mu    sync.Mutex
	buf   []byte
	spare []byte
	busy  bool  // a goroutine is writing
	err   error // the first write error, or errStopped; then no more writes
	// epoch and since tell how long the write under way has taken, for a
	// watchdog to notice a reader that stopped reading: since is when it
	// started, in monotonic nanoseconds after epoch (plus one), 0 if none.
	epoch time.Time
	since atomic.Int64
}

// writing returns how long the write under way has taken, 0 if none.
func (b *batchWriter) writing() time.Duration {
	since := b.since.Load()
	if since == 0 {
		return 0
	}
	return time.Since(b.epoch) - time.Duration(since-1)
}

var errStopped = errors.New("stopped")

// send appends a frame and writes it, with others, unless another
// goroutine is writing, which then writes it too. It returns the write's
// error if it wrote, or the first error of an earlier write.
func (b *batchWriter) send(encode func([]byte) []byte) error {
	if err := b.add(encode); err != nil {
		return err
	}
	return b.flush()
}

// add appends a frame, to be written by the next flush or send.
func (b *batchWriter) add(encode func([]byte) []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	start := len(b.buf)
	b.buf = encode(append(b.buf, 0, 0, 0, 0))
	n := len(b.buf) - start - 4
	if n > maxFrame {
		b.buf = b.buf[:start]
		return fmt.Errorf("frame of %d bytes: over %d", n, maxFrame)
	}
	binary.BigEndian.PutUint32(b.buf[start:], uint32(n))
	return nil
}

// flush writes what was added, unless another goroutine is writing,
// which then writes it too.
func (b *batchWriter) flush() error {
	b.mu.Lock()
	if b.busy || b.err != nil || len(b.buf) == 0 {
		err := b.err
		b.mu.Unlock()
		return err
	}
	b.busy = true
	for {
		out := b.buf
		b.buf, b.spare = b.spare[:0], nil
		b.mu.Unlock()
		b.since.Store(int64(time.Since(b.epoch)) + 1)
		_, err := b.w.Write(out)
		b.since.Store(0)
		b.mu.Lock()
		if cap(out) <= 1<<20 {
			b.spare = out[:0] // keep a buffer of the usual size
		}
		if err != nil && b.err == nil {
			b.err = err
		}
		if b.err != nil || len(b.buf) == 0 {
			b.busy = false
			err := b.err
			b.mu.Unlock()
			return err
		}
	}
}

// stop makes later sends fail with errStopped.
func (b *batchWriter) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = errStopped
	}
}

// frameReader reads frames from a buffered reader.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

// ready reports whether a whole frame is buffered, so that read will not
// wait.
func (f *frameReader) ready() bool {
	if f.r.Buffered() < 4 {
		return false // and Peek would wait for more
	}
	hdr, err := f.r.Peek(4)
	if err != nil {
		return false
	}
	return f.r.Buffered() >= 4+int(binary.BigEndian.Uint32(hdr))
}

// read returns the next frame's bytes, valid until the next call.
func (f *frameReader) read() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes: %w", n, errFrame)
	}
	if cap(f.buf) < int(n) || cap(f.buf) > 64<<10 && n <= 64<<10 {
		f.buf = make([]byte, n)
	}
	b := f.buf[:n]
	if _, err := io.ReadFull(f.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
