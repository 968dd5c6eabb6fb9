//go:build race

package integration

// workerDataLimit is the data-segment limit a worker sets itself for a memory limit of n bytes.
// A worker built with the race detector (a race-built binary that re-executes itself as its
// worker: only tests of other packages) maps the detector's shadow memory in its data segment
// too, about eight times what the program maps, plus a fixed part. The limit is the worker's
// own build's: a plain worker started by a race-built parent (this package's tests, TestMain)
// enforces n itself.
func workerDataLimit(n uint64) uint64 { return 8*n + 512<<20 }
