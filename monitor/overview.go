package monitor

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/svc-framework/svc/rpc"
)

// getOverview never fails as a whole (wire-core §8.2): a part whose probe fails, panics or has
// no sample yet is null, and the cause is logged. The disk part covers the root filesystem only.
func (m *Service) getOverview(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*Overview, error) {
	log := m.log(c)
	out := &Overview{Build: &m.build}
	out.Host = part(log, "host", func() (*HostSummary, error) {
		h, err := m.probes.host(ctx)
		if err != nil {
			return nil, err
		}
		return &HostSummary{Hostname: h.Hostname, OS: h.OS, Platform: h.Platform,
			PlatformVersion: h.PlatformVersion, KernelVersion: h.KernelVersion,
			KernelArch: h.KernelArch, Uptime: h.Uptime}, nil
	})
	out.CPU = part(log, "cpu", func() (*CPUSummary, error) {
		i, err := m.sampler.cpuInfo()
		if err != nil {
			return nil, err
		}
		return &CPUSummary{PhysicalCores: i.PhysicalCores, LogicalCores: i.LogicalCores,
			UsagePercent: i.TotalPercent, EffectiveCores: i.EffectiveCores}, nil
	})
	out.Memory = part(log, "memory", func() (*MemorySummary, error) {
		mi, err := m.probes.memory(ctx)
		if err != nil {
			return nil, err
		}
		v := mi.Virtual
		return &MemorySummary{Total: v.Total, Used: v.Used, UsedPercent: v.UsedPercent}, nil
	})
	out.Disk = part(log, "disk", func() (*DiskSummary, error) { return m.probes.rootDisk(ctx) })
	out.Network = part(log, "network", func() (*NetworkSummary, error) {
		n, err := m.probes.network(ctx)
		if err != nil {
			return nil, err
		}
		s := &NetworkSummary{Interfaces: len(n.Interfaces)}
		for _, c := range n.IOCounters {
			s.BytesSent, s.BytesRecv = s.BytesSent+c.BytesSent, s.BytesRecv+c.BytesRecv
			s.PacketsSent, s.PacketsRecv = s.PacketsSent+c.PacketsSent, s.PacketsRecv+c.PacketsRecv
		}
		return s, nil
	})
	out.Process = part(log, "process", func() (*ProcessSummary, error) {
		p, err := m.sampler.processInfo()
		if err != nil {
			return nil, err
		}
		return &ProcessSummary{PID: p.PID, Name: p.Name, CPUPercent: p.CPUPercent,
			MemoryPercent: p.MemoryPercent}, nil
	})
	out.Load = part(log, "load", func() (*LoadInfo, error) { return m.probes.load(ctx) })
	return out, nil
}

// part runs one probe of the overview, turning an error or a panic into a null part. A part
// that is merely not sampled yet is not logged.
func part[T any](log *slog.Logger, name string, probe func() (*T, error)) (v *T) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("monitor: overview probe panicked", slog.String("part", name), slog.String("panic", fmt.Sprint(r)))
			v = nil
		}
	}()
	v, err := probe()
	if err != nil {
		if e, ok := rpc.AsError(err); !ok || e.Code != CodeNotReady {
			log.Warn("monitor: overview probe failed", slog.String("part", name), slog.Any("error", err))
		}
		return nil
	}
	return v
}
