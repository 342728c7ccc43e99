package limit

import (
	"strconv"
	"testing"
)

// TestLocks checks that a key's lock, while held, holds off the same key
// and not another one.
func TestLocks(t *testing.T) {
	l := NewLocks()
	const key = "192.0.2.1"
	unlock := l.Lock(key)
	if l.stripes[l.index(key)].TryLock() {
		t.Error("the same key's lock could be taken while it was held")
	}
	other := ""
	for i := range 1000 {
		if k := "198.51.100." + strconv.Itoa(i); l.index(k) != l.index(key) {
			other = k
			break
		}
	}
	done := l.Lock(other) // would wait forever if it shared the first key's lock
	done()
	unlock()
	if !l.stripes[l.index(key)].TryLock() {
		t.Error("the key's lock stayed held after unlock")
	}
}
