//go:build !linux

package lab

import "time"

// threadCPU is not available here; a check's budget counts elapsed time
// instead.
func threadCPU() (time.Duration, bool) { return 0, false }
