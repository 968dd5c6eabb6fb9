package monitor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
)

var errBroken = errors.New("broken probe")

// fakeProbes returns canned figures; a step advances the cumulative counters, fail makes
// every probe fail, and calls counts the sampling probes that ran.
type fakeProbes struct {
	fail    bool
	panics  bool
	step    atomic.Int64
	calls   atomic.Int64
	cgLimit float64
}

func (f *fakeProbes) check() error {
	if f.panics {
		panic("probe exploded")
	}
	if f.fail {
		return errBroken
	}
	return nil
}

func (f *fakeProbes) host(context.Context) (*HostInfo, error) {
	return &HostInfo{Hostname: "h1", OS: "linux", Platform: "debian", PlatformVersion: "12",
		KernelVersion: "6.1", KernelArch: "x86_64", Uptime: 100, BootTime: 5, Processes: 7}, f.check()
}

func (f *fakeProbes) memory(context.Context) (*MemoryInfo, error) {
	return &MemoryInfo{Virtual: &VirtualMemory{Total: 1000, Used: 250, UsedPercent: 25}}, f.check()
}

func (f *fakeProbes) disks(context.Context) (*DiskInfo, error) {
	return &DiskInfo{Partitions: []PartitionInfo{{Device: "/dev/sda1", MountPoint: "/", Options: []string{"rw"}}}}, f.check()
}

func (f *fakeProbes) rootDisk(context.Context) (*DiskSummary, error) {
	return &DiskSummary{Total: 100, Used: 40, UsedPercent: 40, Partitions: 1}, f.check()
}

func (f *fakeProbes) network(context.Context) (*NetworkInfo, error) {
	return &NetworkInfo{
		Interfaces: []InterfaceInfo{{Name: "lo"}, {Name: "eth0"}},
		IOCounters: map[string]*NetIOCounter{
			"lo":   {Name: "lo", BytesSent: 1, BytesRecv: 2, PacketsSent: 3, PacketsRecv: 4},
			"eth0": {Name: "eth0", BytesSent: 10, BytesRecv: 20, PacketsSent: 30, PacketsRecv: 40},
		},
	}, f.check()
}

func (f *fakeProbes) load(context.Context) (*LoadInfo, error) {
	return &LoadInfo{Load1: 0.5, Load5: 0.25, Load15: 0.125}, f.check()
}

func (f *fakeProbes) cpuInventory(context.Context) (*CPUInfo, error) {
	return &CPUInfo{PhysicalCores: 2, LogicalCores: 4, ModelName: "Fake CPU"}, f.check()
}

// cpuTimes: every step, core i is busy for i+1 of each 4 seconds.
func (f *fakeProbes) cpuTimes(context.Context) ([]coreTime, error) {
	f.calls.Add(1)
	if err := f.check(); err != nil {
		return nil, err
	}
	s := float64(f.step.Load())
	return []coreTime{{1 * s, 4 * s}, {2 * s, 4 * s}, {3 * s, 4 * s}, {4 * s, 4 * s}}, nil
}

// cgroupCPU: the group uses one CPU second per step.
func (f *fakeProbes) cgroupCPU(context.Context) (float64, float64, error) {
	if f.cgLimit == 0 {
		return 0, 0, errNoCgroup
	}
	return f.cgLimit, float64(f.step.Load()), nil
}

// process: the process uses half a CPU second per step.
func (f *fakeProbes) process(context.Context) (*ProcessInfo, float64, error) {
	f.calls.Add(1)
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	return &ProcessInfo{PID: 42, Name: "svc", MemoryPercent: 1.5}, 0.5 * float64(f.step.Load()), nil
}

// testMonitor builds a monitor over probes whose sampler never sleeps: its wait advances a
// fake clock by d and the probes' counters by one step per second of window.
func testMonitor(p *fakeProbes, opts Options) *Service {
	m := newMonitor(app.Platform{Config: config.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, opts, p)
	now := time.Unix(1_700_000_000, 0)
	m.sampler.now = func() time.Time { return now }
	m.sampler.wait = func(ctx context.Context, d time.Duration) error {
		now = now.Add(d)
		p.step.Add(int64(d / time.Second))
		return ctx.Err()
	}
	return m
}
