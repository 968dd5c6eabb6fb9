package main

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/svc-framework/svc/config"
)

// The binary's one memory policy (issue #43): Go's collector at its default GOGC (100, or what
// the GOGC environment variable says) and a soft memory limit, nothing else. Nothing in svc
// starts a collection, returns memory to the system or changes GOGC by hand (layering_device_test.go
// holds the module to that): a process that runs out of room is given a limit, not a device.
//
// GOGC stays at the runtime's default because the other settings bought CPU with memory users
// pay for: at 400 the heap of a busy server grows to five times its live heap between cycles,
// which is what the hand-started collections and the revocation table outside the heap were
// added to hide.

// cgroupRatio is the part of the container's memory limit given to the runtime as its soft
// limit (the runtime counts its heap, stacks and its own metadata against it): the rest is for
// what the cgroup charges beyond the runtime's memory, the page cache of the binary and of the
// database files above all.
const cgroupRatio = 0.9

// memoryLimit is the soft limit chosen for the runtime and where it came from.
type memoryLimit struct {
	bytes  int64  // 0: leave the runtime's limit as it is
	source string // the configuration key, "GOMEMLIMIT", "cgroup" or "none"
}

// chooseMemoryLimit applies svc.app.memory_limit's rule: a positive configured size; else the
// GOMEMLIMIT environment variable, which the runtime has read already; else cgroupRatio of the
// cgroup's limit from cgroup; else none.
func chooseMemoryLimit(configured config.Size, env func(string) (string, bool), cgroup func() (uint64, error)) (memoryLimit, error) {
	if configured > 0 {
		return memoryLimit{bytes: int64(configured), source: "svc.app.memory_limit"}, nil
	}
	if v, ok := env("GOMEMLIMIT"); ok && v != "" {
		return memoryLimit{source: "GOMEMLIMIT"}, nil
	}
	n, err := cgroup()
	switch {
	case err == nil && n > 0:
		return memoryLimit{bytes: int64(float64(n) * cgroupRatio), source: "cgroup"}, nil
	case err == nil, errors.Is(err, memlimit.ErrNoLimit), errors.Is(err, memlimit.ErrCgroupsNotSupported),
		errors.Is(err, memlimit.ErrNoCgroup):
		return memoryLimit{source: "none"}, nil
	default:
		return memoryLimit{source: "none"}, fmt.Errorf("svc.app.memory_limit: read the cgroup's memory limit: %w", err)
	}
}

// applyMemoryPolicy sets the soft memory limit of cfg for this process and logs what it chose;
// a cgroup that cannot be read leaves the process without a limit, with a warning.
func applyMemoryPolicy(cfg *config.Config, env func(string) (string, bool), logger *slog.Logger) {
	lim, err := chooseMemoryLimit(cfg.App.MemoryLimit, env, memlimit.FromCgroup)
	if err != nil {
		logger.Warn("svc: no memory limit", slog.Any("error", err))
	}
	if lim.bytes > 0 {
		debug.SetMemoryLimit(lim.bytes)
	}
	logger.Info("svc memory policy", slog.String("limit_source", lim.source),
		slog.Int64("limit_bytes", debug.SetMemoryLimit(-1)))
}
