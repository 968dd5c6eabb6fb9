//go:build !unix

package backup

// dirLock is a no-op where flock is unavailable: restore cannot detect a running server there
// (docs/operations.md says to stop it first).
type dirLock struct{}

func lockPath(path string) string { return path + ".lock" }

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (l *dirLock) release() {}
