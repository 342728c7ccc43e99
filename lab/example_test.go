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
	// one-holder true 107
	// no-foreign-release true 144
	// no-stale-write false 488
	// frees-after-crash true 105
	// Client 1 pauses for 2.506 s before its write to the storage.
	// The storage accepted a write from client 1 after one from client 2, who got the lock after it.
}
