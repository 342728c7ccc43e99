package lab_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/lab"
)

// The textbook lock holds everything but no-stale-write, which needs
// fencing; the counterexample's seed replays it.
func ExampleCheck() {
	rep, err := lab.Check(context.Background(), lab.Request{Recipe: lab.Textbook()}, lab.Budget{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Summary)
	for _, p := range rep.Properties {
		fmt.Println(p.ID, p.Holds, p.Explored)
	}
	pr, _ := rep.Property(lab.PropNoStaleWrite)
	ce, _ := lab.Replay(context.Background(), lab.Textbook(), nil, pr.Counterexample.Seed)
	fmt.Println(ce.Faults[0])
	fmt.Println(ce.Summary)
	// Output:
	// All 464 schedules with up to 2 faults explored, and 64 random.
	// one-holder true 108
	// no-foreign-release true 153
	// no-stale-write false 491
	// frees-after-crash true 100
	// The reply to client 1's acquire line 1 is 2500 ms late.
	// The storage accepted a write from client 1 after one from client 2, who got the lock after it.
}
