//go:build !linux

package worker

// lowerPriority does nothing where threads have no priority of their own
// that this package knows how to set.
func lowerPriority() bool { return false }
