//go:build !unix

package security

// revokedAlloc returns n zeroed bytes (on the heap where the platform has no anonymous mapping).
func revokedAlloc(n int) []byte { return make([]byte, n) }

// revokedFree leaves b to the collector.
func revokedFree([]byte) {}
