//go:build unix

package backup

import (
	"fmt"
	"os"
	"syscall"
)

// dirLock is the advisory lock a running server holds on "<database>.lock" (flock, released by
// the kernel when the process ends, even by SIGKILL), which `svc restore` tests to refuse
// restoring under a live server.
type dirLock struct{ f *os.File }

// lockPath is the lock file of the embedded database at path.
func lockPath(path string) string { return path + ".lock" }

// lockDir takes the lock of the database at path without waiting; a lock held by another
// process answers ErrServerRunning.
func lockDir(path string) (*dirLock, error) {
	f, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w (%s is locked)", ErrServerRunning, lockPath(path))
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
