package monitor

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestHostProbes reads the machine the test runs on: every probe answers, and the figures
// are plausible.
func TestHostProbes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHostProbes()
	if hi, err := h.host(ctx); err != nil || hi.Hostname == "" || hi.BootTime == 0 {
		t.Errorf("host = %+v, %v", hi, err)
	}
	if mi, err := h.memory(ctx); err != nil || mi.Virtual.Total == 0 || mi.Virtual.UsedPercent <= 0 {
		t.Errorf("memory = %+v, %v", mi, err)
	}
	if di, err := h.disks(ctx); err != nil || di.Partitions == nil {
		t.Errorf("disks = %+v, %v", di, err)
	}
	if rd, err := h.rootDisk(ctx); err != nil || rd.Total == 0 || rd.Partitions != 1 {
		t.Errorf("rootDisk = %+v, %v", rd, err)
	}
	if ni, err := h.network(ctx); err != nil || len(ni.Interfaces) == 0 {
		t.Errorf("network = %+v, %v", ni, err)
	}
	if _, err := h.load(ctx); err != nil {
		t.Errorf("load: %v", err)
	}
	if ci, err := h.cpuInventory(ctx); err != nil || ci.LogicalCores <= 0 {
		t.Errorf("cpuInventory = %+v, %v", ci, err)
	}
	if ct, err := h.cpuTimes(ctx); err != nil || len(ct) == 0 || ct[0].total <= 0 {
		t.Errorf("cpuTimes = %+v, %v", ct, err)
	}
	// The process's CPU time comes in clock ticks (10 ms): spend a few so a fresh test binary
	// cannot read 0.
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	pi, cpuSecs, err := h.process(ctx)
	if err != nil || pi.PID != int32(os.Getpid()) || pi.MemoryRSS == 0 || pi.CreateTime == 0 || cpuSecs <= 0 {
		t.Errorf("process = %+v, %v, %v", pi, cpuSecs, err)
	}
}
