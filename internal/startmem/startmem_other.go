//go:build !linux

package startmem

// dropExecutablePages is a no-op where /proc/self/smaps and madvise's semantics on file
// mappings are not the ones startmem_linux.go relies on.
func dropExecutablePages() (int64, error) { return 0, nil }
