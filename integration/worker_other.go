//go:build !linux

package integration

import (
	"errors"
	"syscall"
)

// limitMemory refuses: the worker's memory bound is Linux's RLIMIT_DATA (worker_linux.go), and
// a worker without it would not bound a script's memory, so scripts do not run elsewhere.
func limitMemory(uint64) error {
	return errors.New("script workers need Linux (RLIMIT_DATA)")
}

func workerProcAttr() *syscall.SysProcAttr { return nil }
