//go:build !linux

package backup

// lowerPriority is a no-op where the thread's priority cannot be set alone (Linux only).
func lowerPriority() bool { return false }
