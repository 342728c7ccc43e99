// Package playground runs the per-learner Redis sandboxes of Lock Lab's
// interactive course. A learner types redis-cli lines as client A or client
// B; the playground splits them as redis-cli does (Tokenize), runs them
// against an in-process miniredis with the playground's own Redis 7 style
// EVAL (package luaredis), and prints the reply as redis-cli --no-raw does in a
// terminal (Format).
//
// A Manager keeps one sandbox per learner, created on first use, dropped
// after an idle timeout or when the cap on live sandboxes, or on those of
// one client address, is reached. It also keeps all sandboxes' data
// within one budget (Options.MaxDataBytes): each sandbox reports its size
// after every line, each call is granted an allowance of the room left,
// least recently used idle sandboxes are dropped to make room, and when
// none is idle, writes past the allowance are refused (ErrLimit). A single
// key is bounded too (Limits.MaxKeyBytes), so that no small edit has to
// copy a large value. The
// Manager sees sandboxes through the Box interface, so that they can run in
// this process (Sandbox) or in worker processes (package worker, whose
// Supervisor gives the Manager its NewBox); Snapshot and Restore carry a
// sandbox's state across that boundary.
//
// When several replicas of the server run behind a load balancer, a
// Manager given sandbox copies (Options.SandboxCopies) shares each
// learner's sandbox with the others through them, so that the sandbox follows the
// learner from replica to replica; see follow.go.
//
// The package knows nothing of HTTP: the web layer calls the Manager and maps
// the sentinel errors in errors.go to statuses.
package playground
