package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalWriter records what reaches it and signals each write.
type signalWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	wrote  chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) state() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String(), w.writes
}

func TestBatchWriterBatches(t *testing.T) {
	out := &signalWriter{wrote: make(chan struct{}, 1)}
	b := newBatchWriter(out, time.Hour) // only Flush and size write here
	for i := range 50 {
		if _, err := b.Write([]byte("line " + strings.Repeat("x", i) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	if got, n := out.state(); n != 0 || got != "" {
		t.Fatalf("before a flush: %d writes of %q; want none", n, got)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got, n := out.state()
	if n != 1 || strings.Count(got, "\n") != 50 || !strings.HasPrefix(got, "line \nline x\n") {
		t.Fatalf("after Flush: %d writes, %d lines; want 1 write of 50 lines in order", n, strings.Count(got, "\n"))
	}
	// A full batch is written without waiting for the timer, in order.
	line := strings.Repeat("y", 1000) + "\n"
	for range maxBatch/len(line) + 1 {
		_, _ = b.Write([]byte(line))
	}
	if _, n := out.state(); n != 2 {
		t.Fatalf("after more than a batch: %d writes; want 2", n)
	}
	// A line larger than a batch goes straight through, after what waits.
	big := strings.Repeat("z", maxBatch) + "\n"
	_, _ = b.Write([]byte(big))
	got, n = out.state()
	if n != 4 || !strings.HasSuffix(got, line+big) {
		t.Fatalf("after a huge line: %d writes; want 4, with the waiting line first", n)
	}
	_, _ = b.Write([]byte("last\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := out.state(); !strings.HasSuffix(got, "last\n") {
		t.Fatalf("Close did not write what waited: ends %q", got[len(got)-20:])
	}
	// After Close, lines go straight through.
	_, _ = b.Write([]byte("after\n"))
	if got, _ := out.state(); !strings.HasSuffix(got, "after\n") {
		t.Fatalf("a line after Close waited")
	}
}

func TestBatchWriterFlushesOnTimer(t *testing.T) {
	out := &signalWriter{wrote: make(chan struct{}, 1)}
	b := newBatchWriter(out, time.Millisecond)
	defer b.Close()
	_, _ = b.Write([]byte("soon\n"))
	select {
	case <-out.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("the timer never wrote the waiting line")
	}
	if got, _ := out.state(); got != "soon\n" {
		t.Fatalf("timer wrote %q; want %q", got, "soon\n")
	}
}
