package limit

import (
	"sync"
	"testing"
	"time"
)

// TestLocks checks that a key's lock holds off the same key and not
// another one.
func TestLocks(t *testing.T) {
	l := NewLocks()
	unlock := l.Lock("192.0.2.1")
	// Another key that shares no lock with it goes on at once.
	other := ""
	for i := range 1000 {
		k := "198.51.100." + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if &l.stripes[l.index(k)] != &l.stripes[l.index("192.0.2.1")] {
			other = k
			break
		}
	}
	done := make(chan struct{})
	go func() { l.Lock(other)(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("another address waited for the first one's lock")
	}
	var got sync.Mutex
	locked := false
	second := make(chan struct{})
	go func() {
		u := l.Lock("192.0.2.1")
		got.Lock()
		locked = true
		got.Unlock()
		u()
		close(second)
	}()
	time.Sleep(20 * time.Millisecond)
	got.Lock()
	if locked {
		t.Error("the same address took the lock while it was held")
	}
	got.Unlock()
	unlock()
	<-second
}
