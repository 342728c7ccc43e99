// Package worker is the host of Lock Lab's untrusted work: it runs the
// playground's sandboxes and the lock lab's checks in worker processes, so
// that an input that gets past the sandbox's or the lab's own limits and
// crashes or exhausts a process takes down one worker, not the website.
//
// It serves two features, so it belongs to neither: it imports playground
// and lab, and only the locklab command imports it, to wire it in. The web
// layer sees it through its own interfaces (web.Playground and
// web.LabChecker), and the errors it acts on are the playground's
// (playground.ErrRestarting and playground.ErrStopped), which this
// package's errors wrap.
//
// A Supervisor, in the web process, starts a few workers (the same binary,
// `locklab sandbox-worker`) and gives the web layer the playground's usual
// API: it runs a playground.Manager whose sandboxes are proxies to
// sandboxes in the workers. Each learner's sandbox lives in one worker,
// chosen by a hash of the learner. Requests to a worker are multiplexed
// over its stdin and stdout: many are in flight at once, each learner's
// commands run one at a time, and a script spinning until its deadline
// holds up no one else.
//
// Each command carries the data allowance the Manager granted the sandbox
// (see playground.Options.MaxDataBytes), and its answer the sandbox's
// size, so that the budget holds across all workers. After every command
// that changes a sandbox, the worker sends the
// changes (playground.Changes) and the Supervisor applies them to a
// playground.Mirror of the sandbox. When a worker dies (out of memory, a Go
// fatal error, SIGKILL), the Supervisor starts another, and each sandbox
// that lived in it is restored from its Mirror on its next use. The
// commands that were running in the dead worker answer with an error
// saying so; their learners' sandboxes are as they were before them. A
// sandbox that the Manager restores from another replica's copy (see
// playground.SandboxCopies) starts its Mirror from that copy.
//
// The workers run the lock lab's checks too (Supervisor.CheckLab): a
// learner's recipe is untrusted input on the same engine, so a check that
// gets past the lab's own budget costs a worker, not the website. A check
// belongs to no sandbox; it goes to the worker with the fewest checks
// running, a bounded number run at once, and one whose worker dies
// answers ErrWorkerStopped and is not run again.
//
// Serve is the worker's side and LimitMemory its memory limit; the locklab
// command's sandbox-worker subcommand calls them.
package worker
