package monitor

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// probes reads host figures. The live ones (host, memory, disks, network, load) are read on
// the request path; the cpu* and process ones only by the sampler.
type probes interface {
	host(ctx context.Context) (*HostInfo, error)
	memory(ctx context.Context) (*MemoryInfo, error)
	disks(ctx context.Context) (*DiskInfo, error)
	rootDisk(ctx context.Context) (*DiskSummary, error)
	network(ctx context.Context) (*NetworkInfo, error)
	load(ctx context.Context) (*LoadInfo, error)
	// cpuInventory returns the core counts and model data; usage fields are left zero.
	cpuInventory(ctx context.Context) (*CPUInfo, error)
	// cpuTimes returns the cumulative busy and total time of every logical core, in seconds.
	cpuTimes(ctx context.Context) ([]coreTime, error)
	// cgroupCPU returns the cgroup CPU quota in cores and the group's cumulative CPU seconds,
	// or errNoCgroup when the CPU is not limited.
	cgroupCPU(ctx context.Context) (limit, used float64, err error)
	// process returns this process's figures with CPUPercent zero, and its cumulative CPU
	// seconds.
	process(ctx context.Context) (*ProcessInfo, float64, error)
}

// coreTime is the cumulative time of one logical core.
type coreTime struct {
	busy, total float64
}

// hostProbes reads the running host through gopsutil and the cgroup files.
type hostProbes struct {
	cg   cgroups
	mu   sync.Mutex
	proc *process.Process // this process, opened on first use
}

var _ probes = (*hostProbes)(nil)

func newHostProbes() *hostProbes { return &hostProbes{cg: cgroups{fsys: os.DirFS("/")}} }

func (h *hostProbes) host(ctx context.Context) (*HostInfo, error) {
	i, err := host.InfoWithContext(ctx)
	if err != nil {
		return nil, err
	}
	return &HostInfo{
		Hostname: i.Hostname, Uptime: i.Uptime, BootTime: i.BootTime, Processes: i.Procs,
		OS: i.OS, Platform: i.Platform, PlatformFamily: i.PlatformFamily,
		PlatformVersion: i.PlatformVersion, KernelVersion: i.KernelVersion, KernelArch: i.KernelArch,
		VirtualizationSystem: i.VirtualizationSystem, VirtualizationRole: i.VirtualizationRole,
		HostID: i.HostID,
	}, nil
}

func (h *hostProbes) memory(ctx context.Context) (*MemoryInfo, error) {
	v, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return nil, err
	}
	out := &MemoryInfo{Virtual: &VirtualMemory{
		Total: v.Total, Available: v.Available, Used: v.Used, UsedPercent: v.UsedPercent, Free: v.Free,
		Active: v.Active, Inactive: v.Inactive, Wired: v.Wired, Laundry: v.Laundry,
		Buffers: v.Buffers, Cached: v.Cached, WriteBack: v.WriteBack, Dirty: v.Dirty,
		WriteBackTmp: v.WriteBackTmp, Shared: v.Shared, Slab: v.Slab,
		SlabReclaimable: v.Sreclaimable, SlabUnreclaimable: v.Sunreclaim, PageTables: v.PageTables,
		SwapCached: v.SwapCached, CommitLimit: v.CommitLimit, CommittedAs: v.CommittedAS,
		HighTotal: v.HighTotal, HighFree: v.HighFree, LowTotal: v.LowTotal, LowFree: v.LowFree,
		SwapTotal: v.SwapTotal, SwapFree: v.SwapFree, Mapped: v.Mapped,
		VMAllocTotal: v.VmallocTotal, VMAllocUsed: v.VmallocUsed, VMAllocChunk: v.VmallocChunk,
		HugePagesTotal: v.HugePagesTotal, HugePagesFree: v.HugePagesFree,
		HugePagesReserved: v.HugePagesRsvd, HugePagesSurplus: v.HugePagesSurp,
		HugePageSize: v.HugePageSize, AnonHugePages: v.AnonHugePages,
	}}
	if limit, usage, err := h.cg.memory(); err == nil {
		applyMemoryLimit(out.Virtual, limit, usage)
	}
	if s, err := mem.SwapMemoryWithContext(ctx); err == nil {
		out.Swap = &SwapMemory{
			Total: s.Total, Used: s.Used, Free: s.Free, UsedPercent: s.UsedPercent,
			SwapIn: s.Sin, SwapOut: s.Sout, PageIn: s.PgIn, PageOut: s.PgOut,
			PageFault: s.PgFault, PageMajorFault: s.PgMajFault,
		}
	}
	return out, nil
}

// applyMemoryLimit makes the headline figures of v describe a cgroup memory limit when it is
// below the host's memory; an "unlimited" v1 group reports a huge limit and changes nothing.
func applyMemoryLimit(v *VirtualMemory, limit, usage uint64) {
	if limit == 0 || limit >= v.Total {
		return
	}
	usage = min(usage, limit)
	v.Total, v.Used = limit, usage
	v.Available, v.Free = limit-usage, limit-usage
	v.UsedPercent = float64(usage) / float64(limit) * 100
}

func (h *hostProbes) disks(ctx context.Context) (*DiskInfo, error) {
	parts, err := disk.PartitionsWithContext(ctx, false)
	if err != nil {
		return nil, err
	}
	out := &DiskInfo{Partitions: []PartitionInfo{}}
	for _, p := range parts {
		u, err := disk.UsageWithContext(ctx, p.Mountpoint)
		if err != nil {
			continue // an unreadable mount is left out, the rest still answer
		}
		out.Partitions = append(out.Partitions, PartitionInfo{
			Device: p.Device, MountPoint: p.Mountpoint, FSType: p.Fstype, Options: orEmpty(p.Opts),
			Total: u.Total, Free: u.Free, Used: u.Used, UsedPercent: u.UsedPercent,
			INodesTotal: u.InodesTotal, INodesUsed: u.InodesUsed, INodesFree: u.InodesFree,
			INodesUsedPercent: u.InodesUsedPercent,
		})
	}
	if io, err := disk.IOCountersWithContext(ctx); err == nil {
		out.IOCounters = make(map[string]*IOCounter, len(io))
		for name, c := range io {
			out.IOCounters[name] = &IOCounter{
				ReadCount: c.ReadCount, MergedReadCount: c.MergedReadCount, WriteCount: c.WriteCount,
				MergedWriteCount: c.MergedWriteCount, ReadBytes: c.ReadBytes, WriteBytes: c.WriteBytes,
				ReadTime: c.ReadTime, WriteTime: c.WriteTime, IOPSInProgress: c.IopsInProgress,
				IOTime: c.IoTime, WeightedIO: c.WeightedIO, Name: c.Name,
				SerialNumber: c.SerialNumber, Label: c.Label,
			}
		}
	}
	return out, nil
}

// rootDisk reads the filesystem that holds the root path (spec §8.3: the overview's disk
// summary covers the root filesystem only).
func (h *hostProbes) rootDisk(ctx context.Context) (*DiskSummary, error) {
	root := "/"
	if runtime.GOOS == "windows" {
		root = os.Getenv("SystemDrive") + `\`
	}
	u, err := disk.UsageWithContext(ctx, root)
	if err != nil {
		return nil, err
	}
	return &DiskSummary{Total: u.Total, Used: u.Used, UsedPercent: u.UsedPercent, Partitions: 1}, nil
}

func (h *hostProbes) network(ctx context.Context) (*NetworkInfo, error) {
	ifs, err := net.InterfacesWithContext(ctx)
	if err != nil {
		return nil, err
	}
	io, err := net.IOCountersWithContext(ctx, true)
	if err != nil {
		return nil, err
	}
	out := &NetworkInfo{Interfaces: make([]InterfaceInfo, 0, len(ifs)), IOCounters: make(map[string]*NetIOCounter, len(io))}
	for _, i := range ifs {
		addrs := make([]string, 0, len(i.Addrs))
		for _, a := range i.Addrs {
			addrs = append(addrs, a.Addr)
		}
		out.Interfaces = append(out.Interfaces, InterfaceInfo{
			Index: i.Index, MTU: i.MTU, Name: i.Name, HardwareAddr: i.HardwareAddr,
			Flags: orEmpty(i.Flags), Addrs: addrs,
		})
	}
	for _, c := range io {
		out.IOCounters[c.Name] = &NetIOCounter{
			Name: c.Name, BytesSent: c.BytesSent, BytesRecv: c.BytesRecv,
			PacketsSent: c.PacketsSent, PacketsRecv: c.PacketsRecv, ErrorsIn: c.Errin,
			ErrorsOut: c.Errout, DroppedIn: c.Dropin, DroppedOut: c.Dropout,
			FIFOIn: c.Fifoin, FIFOOut: c.Fifoout,
		}
	}
	return out, nil
}

func (h *hostProbes) load(ctx context.Context) (*LoadInfo, error) {
	a, err := load.AvgWithContext(ctx)
	if err != nil {
		return nil, err
	}
	return &LoadInfo{Load1: a.Load1, Load5: a.Load5, Load15: a.Load15}, nil
}

// cpuInventory: only the logical count is required (it falls back to runtime.NumCPU); missing
// model data is reported empty rather than failing the sample.
func (h *hostProbes) cpuInventory(ctx context.Context) (*CPUInfo, error) {
	out := &CPUInfo{}
	var err error
	if out.LogicalCores, err = cpu.CountsWithContext(ctx, true); err != nil || out.LogicalCores <= 0 {
		out.LogicalCores = runtime.NumCPU()
	}
	out.PhysicalCores, _ = cpu.CountsWithContext(ctx, false)
	if infos, err := cpu.InfoWithContext(ctx); err == nil && len(infos) > 0 {
		i := infos[0]
		out.ModelName, out.Mhz, out.CacheSize, out.VendorID = i.ModelName, i.Mhz, i.CacheSize, i.VendorID
		out.Family, out.Model, out.Stepping, out.Microcode = i.Family, i.Model, i.Stepping, i.Microcode
	}
	return out, nil
}

func (h *hostProbes) cpuTimes(ctx context.Context) ([]coreTime, error) {
	ts, err := cpu.TimesWithContext(ctx, true)
	if err != nil {
		return nil, err
	}
	out := make([]coreTime, len(ts))
	for i, t := range ts {
		// Guest time is already counted in user time on Linux.
		total := t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
		out[i] = coreTime{busy: total - t.Idle - t.Iowait, total: total}
	}
	return out, nil
}

func (h *hostProbes) cgroupCPU(context.Context) (float64, float64, error) {
	limit, err := h.cg.cpuLimit()
	if err != nil {
		return 0, 0, err
	}
	used, err := h.cg.cpuUsage()
	return limit, used, err
}

// process reads this process. Fields the OS refuses to tell (cwd, user name of another
// namespace, ...) are left empty; only the CPU times and memory figures are required.
func (h *hostProbes) process(ctx context.Context) (*ProcessInfo, float64, error) {
	p, err := h.self(ctx)
	if err != nil {
		return nil, 0, err
	}
	times, err := p.TimesWithContext(ctx)
	if err != nil {
		return nil, 0, err
	}
	m, err := p.MemoryInfoWithContext(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := &ProcessInfo{PID: p.Pid, MemoryRSS: m.RSS, MemoryVMS: m.VMS, MemorySwap: m.Swap}
	out.ParentPID, _ = p.PpidWithContext(ctx)
	out.Name, _ = p.NameWithContext(ctx)
	out.Exe, _ = p.ExeWithContext(ctx)
	out.CommandLine, _ = p.CmdlineWithContext(ctx)
	out.CWD, _ = p.CwdWithContext(ctx)
	if st, err := p.StatusWithContext(ctx); err == nil {
		out.Status = strings.Join(st, ",")
	}
	out.Username, _ = p.UsernameWithContext(ctx)
	out.CreateTime, _ = p.CreateTimeWithContext(ctx)
	out.NumThreads, _ = p.NumThreadsWithContext(ctx)
	out.NumFDs, _ = p.NumFDsWithContext(ctx)
	out.MemoryPercent, _ = p.MemoryPercentWithContext(ctx)
	return out, times.User + times.System, nil
}

// self opens this process once; a failed open is retried on the next call.
func (h *hostProbes) self(ctx context.Context) (*process.Process, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == nil {
		p, err := process.NewProcessWithContext(ctx, int32(os.Getpid()))
		if err != nil {
			return nil, err
		}
		h.proc = p
	}
	return h.proc, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// errProbe reports a probe that produced nothing and said nothing.
var errProbe = errors.New("monitor: probe returned no data")
