package monitor

import (
	"context"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/rpc"
)

// Resource is the name of the resource this module mounts on /api.
const Resource = "sys/monitor"

// rateLimit is the per-operation maximum of every sys/monitor action per engine period (spec
// §4.1, wire-core §4).
const rateLimit = 60

// Permission is the permission token every sys/monitor action requires (svc addition, issue #11:
// the host's paths, addresses and command line are not for every authenticated user).
const Permission = "sys.monitor.query"

// Defaults of svc.monitor, used when the configuration leaves them unset (spec §8.3).
const (
	defaultSampleInterval = 10 * time.Second
	defaultSampleDuration = 2 * time.Second
)

// Options are the optional inspectors of the monitor, passed by the composition root. A nil
// inspector makes its action answer an empty report marked disabled.
type Options struct {
	// Streams inspects the event bus's stream transport (get_event_streams).
	Streams StreamInspector
	// Integration reads the integration module's invocation statistics (get_integration_stats).
	Integration StatsInspector
}

// Build returns the monitor module: the sys/monitor resource and the background sampler
// worker. It does no I/O.
func Build(deps app.Deps, opts Options) (app.Module, error) {
	m := newMonitor(deps, opts, newHostProbes())
	return app.Module{
		Name:      "monitor",
		Resources: []rpc.Resource{m.resource()},
		Workers:   []app.Worker{{Name: "sampler", Run: m.sampler.run}},
	}, nil
}

// monitor holds the handlers of sys/monitor.
type monitor struct {
	probes  probes
	sampler *sampler
	build   app.Build
	opts    Options
	logger  *slog.Logger
}

func newMonitor(deps app.Deps, opts Options, p probes) *monitor {
	interval, window := defaultSampleInterval, defaultSampleDuration
	if deps.Config != nil {
		interval = positive(deps.Config.Monitor.SampleInterval, interval)
		window = positive(deps.Config.Monitor.SampleDuration, window)
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With(slog.String("module", "monitor"))
	return &monitor{
		probes: p,
		sampler: &sampler{probes: p, interval: interval, window: window, logger: logger,
			now: time.Now, wait: sleep},
		build:  app.BuildInfo(),
		opts:   opts,
		logger: logger,
	}
}

func positive(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (m *monitor) resource() rpc.Resource {
	limit, perm := rpc.RateLimit(rateLimit, 0), rpc.RequiredPermission(Permission)
	return rpc.Resource{Name: Resource, Ops: []rpc.Op{
		rpc.Handle("get_overview", m.getOverview, limit, perm),
		rpc.Handle("get_cpu", m.getCPU, limit, perm),
		rpc.Handle("get_memory", live(m, m.probes.memory), limit, perm),
		rpc.Handle("get_disk", live(m, m.probes.disks), limit, perm),
		rpc.Handle("get_network", live(m, m.probes.network), limit, perm),
		rpc.Handle("get_host", live(m, m.probes.host), limit, perm),
		rpc.Handle("get_process", m.getProcess, limit, perm),
		rpc.Handle("get_load", live(m, m.probes.load), limit, perm),
		rpc.Handle("get_build_info", m.getBuildInfo, limit, perm),
		rpc.Handle("get_event_streams", m.getEventStreams, limit, perm),
		rpc.Handle("get_integration_stats", m.getIntegrationStats, limit, perm),
	}}
}

// live makes the handler of an action read live by one probe; a failed probe answers 2101 and
// its cause is logged.
func live[T any](m *monitor, probe func(context.Context) (*T, error)) func(context.Context, rpc.Call, rpc.NoParams) (*T, error) {
	return func(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*T, error) {
		v, err := probe(ctx)
		if err != nil {
			m.log(c).Warn("monitor: probe failed", slog.String("action", c.Action), slog.Any("error", err))
			return nil, ErrCollectionFailed.Wrap(err)
		}
		return v, nil
	}
}

func (m *monitor) log(c rpc.Call) *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return m.logger
}

// getCPU answers from the sample cache: 2100 before the first sample, 2101 after a failed one.
func (m *monitor) getCPU(context.Context, rpc.Call, rpc.NoParams) (*CPUInfo, error) {
	return m.sampler.cpuInfo()
}

// getProcess answers from the sample cache like getCPU.
func (m *monitor) getProcess(context.Context, rpc.Call, rpc.NoParams) (*ProcessInfo, error) {
	return m.sampler.processInfo()
}

// getBuildInfo answers the build data read once at build time; it cannot fail.
func (m *monitor) getBuildInfo(context.Context, rpc.Call, rpc.NoParams) (*app.Build, error) {
	return &m.build, nil
}

// getEventStreams asks the stream inspector; without one the report is empty and disabled.
func (m *monitor) getEventStreams(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*EventStreams, error) {
	if m.opts.Streams == nil {
		return &EventStreams{Enabled: false, Streams: []StreamInfo{}}, nil
	}
	streams, err := m.opts.Streams.InspectStreams(ctx)
	if err != nil {
		m.log(c).Warn("monitor: stream inspection failed", slog.Any("error", err))
		return nil, ErrCollectionFailed.Wrap(err)
	}
	if streams == nil {
		streams = []StreamInfo{}
	}
	return &EventStreams{Enabled: true, Streams: streams}, nil
}

// getIntegrationStats reads the integration counters; without an inspector the report is
// empty and disabled.
func (m *monitor) getIntegrationStats(context.Context, rpc.Call, rpc.NoParams) (*IntegrationStats, error) {
	if m.opts.Integration == nil {
		return &IntegrationStats{Enabled: false, Stats: []InvocationStats{}}, nil
	}
	stats := m.opts.Integration.InvocationStats()
	if stats == nil {
		stats = []InvocationStats{}
	}
	return &IntegrationStats{Enabled: true, Stats: stats}, nil
}
