package lock_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// Acquire, find the lock taken from a second client, release.
func Example() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	locker := lock.New(rdb, lock.Options{})
	l, err := locker.Acquire(ctx, "report", 10*time.Second)
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	fmt.Println("fencing token:", l.Fence())

	_, err = locker.Acquire(ctx, "report", 10*time.Second)
	fmt.Println("second client gets it:", !errors.Is(err, lock.ErrNotAcquired))

	fmt.Println("release:", l.Release(ctx))
	fmt.Println("release again, still ours:", !errors.Is(l.Release(ctx), lock.ErrNotHeld))
	// Output:
	// fencing token: 1
	// second client gets it: false
	// release: <nil>
	// release again, still ours: false
}

// storage accepts a write only if its fencing token is at least the highest
// one seen so far.
type storage struct {
	highest int64
	value   string
}

func (s *storage) write(fence int64, value string) error {
	if fence < s.highest {
		return fmt.Errorf("token %d is older than %d", fence, s.highest)
	}
	s.highest, s.value = fence, value
	return nil
}

// A holder pauses past its TTL; the fencing token lets the storage refuse its
// late write.
func Example_fencing() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker := lock.New(rdb, lock.Options{})
	var db storage

	first, _ := locker.Acquire(ctx, "invoice", 10*time.Second)
	m.FastForward(15 * time.Second) // the first holder is paused; its lock expires

	second, _ := locker.Acquire(ctx, "invoice", 10*time.Second)
	fmt.Println("second writes:", db.write(second.Fence(), "from second"))
	fmt.Println("first wakes up and writes:", db.write(first.Fence(), "from first"))
	fmt.Println("first releases:", first.Release(ctx))
	fmt.Println("stored:", db.value)
	// Output:
	// second writes: <nil>
	// first wakes up and writes: token 1 is older than 2
	// first releases: release "invoice": lock not held
	// stored: from second
}

// A long job renews its lock before the TTL runs out.
func ExampleLock_Extend() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	l, _ := lock.New(rdb, lock.Options{}).Acquire(ctx, "import", 10*time.Second)
	m.FastForward(8 * time.Second)
	fmt.Println("extend:", l.Extend(ctx, 10*time.Second))
	m.FastForward(8 * time.Second)
	fmt.Println("still held after 16s:", m.Exists("import"))
	m.FastForward(8 * time.Second)
	fmt.Println("extend after expiry:", l.Extend(ctx, 10*time.Second))
	// Output:
	// extend: <nil>
	// still held after 16s: true
	// extend after expiry: extend "import": lock not held
}

// Tokens come from Options.Random, so a test can fix them.
func ExampleOptions() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()

	locker := lock.New(rdb, lock.Options{Random: bytes.NewReader(bytes.Repeat([]byte{0xab}, 16))})
	l, _ := locker.Acquire(context.Background(), "job", time.Second)
	fmt.Println(l.Token())
	// Output: abababababababababababababababab
}

// Redlock over five independent instances: three answers are a majority.
func ExampleRedlock() {
	var nodes []redis.Scripter
	var servers []*miniredis.Miniredis
	for range 5 {
		m, err := miniredis.Run()
		if err != nil {
			panic(err)
		}
		defer m.Close()
		servers = append(servers, m)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		defer rdb.Close()
		nodes = append(nodes, rdb)
	}
	ctx := context.Background()
	rl := lock.NewRedlock(nodes, lock.Options{NodeTimeout: time.Second})

	servers[0].Set("job", "someone-else")
	servers[1].Set("job", "someone-else")
	l, err := rl.Acquire(ctx, "job", 10*time.Second)
	fmt.Println("with 2 of 5 taken:", err)
	fmt.Println("release:", l.Release(ctx))

	servers[2].Set("job", "someone-else")
	_, err = rl.Acquire(ctx, "job", 10*time.Second)
	fmt.Println("with 3 of 5 taken, acquired:", !errors.Is(err, lock.ErrNotAcquired))
	fmt.Println("quorum:", rl.Quorum())
	// Output:
	// with 2 of 5 taken: <nil>
	// release: <nil>
	// with 3 of 5 taken, acquired: false
	// quorum: 3
}
