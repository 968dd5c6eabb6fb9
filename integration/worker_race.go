//go:build race

package integration

// workerDataLimit is the data-segment limit of a worker for a memory limit of n bytes. Under
// the race detector (tests only) its shadow memory is mapped in the worker's data segment
// too, about eight times what the program maps, plus a fixed part.
func workerDataLimit(n int64) int64 { return 8*n + 512<<20 }
