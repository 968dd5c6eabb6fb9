//go:build !unix

package filesystem

import "io/fs"

// inode is unknown on this platform; ETags then rest on size and mtime alone.
func inode(fs.FileInfo) uint64 { return 0 }
