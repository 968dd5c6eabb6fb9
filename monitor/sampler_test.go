package monitor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/rpc"
)

func TestSamplerNotReadyBeforeFirstSample(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{}, Options{})
	if _, err := m.sampler.cpuInfo(); !errors.Is(err, ErrNotReady) {
		t.Errorf("cpuInfo error = %v, want ErrNotReady", err)
	}
	if _, err := m.sampler.processInfo(); !errors.Is(err, ErrNotReady) {
		t.Errorf("processInfo error = %v, want ErrNotReady", err)
	}
}

func TestSamplerMeasuresOverTheWindow(t *testing.T) {
	t.Parallel()
	p := &fakeProbes{}
	m := testMonitor(p, Options{})
	m.sampler.sampleOnce(context.Background())

	cpu, err := m.sampler.cpuInfo()
	if err != nil {
		t.Fatal(err)
	}
	want := &CPUInfo{PhysicalCores: 2, LogicalCores: 4, ModelName: "Fake CPU",
		UsagePercent: []float64{25, 50, 75, 100}, TotalPercent: 62.5, EffectiveCores: 4}
	if diff := cmp.Diff(want, cpu); diff != "" {
		t.Errorf("cpu mismatch (-want +got):\n%s", diff)
	}
	proc, err := m.sampler.processInfo()
	if err != nil {
		t.Fatal(err)
	}
	if proc.CPUPercent != 50 || proc.PID != 42 {
		t.Errorf("process cpuPercent, pid = %v, %d, want 50, 42", proc.CPUPercent, proc.PID)
	}
}

func TestSamplerInsideCPULimitedCgroup(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{cgLimit: 2}, Options{})
	m.sampler.sampleOnce(context.Background())
	cpu, err := m.sampler.cpuInfo()
	if err != nil {
		t.Fatal(err)
	}
	// One CPU second per second of window, against a quota of two cores.
	if cpu.UsagePercent != nil || cpu.TotalPercent != 50 || cpu.EffectiveCores != 2 {
		t.Errorf("usagePercent, totalPercent, effectiveCores = %v, %v, %v, want nil, 50, 2",
			cpu.UsagePercent, cpu.TotalPercent, cpu.EffectiveCores)
	}
}

func TestSamplerQuotaAboveCoreCountIsNoLimit(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{cgLimit: 8}, Options{})
	m.sampler.sampleOnce(context.Background())
	cpu, err := m.sampler.cpuInfo()
	if err != nil {
		t.Fatal(err)
	}
	if cpu.EffectiveCores != 4 || len(cpu.UsagePercent) != 4 {
		t.Errorf("effectiveCores, cores = %v, %d, want 4, 4", cpu.EffectiveCores, len(cpu.UsagePercent))
	}
}

func TestSamplerFailedSampleAnswersCollectionFailed(t *testing.T) {
	t.Parallel()
	p := &fakeProbes{}
	m := testMonitor(p, Options{})
	m.sampler.sampleOnce(context.Background())
	p.fail = true
	m.sampler.sampleOnce(context.Background())
	for name, get := range map[string]func() error{
		"cpu":     func() error { _, err := m.sampler.cpuInfo(); return err },
		"process": func() error { _, err := m.sampler.processInfo(); return err },
	} {
		err := get()
		if !errors.Is(err, ErrCollectionFailed) || !errors.Is(err, errBroken) {
			t.Errorf("%s error = %v, want ErrCollectionFailed wrapping the probe error", name, err)
		}
	}
	p.fail = false
	m.sampler.sampleOnce(context.Background())
	if _, err := m.sampler.cpuInfo(); err != nil {
		t.Errorf("after a good sample: cpuInfo error = %v", err)
	}
}

func TestSamplerCancelledPublishesNothing(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.sampler.run(ctx); err != nil {
		t.Errorf("run = %v, want nil at shutdown", err)
	}
	if _, err := m.sampler.cpuInfo(); !errors.Is(err, ErrNotReady) {
		t.Errorf("cpuInfo error = %v, want ErrNotReady", err)
	}
}

func TestSamplerRunPacesByInterval(t *testing.T) {
	t.Parallel()
	m := testMonitor(&fakeProbes{}, Options{})
	var waits []int64
	inner := m.sampler.wait
	m.sampler.wait = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, int64(d/time.Second))
		return inner(ctx, d)
	}
	if err := m.sampler.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The 2s window, then the rest of the 10s interval.
	if diff := cmp.Diff([]int64{2, 8}, waits); diff != "" {
		t.Errorf("waits (s) mismatch (-want +got):\n%s", diff)
	}
}

// TestCachedActionsDoNotSample: get_cpu, get_process and the overview read the sample cache;
// only the sampler runs the sampling probes.
func TestCachedActionsDoNotSample(t *testing.T) {
	t.Parallel()
	p := &fakeProbes{}
	m := testMonitor(p, Options{})
	m.sampler.sampleOnce(context.Background())
	before := p.calls.Load()
	ctx := context.Background()
	for range 100 {
		if _, err := m.getCPU(ctx, rpc.Call{}, rpc.NoParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.getProcess(ctx, rpc.Call{}, rpc.NoParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.getOverview(ctx, rpc.Call{}, rpc.NoParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.calls.Load(); got != before {
		t.Errorf("sampling probes ran %d times on the request path, want 0", got-before)
	}
}
