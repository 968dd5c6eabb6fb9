package monitor

import "github.com/svc-framework/svc/app"

// The result shapes of sys/monitor (wire-core §8.2). Field names are the original framework's
// wire names; build info carries vefVersion and frameworkVersion both (spec/README.md). Byte quantities are
// bytes, percentages run from 0 to 100, counters are cumulative since boot.

// Overview is the answer of get_overview: one field per probe, null when that probe failed or
// (cpu, process) has no sample yet. Build is always present.
type Overview struct {
	Host    *HostSummary    `json:"host"`
	CPU     *CPUSummary     `json:"cpu"`
	Memory  *MemorySummary  `json:"memory"`
	Disk    *DiskSummary    `json:"disk"`
	Network *NetworkSummary `json:"network"`
	Process *ProcessSummary `json:"process"`
	Load    *LoadInfo       `json:"load"`
	Build   *app.Build      `json:"build"`
}

// HostSummary is the host part of the overview.
type HostSummary struct {
	Hostname        string `json:"hostname"`
	OS              string `json:"os"`
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platformVersion"`
	KernelVersion   string `json:"kernelVersion"`
	KernelArch      string `json:"kernelArch"`
	Uptime          uint64 `json:"uptime"` // seconds
}

// CPUSummary is the CPU part of the overview, from the latest sample.
type CPUSummary struct {
	PhysicalCores  int     `json:"physicalCores"`
	LogicalCores   int     `json:"logicalCores"`
	UsagePercent   float64 `json:"usagePercent"`   // CPUInfo.TotalPercent
	EffectiveCores float64 `json:"effectiveCores"` // see CPUInfo.EffectiveCores
}

// MemorySummary is the memory part of the overview.
type MemorySummary struct {
	Total       uint64  `json:"total"`
	Used        uint64  `json:"used"`
	UsedPercent float64 `json:"usedPercent"`
}

// DiskSummary is the disk part of the overview: the filesystem holding the root path only
// (spec §8.3), so Partitions is always 1.
type DiskSummary struct {
	Total       uint64  `json:"total"`
	Used        uint64  `json:"used"`
	UsedPercent float64 `json:"usedPercent"`
	Partitions  int     `json:"partitions"`
}

// NetworkSummary is the network part of the overview: the interface count and counters summed
// over all interfaces.
type NetworkSummary struct {
	Interfaces  int    `json:"interfaces"`
	BytesSent   uint64 `json:"bytesSent"`
	BytesRecv   uint64 `json:"bytesRecv"`
	PacketsSent uint64 `json:"packetsSent"`
	PacketsRecv uint64 `json:"packetsRecv"`
}

// ProcessSummary is the process part of the overview, from the latest sample.
type ProcessSummary struct {
	PID           int32   `json:"pid"`
	Name          string  `json:"name"`
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryPercent float32 `json:"memoryPercent"`
}

// CPUInfo is the answer of get_cpu, from the latest sample. Inventory fields describe the first
// CPU package. Outside a CPU-limited container UsagePercent has one entry per logical core and
// TotalPercent is the usage of all cores over the sampling window; inside one UsagePercent is
// null and TotalPercent is the share of the cgroup quota used, at most 100.
type CPUInfo struct {
	PhysicalCores int       `json:"physicalCores"`
	LogicalCores  int       `json:"logicalCores"`
	ModelName     string    `json:"modelName"`
	Mhz           float64   `json:"mhz"`
	CacheSize     int32     `json:"cacheSize"` // KB
	UsagePercent  []float64 `json:"usagePercent"`
	TotalPercent  float64   `json:"totalPercent"`
	VendorID      string    `json:"vendorId"`
	Family        string    `json:"family"`
	Model         string    `json:"model"`
	Stepping      int32     `json:"stepping"`
	Microcode     string    `json:"microcode"`
	// EffectiveCores is the capacity usage is measured against: the cgroup CPU quota in cores
	// inside a CPU-limited container, else LogicalCores.
	EffectiveCores float64 `json:"effectiveCores"`
}

// MemoryInfo is the answer of get_memory; Swap is null when the swap probe failed.
type MemoryInfo struct {
	Virtual *VirtualMemory `json:"virtual"`
	Swap    *SwapMemory    `json:"swap"`
}

// VirtualMemory is the physical memory of the host. Inside a memory-limited container Total,
// Used, UsedPercent, Available and Free describe the cgroup limit and its usage instead.
type VirtualMemory struct {
	Total             uint64  `json:"total"`
	Available         uint64  `json:"available"`
	Used              uint64  `json:"used"`
	UsedPercent       float64 `json:"usedPercent"`
	Free              uint64  `json:"free"`
	Active            uint64  `json:"active"`
	Inactive          uint64  `json:"inactive"`
	Wired             uint64  `json:"wired"`
	Laundry           uint64  `json:"laundry"`
	Buffers           uint64  `json:"buffers"`
	Cached            uint64  `json:"cached"`
	WriteBack         uint64  `json:"writeBack"`
	Dirty             uint64  `json:"dirty"`
	WriteBackTmp      uint64  `json:"writeBackTmp"`
	Shared            uint64  `json:"shared"`
	Slab              uint64  `json:"slab"`
	SlabReclaimable   uint64  `json:"slabReclaimable"`
	SlabUnreclaimable uint64  `json:"slabUnreclaimable"`
	PageTables        uint64  `json:"pageTables"`
	SwapCached        uint64  `json:"swapCached"`
	CommitLimit       uint64  `json:"commitLimit"`
	CommittedAs       uint64  `json:"committedAs"`
	HighTotal         uint64  `json:"highTotal"`
	HighFree          uint64  `json:"highFree"`
	LowTotal          uint64  `json:"lowTotal"`
	LowFree           uint64  `json:"lowFree"`
	SwapTotal         uint64  `json:"swapTotal"`
	SwapFree          uint64  `json:"swapFree"`
	Mapped            uint64  `json:"mapped"`
	VMAllocTotal      uint64  `json:"vmAllocTotal"`
	VMAllocUsed       uint64  `json:"vmAllocUsed"`
	VMAllocChunk      uint64  `json:"vmAllocChunk"`
	HugePagesTotal    uint64  `json:"hugePagesTotal"` // pages
	HugePagesFree     uint64  `json:"hugePagesFree"`
	HugePagesReserved uint64  `json:"hugePagesReserved"`
	HugePagesSurplus  uint64  `json:"hugePagesSurplus"`
	HugePageSize      uint64  `json:"hugePageSize"` // bytes
	AnonHugePages     uint64  `json:"anonHugePages"`
}

// SwapMemory is the swap space of the host.
type SwapMemory struct {
	Total          uint64  `json:"total"`
	Used           uint64  `json:"used"`
	Free           uint64  `json:"free"`
	UsedPercent    float64 `json:"usedPercent"`
	SwapIn         uint64  `json:"swapIn"`
	SwapOut        uint64  `json:"swapOut"`
	PageIn         uint64  `json:"pageIn"`
	PageOut        uint64  `json:"pageOut"`
	PageFault      uint64  `json:"pageFault"`
	PageMajorFault uint64  `json:"pageMajorFault"`
}

// DiskInfo is the answer of get_disk: every mounted partition whose usage could be read, and
// the I/O counters per device (null when they could not be read).
type DiskInfo struct {
	Partitions []PartitionInfo       `json:"partitions"`
	IOCounters map[string]*IOCounter `json:"ioCounters"`
}

// PartitionInfo is one mounted filesystem.
type PartitionInfo struct {
	Device            string   `json:"device"`
	MountPoint        string   `json:"mountPoint"`
	FSType            string   `json:"fsType"`
	Options           []string `json:"options"`
	Total             uint64   `json:"total"`
	Free              uint64   `json:"free"`
	Used              uint64   `json:"used"`
	UsedPercent       float64  `json:"usedPercent"`
	INodesTotal       uint64   `json:"iNodesTotal"`
	INodesUsed        uint64   `json:"iNodesUsed"`
	INodesFree        uint64   `json:"iNodesFree"`
	INodesUsedPercent float64  `json:"iNodesUsedPercent"`
}

// IOCounter is the I/O of one block device; times are milliseconds.
type IOCounter struct {
	ReadCount        uint64 `json:"readCount"`
	MergedReadCount  uint64 `json:"mergedReadCount"`
	WriteCount       uint64 `json:"writeCount"`
	MergedWriteCount uint64 `json:"mergedWriteCount"`
	ReadBytes        uint64 `json:"readBytes"`
	WriteBytes       uint64 `json:"writeBytes"`
	ReadTime         uint64 `json:"readTime"`
	WriteTime        uint64 `json:"writeTime"`
	IOPSInProgress   uint64 `json:"iopsInProgress"`
	IOTime           uint64 `json:"ioTime"`
	WeightedIO       uint64 `json:"weightedIo"`
	Name             string `json:"name"`
	SerialNumber     string `json:"serialNumber"`
	Label            string `json:"label"`
}

// NetworkInfo is the answer of get_network: the interfaces and their counters by name.
type NetworkInfo struct {
	Interfaces []InterfaceInfo          `json:"interfaces"`
	IOCounters map[string]*NetIOCounter `json:"ioCounters"`
}

// InterfaceInfo is one network interface; Addrs are CIDR addresses.
type InterfaceInfo struct {
	Index        int      `json:"index"`
	MTU          int      `json:"mtu"`
	Name         string   `json:"name"`
	HardwareAddr string   `json:"hardwareAddr"`
	Flags        []string `json:"flags"`
	Addrs        []string `json:"addrs"`
}

// NetIOCounter is the traffic of one interface.
type NetIOCounter struct {
	Name        string `json:"name"`
	BytesSent   uint64 `json:"bytesSent"`
	BytesRecv   uint64 `json:"bytesRecv"`
	PacketsSent uint64 `json:"packetsSent"`
	PacketsRecv uint64 `json:"packetsRecv"`
	ErrorsIn    uint64 `json:"errorsIn"`
	ErrorsOut   uint64 `json:"errorsOut"`
	DroppedIn   uint64 `json:"droppedIn"`
	DroppedOut  uint64 `json:"droppedOut"`
	FIFOIn      uint64 `json:"fifoIn"`
	FIFOOut     uint64 `json:"fifoOut"`
}

// HostInfo is the answer of get_host.
type HostInfo struct {
	Hostname             string `json:"hostname"`
	Uptime               uint64 `json:"uptime"`   // seconds
	BootTime             uint64 `json:"bootTime"` // Unix seconds
	Processes            uint64 `json:"processes"`
	OS                   string `json:"os"`
	Platform             string `json:"platform"`
	PlatformFamily       string `json:"platformFamily"`
	PlatformVersion      string `json:"platformVersion"`
	KernelVersion        string `json:"kernelVersion"`
	KernelArch           string `json:"kernelArch"`
	VirtualizationSystem string `json:"virtualizationSystem"`
	VirtualizationRole   string `json:"virtualizationRole"`
	HostID               string `json:"hostId"`
}

// ProcessInfo is the answer of get_process, from the latest sample. CPUPercent is measured
// against one CPU over the sampling window (it can exceed 100 on several cores); MemoryPercent
// is the share of host memory.
type ProcessInfo struct {
	PID           int32   `json:"pid"`
	ParentPID     int32   `json:"parentPid"`
	Name          string  `json:"name"`
	Exe           string  `json:"exe"`
	CommandLine   string  `json:"commandLine"`
	CWD           string  `json:"cwd"`
	Status        string  `json:"status"`
	Username      string  `json:"username"`
	CreateTime    int64   `json:"createTime"` // Unix milliseconds
	NumThreads    int32   `json:"numThreads"`
	NumFDs        int32   `json:"numFds"`
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryPercent float32 `json:"memoryPercent"`
	MemoryRSS     uint64  `json:"memoryRss"`
	MemoryVMS     uint64  `json:"memoryVms"`
	MemorySwap    uint64  `json:"memorySwap"`
}

// LoadInfo is the answer of get_load: the load averages.
type LoadInfo struct {
	Load1  float64 `json:"load1"`
	Load5  float64 `json:"load5"`
	Load15 float64 `json:"load15"`
}
