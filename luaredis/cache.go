package luaredis

import (
	"container/list"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
)

// compiled is a compiled script. It is immutable, so engines share it.
type compiled struct {
	sha   string
	src   string
	proto *lua.FunctionProto
	flags scriptFlags // from its shebang
	count protoCount
	// size is the memory the script takes: its source and an estimate of
	// its compiled form.
	size int
}

// Cache shares compiled scripts between the engines of all sandboxes: the
// lesson's scripts are the same for every learner, and a compiled script
// takes more memory than an idle sandbox. It holds at most max bytes of
// scripts (source and estimated compiled size) and forgets the least
// recently used first; an engine keeps the scripts it uses alive, and
// counts them in its own ScriptBytes, so the cache bounds the memory of
// the scripts no engine holds any more (after SCRIPT FLUSH, a reset, a
// dropped sandbox). It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int
	bytes int
	m     map[string]*list.Element // of *compiled, by SHA1
	lru   list.List                // most recently used first

	timeouts atomic.Int64 // scripts stopped at their deadline
}

// DefaultCacheBytes is the size of a Cache made with NewCache(0).
const DefaultCacheBytes = 32 << 20

// NewCache returns a cache of at most maxBytes of scripts (default
// DefaultCacheBytes).
func NewCache(maxBytes int) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{max: maxBytes, m: map[string]*list.Element{}}
}

// compile returns the compiled script for src, whose SHA1 is sha, compiling
// it within l if no engine has yet. Compiling happens outside the lock, so
// one learner's large script does not hold up the others.
func (c *Cache) compile(sha, src string, l Limits) (*compiled, error) {
	if sc := c.get(sha); sc != nil {
		if n := sc.count; n.funcs > l.MaxFunctions || n.constants > l.MaxConstants || n.instructions > l.MaxInstructions {
			return nil, tooLarge(l) // compiled for an engine of larger limits
		}
		return sc, nil
	}
	flags, skip, err := parseShebang(src)
	if err != nil {
		return nil, err
	}
	proto, err := compile(src[skip:], chunkName, l)
	if err != nil {
		return nil, err
	}
	proto = trim(proto)
	sc := &compiled{sha: sha, src: src, proto: proto, flags: flags, count: countProto(proto), size: len(src) + compiledSize(proto)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[sha]; e != nil {
		c.lru.MoveToFront(e)
		return e.Value.(*compiled), nil
	}
	c.m[sha] = c.lru.PushFront(sc)
	c.bytes += sc.size
	for c.bytes > c.max && c.lru.Len() > 1 {
		old := c.lru.Remove(c.lru.Back()).(*compiled)
		delete(c.m, old.sha)
		c.bytes -= old.size
	}
	return sc, nil
}

func (c *Cache) get(sha string) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[sha]
	if e == nil {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*compiled)
}

// Bytes returns the bytes of the scripts in the cache, source and
// estimated compiled size, and how many scripts there are.
func (c *Cache) Bytes() (bytes, scripts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.lru.Len()
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
