package playground_test

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/playground"
)

// The lesson's race in a learner's sandbox, as the web layer drives it.
func ExampleManager() {
	m := playground.NewManager(playground.Options{IdleTimeout: 30 * time.Minute})
	defer m.Close()
	ctx := context.Background()
	for _, step := range []struct {
		client playground.Client
		line   string
	}{
		{playground.ClientA, "SET lock:invoice:7 3f9a1c NX PX 30000"},
		{playground.ClientB, "SET lock:invoice:7 9b2e77 NX PX 30000"},
		{playground.ClientA, `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 3f9a1c`},
		{playground.ClientB, "SUBSCRIBE news"},
	} {
		res, err := m.Exec(ctx, "learner-42", step.client, step.line)
		fmt.Printf("%s> %s\n%s\n", res.Client, step.line, res.Output)
		if err != nil {
			fmt.Println("error for the web layer:", err)
		}
	}
	// Output:
	// A> SET lock:invoice:7 3f9a1c NX PX 30000
	// OK
	// B> SET lock:invoice:7 9b2e77 NX PX 30000
	// (nil)
	// A> EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 3f9a1c
	// (integer) 1
	// B> SUBSCRIBE news
	// (error) ERR the playground does not support SUBSCRIBE: it would keep your connection waiting for messages
	// error for the web layer: ERR the playground does not support SUBSCRIBE: it would keep your connection waiting for messages
}
