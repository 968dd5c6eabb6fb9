//go:build !race

package integration

// workerDataLimit is the data-segment limit of a worker for a memory limit of n bytes.
func workerDataLimit(n int64) int64 { return n }
