package luaredis

import (
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
)

// compiled is a compiled script. It is immutable, so engines share it.
type compiled struct {
	src   string
	proto *lua.FunctionProto
}

// Cache shares compiled scripts between the engines of all sandboxes: the
// lesson's scripts are the same for every learner, and a compiled script
// takes more memory than an idle sandbox. It holds at most max scripts and
// forgets the oldest first; an engine keeps the scripts it uses alive. It
// is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int
	m     map[string]*compiled
	order []string

	timeouts atomic.Int64 // scripts stopped at their deadline
}

// NewCache returns a cache of at most max scripts (default 1,000).
func NewCache(max int) *Cache {
	if max <= 0 {
		max = 1000
	}
	return &Cache{max: max, m: map[string]*compiled{}}
}

// compile returns the compiled script for src, whose SHA1 is sha, compiling
// it if no engine has yet. Compiling happens outside the lock, so one
// learner's large script does not hold up the others.
func (c *Cache) compile(sha, src string) (*compiled, error) {
	c.mu.Lock()
	sc := c.m[sha]
	c.mu.Unlock()
	if sc != nil {
		return sc, nil
	}
	proto, err := compile(src, chunkName)
	if err != nil {
		return nil, err
	}
	sc = &compiled{src: src, proto: trim(proto)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[sha]; old != nil {
		return old, nil
	}
	if len(c.order) >= c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[sha] = sc
	c.order = append(c.order, sha)
	return sc, nil
}

// Timeouts returns how many scripts of the engines sharing c were stopped
// at their deadline.
func (c *Cache) Timeouts() int64 { return c.timeouts.Load() }

// trim copies the slices of a compiled prototype to their length: the
// compiler leaves room for large functions, which for a short script is
// most of its 17 KB.
func trim(p *lua.FunctionProto) *lua.FunctionProto {
	p.Code = clip(p.Code)
	p.Constants = clip(p.Constants)
	p.FunctionPrototypes = clip(p.FunctionPrototypes)
	p.DbgSourcePositions = clip(p.DbgSourcePositions)
	p.DbgLocals = clip(p.DbgLocals)
	p.DbgCalls = clip(p.DbgCalls)
	p.DbgUpvalues = clip(p.DbgUpvalues)
	for _, child := range p.FunctionPrototypes {
		trim(child)
	}
	return p
}

func clip[T any](s []T) []T {
	return append(make([]T, 0, len(s)), s...)
}
