// Command loadgen simulates a Lock Lab workshop against a running server,
// or several replicas of it sharing one Redis, and reports latency per
// route, the error rate of well-behaved learners and the servers' peak
// memory, against the course's targets: p99 under 100 ms, no errors,
// under 512 MB (or -max-rss-mb for all the -pid processes together).
//
// Usage:
//
//	go run ./cmd/loadgen -url http://127.0.0.1:8080[,http://127.0.0.1:8081] -learners 300 -duration 5m [-pid PID[,PID...]]
//
// With several URLs each learner's requests go to them in turn. With
// -admin-token every learner who joins the workshop also keeps its event
// stream open, and the report says how soon each stream delivered the
// instructor's poll.
//
// Each learner has its own cookies and works through the lesson, the
// playground (as clients A and B), the GC-pause race and the quiz at about
// one request a second; -hostile of them also send scripts meant to hang
// or exhaust the sandbox. Without -pid the servers are the processes
// listening on the URLs' ports, found through /proc (best effort: it must run as the
// same user). Only loopback targets are loaded unless -allow-remote is
// given. With -strict the exit status is 1 when a target is missed.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
