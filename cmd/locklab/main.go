// Command locklab serves the Lock Lab course: the lesson on Redis
// distributed locks, with everything it needs embedded in the binary.
//
// Usage:
//
//	locklab [flags]           serve the course (see -h for flags)
//	locklab healthcheck       exit 0 if the running server answers /healthz
//	locklab backup FILE       write every learner's progress to FILE (- for stdout), safe while servers run
//	locklab restore FILE      add the progress in a backup to the store's; a bad FILE changes nothing
//	locklab version           print the version and VCS revision
//	locklab sandbox-worker    a playground worker process; the server starts these itself
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "locklab:", err)
		os.Exit(1)
	}
}
