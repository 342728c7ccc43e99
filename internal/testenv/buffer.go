package testenv

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a server's goroutines (its logger,
// a child process's stdout and stderr) may write to while a test reads it.
// Its zero value is ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
