package limit

import (
	"context"
	"testing"
	"time"
)

// BenchmarkBreakerDo is a closed breaker's cost per call, from many
// goroutines at once, as every Redis call of every request pays it.
func BenchmarkBreakerDo(b *testing.B) {
	br := NewBreaker(BreakerSettings{Timeout: time.Second, Failures: 3, Backoff: time.Second})
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	b.SetParallelism(64)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			br.Do(ctx, ok)
		}
	})
}
