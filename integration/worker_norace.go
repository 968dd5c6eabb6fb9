//go:build !race

package integration

// workerDataLimit is the data-segment limit a worker sets itself for a memory limit of n bytes:
// n itself (worker_race.go has the race detector's).
func workerDataLimit(n uint64) uint64 { return n }
