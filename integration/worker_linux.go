package integration

import "syscall"

// limitMemory sets the process's data-segment limit (RLIMIT_DATA): from then on every private
// writable mapping — the Go heap's arenas, goroutine stacks, the runtime's own structures —
// counts against n bytes, and a mapping past it fails, which the Go runtime turns into a fatal
// "out of memory". Soft and hard limits are both n, so the worker cannot raise it again.
func limitMemory(n uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n})
}

// workerProcAttr has the kernel kill a worker when the thread that started it ends, so
// workers never outlive a server that crashed.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
