package store

import (
	"sync"

	"github.com/locklab/locklab/workshop"
)

// decodedPolls keeps polls decoded from their JSON. A poll never changes
// once open, and every learner's view holds the current one, read once a
// second for each open workshop page: decoding it each time was a tenth
// of a busy server's work. The polls returned share their slices, which
// nobody changes.
var decodedPolls = pollCache{m: map[string]workshop.Poll{}}

// maxDecodedPolls bounds the cache; when it is full it starts again.
const maxDecodedPolls = 256

// pollCache maps a poll's JSON to the poll.
type pollCache struct {
	mu sync.RWMutex
	m  map[string]workshop.Poll
}

func (c *pollCache) get(js string) (workshop.Poll, bool) {
	c.mu.RLock()
	p, ok := c.m[js]
	c.mu.RUnlock()
	return p, ok
}

func (c *pollCache) put(js string, p workshop.Poll) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxDecodedPolls {
		clear(c.m)
	}
	c.m[js] = p
}
