package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/svc-framework/svc/config"
)

// TestChooseMemoryLimit: svc.app.memory_limit's rule, row by row — the configured size wins,
// then GOMEMLIMIT (left to the runtime), then 90 % of the cgroup's limit, else none; a cgroup
// that cannot be read is an error and no limit.
func TestChooseMemoryLimit(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == "GOMEMLIMIT" && v != "" {
				return v, true
			}
			return "", false
		}
	}
	cgroup := func(n uint64, err error) func() (uint64, error) { return func() (uint64, error) { return n, err } }
	broken := errors.New("mountinfo unreadable")
	tests := []struct {
		name       string
		configured config.Size
		env        string
		cgroup     func() (uint64, error)
		want       memoryLimit
		wantErr    error
	}{
		{"configured wins over everything", 512 * config.MiB, "1GiB", cgroup(1<<30, nil),
			memoryLimit{bytes: 512 << 20, source: "svc.app.memory_limit"}, nil},
		{"GOMEMLIMIT left to the runtime", 0, "300MiB", cgroup(1<<30, nil), memoryLimit{source: "GOMEMLIMIT"}, nil},
		{"GOMEMLIMIT=off too", 0, "off", cgroup(1<<30, nil), memoryLimit{source: "GOMEMLIMIT"}, nil},
		{"cgroup limit", 0, "", cgroup(1000<<20, nil), memoryLimit{bytes: 900 << 20, source: "cgroup"}, nil},
		{"negative configured is the default", -1, "", cgroup(1000<<20, nil), memoryLimit{bytes: 900 << 20, source: "cgroup"}, nil},
		{"cgroup without a limit", 0, "", cgroup(0, memlimit.ErrNoLimit), memoryLimit{source: "none"}, nil},
		{"no cgroup", 0, "", cgroup(0, memlimit.ErrNoCgroup), memoryLimit{source: "none"}, nil},
		{"no cgroups on the platform", 0, "", cgroup(0, memlimit.ErrCgroupsNotSupported), memoryLimit{source: "none"}, nil},
		{"unreadable cgroup", 0, "", cgroup(0, fmt.Errorf("wrapped: %w", broken)), memoryLimit{source: "none"}, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := chooseMemoryLimit(tt.configured, env(tt.env), tt.cgroup)
			if got != tt.want {
				t.Errorf("chooseMemoryLimit = %+v, want %+v", got, tt.want)
			}
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("chooseMemoryLimit error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestApplyMemoryPolicySetsTheLimit: a configured limit reaches the runtime (the process's
// previous limit is restored afterwards; not parallel: the limit is process-wide).
func TestApplyMemoryPolicySetsTheLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	cfg := &config.Config{App: config.App{MemoryLimit: 777 * config.MiB}}
	applyMemoryPolicy(cfg, func(string) (string, bool) { return "", false }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if got := debug.SetMemoryLimit(-1); got != 777<<20 {
		t.Errorf("memory limit = %d, want %d", got, 777<<20)
	}
}
