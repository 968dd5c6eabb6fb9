package backup

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/svc-framework/svc/internal/bypass"
)

// backgroundNice is the nice value of the thread that writes a background backup.
const backgroundNice = 10

// lowerPriority is the bypass backup.nice (docs/architecture.md, "Performance bypasses"): it
// wires the calling goroutine to its own OS thread and lowers that thread's scheduling priority,
// so the kernel runs the server's request threads first when the cores are busy. The goroutine
// must end without unlocking: the runtime then discards the thread instead of handing a
// lowered one to other goroutines. It reports whether the priority was lowered.
func lowerPriority() bool {
	if !bypass.On(bypass.BackupNice) {
		return false
	}
	runtime.LockOSThread()
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), backgroundNice) == nil
}
