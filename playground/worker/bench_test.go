package worker

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/locklab/locklab/playground"
)

// BenchmarkExec measures one command through a supervisor and its worker,
// from 32 goroutines, as one learner (as bench/http.sh does) and as many;
// the in-process Manager is the reference.
func BenchmarkExec(b *testing.B) {
	const line = "SET lock:invoice:7 3f9a1c PX 30000"
	type execer interface {
		Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
	}
	for _, mode := range []string{"in process", "workers"} {
		for _, learners := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/%d learners", mode, learners), func(b *testing.B) {
				var e execer
				if mode == "workers" {
					s, err := NewSupervisor(Options{Command: workerCommand("serve")})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					e = s
				} else {
					m := playground.NewManager(playground.Options{})
					defer m.Close()
					e = m
				}
				var n atomic.Int64
				b.SetParallelism(16) // 32 goroutines on 2 CPUs
				b.RunParallel(func(pb *testing.PB) {
					learner := fmt.Sprintf("learner-%d", n.Add(1)%int64(learners))
					for pb.Next() {
						if res, err := e.Exec(context.Background(), learner, playground.ClientA, line); err != nil || res.Output != "OK" {
							b.Fatalf("%s = %q, %v", line, res.Output, err)
						}
					}
				})
			})
		}
	}
}
