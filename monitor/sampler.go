package monitor

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// sampler measures CPU and process usage in the background and keeps the latest result, so
// get_cpu, get_process and the overview answer from memory (the original framework's sample
// cache). Each run measures over one sample_duration window and repeats every sample_interval;
// the first run starts at once.
type sampler struct {
	probes   probes
	interval time.Duration
	window   time.Duration
	logger   *slog.Logger
	// now measures the window. It is the real monotonic clock, not the service clock, which
	// tests may freeze; tests inject their own.
	now func() time.Time
	// wait blocks for d or until ctx ends; tests inject one that returns at once.
	wait func(ctx context.Context, d time.Duration) error

	latest atomic.Pointer[sample]
}

// sample is one completed measurement. Each half carries its value or the error that
// prevented it.
type sample struct {
	cpu     *CPUInfo
	cpuErr  error
	proc    *ProcessInfo
	procErr error
}

// point is one reading of the cumulative counters.
type point struct {
	at      time.Time
	cores   []coreTime
	coreErr error
	cgLimit float64 // cores; 0 when the CPU is not limited
	cgUsed  float64 // seconds
	proc    *ProcessInfo
	procCPU float64 // seconds
	procErr error
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// run is the body of the sampler worker (a loop worker): one sample, then a pause so that
// samples start sample_interval apart. It returns when ctx ends.
func (s *sampler) run(ctx context.Context) error {
	start := s.now()
	s.sampleOnce(ctx)
	_ = s.wait(ctx, s.interval-s.now().Sub(start)) // an error means shutdown: return
	return nil
}

// sampleOnce takes one measurement and publishes it. A cancelled measurement publishes nothing.
func (s *sampler) sampleOnce(ctx context.Context) {
	p0 := s.read(ctx)
	if err := s.wait(ctx, s.window); err != nil {
		return
	}
	p1 := s.read(ctx)
	if ctx.Err() != nil {
		return
	}
	out := &sample{}
	out.cpu, out.cpuErr = s.cpu(ctx, p0, p1)
	out.proc, out.procErr = processUsage(p0, p1)
	if out.cpuErr != nil {
		s.logger.Warn("monitor: cpu sample failed", slog.Any("error", out.cpuErr))
	}
	if out.procErr != nil {
		s.logger.Warn("monitor: process sample failed", slog.Any("error", out.procErr))
	}
	s.latest.Store(out)
}

// read takes the cumulative counters now.
func (s *sampler) read(ctx context.Context) point {
	p := point{at: s.now()}
	p.cores, p.coreErr = s.probes.cpuTimes(ctx)
	if limit, used, err := s.probes.cgroupCPU(ctx); err == nil {
		p.cgLimit, p.cgUsed = limit, used
	}
	p.proc, p.procCPU, p.procErr = s.probes.process(ctx)
	return p
}

// cpu turns two readings into CPUInfo: per-core usage from the kernel's per-core counters, or,
// when a cgroup quota below the core count limits this process, the share of that quota used.
func (s *sampler) cpu(ctx context.Context, p0, p1 point) (*CPUInfo, error) {
	if err := errors.Join(p0.coreErr, p1.coreErr); err != nil {
		return nil, err
	}
	if len(p0.cores) == 0 || len(p0.cores) != len(p1.cores) {
		return nil, errProbe
	}
	info, err := s.probes.cpuInventory(ctx)
	if err != nil {
		return nil, err
	}
	usage := make([]float64, len(p1.cores))
	var busy, total float64
	for i := range p1.cores {
		db, dt := p1.cores[i].busy-p0.cores[i].busy, p1.cores[i].total-p0.cores[i].total
		usage[i] = percent(db, dt)
		busy, total = busy+db, total+dt
	}
	info.EffectiveCores = float64(info.LogicalCores)
	info.UsagePercent, info.TotalPercent = usage, percent(busy, total)
	elapsed := p1.at.Sub(p0.at).Seconds()
	if limit := p1.cgLimit; limit > 0 && limit < float64(info.LogicalCores) && p0.cgLimit == limit && elapsed > 0 {
		info.EffectiveCores, info.UsagePercent = limit, nil
		info.TotalPercent = min(100, percent(p1.cgUsed-p0.cgUsed, elapsed*limit))
	}
	return info, nil
}

// processUsage turns two readings into ProcessInfo: CPU use over the window against one CPU.
func processUsage(p0, p1 point) (*ProcessInfo, error) {
	if err := errors.Join(p0.procErr, p1.procErr); err != nil {
		return nil, err
	}
	if p1.proc == nil {
		return nil, errProbe
	}
	out := *p1.proc
	out.CPUPercent = max(0, percent(p1.procCPU-p0.procCPU, p1.at.Sub(p0.at).Seconds()))
	return &out, nil
}

// percent returns part/whole in percent, 0 when whole is not positive.
func percent(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole * 100
}

// cpuInfo returns the latest CPU figures: ErrNotReady before the first sample,
// ErrCollectionFailed when the latest sample failed. The value is shared and read-only.
func (s *sampler) cpuInfo() (*CPUInfo, error) {
	smp := s.latest.Load()
	switch {
	case smp == nil:
		return nil, ErrNotReady
	case smp.cpuErr != nil:
		return nil, ErrCollectionFailed.Wrap(smp.cpuErr)
	}
	return smp.cpu, nil
}

// processInfo returns the latest process figures, with the errors of cpuInfo.
func (s *sampler) processInfo() (*ProcessInfo, error) {
	smp := s.latest.Load()
	switch {
	case smp == nil:
		return nil, ErrNotReady
	case smp.procErr != nil:
		return nil, ErrCollectionFailed.Wrap(smp.procErr)
	}
	return smp.proc, nil
}
