//go:build unix

package filesystem

import (
	"io/fs"
	"syscall"
)

// inode returns the file's inode number. Every write renames a new file into place, so a new
// version always has a new inode even when size and (coarse) mtime repeat.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino is uint32 on some platforms
	}
	return 0
}
