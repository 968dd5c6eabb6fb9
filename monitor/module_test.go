package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// invoke runs an action through its rpc.Op as the engine would (params decoding included) and
// returns the JSON of its data.
func invoke(t *testing.T, m *Service, action string) (string, error) {
	t.Helper()
	for _, op := range m.resource().Ops {
		if op.Action == action {
			v, err := op.Invoke(context.Background(), rpc.Call{Action: action}, json.RawMessage(`{"ignored":1}`))
			if err != nil {
				return "", err
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b), nil
		}
	}
	t.Fatalf("no action %q", action)
	return "", nil
}

func TestResourceDeclaresEveryActionWithRateLimit60(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{}, Options{})
	var got []string
	for _, op := range m.resource().Ops {
		got = append(got, op.Action)
		if op.RateLimit != (rpc.Limit{Max: 60}) || op.Public || op.Permission != Permission || op.Version != "v1" {
			t.Errorf("%s: limit %+v, public %v, permission %q, version %q; want 60 per engine period, bearer, sys.monitor.query, v1",
				op.Action, op.RateLimit, op.Public, op.Permission, op.Version)
		}
	}
	want := []string{"get_overview", "get_cpu", "get_memory", "get_disk", "get_network", "get_host",
		"get_process", "get_load", "get_build_info", "get_event_streams", "get_integration_stats", "get_readiness"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions mismatch (-want +got):\n%s", diff)
	}
}

func TestOverview(t *testing.T) {
	t.Parallel()
	build, _ := json.Marshal(app.BuildInfo())
	tests := []struct {
		name   string
		probes *fakeProbes
		sample bool
		want   string
	}{
		{
			name: "every part", probes: &fakeProbes{}, sample: true,
			want: `{"host":{"hostname":"h1","os":"linux","platform":"debian","platformVersion":"12","kernelVersion":"6.1","kernelArch":"x86_64","uptime":100},` +
				`"cpu":{"physicalCores":2,"logicalCores":4,"usagePercent":62.5,"effectiveCores":4},` +
				`"memory":{"total":1000,"used":250,"usedPercent":25},` +
				`"disk":{"total":100,"used":40,"usedPercent":40,"partitions":1},` +
				`"network":{"interfaces":2,"bytesSent":11,"bytesRecv":22,"packetsSent":33,"packetsRecv":44},` +
				`"process":{"pid":42,"name":"svc","cpuPercent":50,"memoryPercent":1.5},` +
				`"load":{"load1":0.5,"load5":0.25,"load15":0.125},"build":` + string(build) + `}`,
		},
		{
			name: "not sampled yet", probes: &fakeProbes{}, sample: false,
			want: `{"host":{"hostname":"h1","os":"linux","platform":"debian","platformVersion":"12","kernelVersion":"6.1","kernelArch":"x86_64","uptime":100},` +
				`"cpu":null,"memory":{"total":1000,"used":250,"usedPercent":25},` +
				`"disk":{"total":100,"used":40,"usedPercent":40,"partitions":1},` +
				`"network":{"interfaces":2,"bytesSent":11,"bytesRecv":22,"packetsSent":33,"packetsRecv":44},` +
				`"process":null,"load":{"load1":0.5,"load5":0.25,"load15":0.125},"build":` + string(build) + `}`,
		},
		{
			name: "every probe fails", probes: &fakeProbes{fail: true}, sample: true,
			want: `{"host":null,"cpu":null,"memory":null,"disk":null,"network":null,"process":null,"load":null,"build":` + string(build) + `}`,
		},
		{
			name: "every probe panics", probes: &fakeProbes{panics: true}, sample: false,
			want: `{"host":null,"cpu":null,"memory":null,"disk":null,"network":null,"process":null,"load":null,"build":` + string(build) + `}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMonitor(tt.probes, Options{})
			if tt.sample {
				m.sampler.sampleOnce(context.Background())
			}
			got, err := invoke(t, m, "get_overview")
			if err != nil {
				t.Fatalf("get_overview error = %v, want none ever", err)
			}
			if got != tt.want {
				t.Errorf("get_overview =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestLiveActions(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"get_memory", "get_disk", "get_network", "get_host", "get_load"} {
		t.Run(action, func(t *testing.T) {
			if _, err := invoke(t, testMonitor(&fakeProbes{}, Options{}), action); err != nil {
				t.Errorf("healthy probe: error = %v", err)
			}
			_, err := invoke(t, testMonitor(&fakeProbes{fail: true}, Options{}), action)
			if !errors.Is(err, ErrCollectionFailed) {
				t.Errorf("failed probe: error = %v, want ErrCollectionFailed (2101)", err)
			}
		})
	}
}

func TestSampledActionsBeforeFirstSample(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"get_cpu", "get_process"} {
		if _, err := invoke(t, testMonitor(&fakeProbes{}, Options{}), action); !errors.Is(err, ErrNotReady) {
			t.Errorf("%s error = %v, want ErrNotReady (2100)", action, err)
		}
	}
}

func TestInspectors(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	streams := StreamInspectorFunc(func(context.Context) ([]StreamInfo, error) {
		return []StreamInfo{{Stream: "svc:event:a", Length: 3, Groups: []StreamGroupInfo{
			{Name: "g", Consumers: 2, Pending: 1, Lag: 0, LastDeliveredID: "1-0"}}}}, nil
	})
	stats := StatsInspectorFunc(func() []InvocationStats {
		return []InvocationStats{
			{System: "erp", Contract: "order", Direction: "outbound", Calls: 2, Successes: 2, AvgDurationMs: 5, MaxDurationMs: 7},
			{System: "erp", Contract: "", Direction: "inbound", Calls: 1, Failures: map[string]int64{"auth": 1},
				LastError: "bad signature", LastErrorAt: when},
		}
	})
	broken := StreamInspectorFunc(func(context.Context) ([]StreamInfo, error) { return nil, errBroken })
	tests := []struct {
		name, action string
		opts         Options
		want         string
		wantErr      error
	}{
		{"no stream inspector", "get_event_streams", Options{}, `{"enabled":false,"streams":[]}`, nil},
		{"no stats inspector", "get_integration_stats", Options{}, `{"enabled":false,"stats":[]}`, nil},
		{"streams", "get_event_streams", Options{Streams: streams},
			`{"enabled":true,"streams":[{"stream":"svc:event:a","length":3,"groups":[{"name":"g","consumers":2,"pending":1,"lag":0,"lastDeliveredId":"1-0"}]}]}`, nil},
		{"stream inspector fails", "get_event_streams", Options{Streams: broken}, "", ErrCollectionFailed},
		{"stats", "get_integration_stats", Options{Integration: stats},
			`{"enabled":true,"stats":[{"system":"erp","contract":"order","direction":"outbound","calls":2,"successes":2,"avgDurationMs":5,"maxDurationMs":7},` +
				`{"system":"erp","contract":"","direction":"inbound","calls":1,"successes":0,"failures":{"auth":1},"avgDurationMs":0,"maxDurationMs":0,"lastError":"bad signature","lastErrorAt":"2026-11-22T10:00:00Z"}]}`, nil},
		{"empty stats", "get_integration_stats", Options{Integration: StatsInspectorFunc(func() []InvocationStats { return nil })},
			`{"enabled":true,"stats":[]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := invoke(t, testMonitor(&fakeProbes{}, tt.opts), tt.action)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("%s = %s, %v, want %s", tt.action, got, err, tt.want)
			}
		})
	}
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	got, err := invoke(t, testMonitor(&fakeProbes{}, Options{}), "get_build_info")
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(got), &b); err != nil {
		t.Fatal(err)
	}
	bi := app.BuildInfo()
	// vefVersion is what the original's monitor page reads (build.vefVersion); frameworkVersion
	// is ours; both carry the same value.
	want := map[string]any{"vefVersion": bi.FrameworkVersion, "frameworkVersion": bi.FrameworkVersion,
		"appVersion": bi.AppVersion, "buildTime": bi.BuildTime, "gitCommit": bi.GitCommit, "gitModified": bi.GitModified}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("get_build_info mismatch (-want +got):\n%s", diff)
	}
	for k, v := range b {
		if v == "" {
			t.Errorf("%s is empty, want a value or %q", k, app.Unknown)
		}
	}
}

// TestWireFieldNames pins the JSON names of every result type to wire-core §8.2.
func TestWireFieldNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		want string
	}{
		{HostSummary{}, "hostname os platform platformVersion kernelVersion kernelArch uptime"},
		{CPUSummary{}, "physicalCores logicalCores usagePercent effectiveCores"},
		{MemorySummary{}, "total used usedPercent"},
		{DiskSummary{}, "total used usedPercent partitions"},
		{NetworkSummary{}, "interfaces bytesSent bytesRecv packetsSent packetsRecv"},
		{ProcessSummary{}, "pid name cpuPercent memoryPercent"},
		{CPUInfo{}, "physicalCores logicalCores modelName mhz cacheSize usagePercent totalPercent vendorId family model stepping microcode effectiveCores"},
		{MemoryInfo{}, "virtual swap"},
		{VirtualMemory{}, "total available used usedPercent free active inactive wired laundry buffers cached writeBack dirty writeBackTmp shared slab slabReclaimable slabUnreclaimable pageTables swapCached commitLimit committedAs highTotal highFree lowTotal lowFree swapTotal swapFree mapped vmAllocTotal vmAllocUsed vmAllocChunk hugePagesTotal hugePagesFree hugePagesReserved hugePagesSurplus hugePageSize anonHugePages"},
		{SwapMemory{}, "total used free usedPercent swapIn swapOut pageIn pageOut pageFault pageMajorFault"},
		{DiskInfo{}, "partitions ioCounters"},
		{PartitionInfo{}, "device mountPoint fsType options total free used usedPercent iNodesTotal iNodesUsed iNodesFree iNodesUsedPercent"},
		{IOCounter{}, "readCount mergedReadCount writeCount mergedWriteCount readBytes writeBytes readTime writeTime iopsInProgress ioTime weightedIo name serialNumber label"},
		{NetworkInfo{}, "interfaces ioCounters"},
		{InterfaceInfo{}, "index mtu name hardwareAddr flags addrs"},
		{NetIOCounter{}, "name bytesSent bytesRecv packetsSent packetsRecv errorsIn errorsOut droppedIn droppedOut fifoIn fifoOut"},
		{HostInfo{}, "hostname uptime bootTime processes os platform platformFamily platformVersion kernelVersion kernelArch virtualizationSystem virtualizationRole hostId"},
		{ProcessInfo{}, "pid parentPid name exe commandLine cwd status username createTime numThreads numFds cpuPercent memoryPercent memoryRss memoryVms memorySwap"},
		{LoadInfo{}, "load1 load5 load15"},
		{app.Build{}, "vefVersion frameworkVersion appVersion buildTime gitCommit gitModified"},
		{Overview{}, "host cpu memory disk network process load build"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		want := strings.Fields(tt.want)
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T JSON names mismatch (-want +got):\n%s", tt.v, diff)
		}
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	tests := []struct{ lang, key, want string }{
		{"en", "monitor_not_ready", "Monitoring data is not ready yet, please try again later"},
		{"zh-CN", "monitor_not_ready", "监控数据尚未就绪, 请稍后重试"},
		{"en", "monitor_collection_failed", "Failed to collect monitoring data"},
		{"zh-CN", "monitor_collection_failed", "监控数据采集失败"},
	}
	for _, tt := range tests {
		c := i18n.MustNew(tt.lang, Messages())
		if !c.Has(tt.key) || c.T(tt.key, nil) != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.lang, tt.key, c.T(tt.key, nil), tt.want)
		}
	}
	for _, e := range []*rpc.Error{ErrNotReady, ErrCollectionFailed} {
		if e.HTTPStatus() != 200 {
			t.Errorf("%s: HTTP status %d, want 200", e.Key, e.HTTPStatus())
		}
	}
}
