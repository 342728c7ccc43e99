//go:build !linux

package worker

// limitData does nothing outside Linux: the worker has only Go's soft
// memory limit there.
func limitData(n int64) error { return nil }
