//go:build unix

package security

import "syscall"

// revokedAlloc returns n zeroed bytes outside the Go heap: an anonymous private mapping, whose
// pages become resident only when written. It falls back to the heap if the mapping fails.
func revokedAlloc(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// revokedFree returns a table of revokedAlloc to the system (nil and heap tables are left to the
// collector).
func revokedFree(b []byte) {
	if len(b) > 0 {
		_ = syscall.Munmap(b) // an error means b came from make: the collector frees it
	}
}
