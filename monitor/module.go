package monitor

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/i18n"
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

// Options are the optional inspectors of the monitor, wired by the composition root from the
// modules that own them. A nil inspector makes its action answer an empty report marked
// disabled.
type Options struct {
	// Streams inspects the event bus's stream transport (get_event_streams).
	Streams StreamInspector
	// Integration reads the integration module's invocation statistics (get_integration_stats).
	Integration StatsInspector
	// Dependencies are the data sources and the key-value store get_readiness checks, in the
	// order it answers them; none answers {ready: true, checks: []}.
	Dependencies []Dependency
}

//go:embed messages
var messageFiles embed.FS

// Messages returns the module's message catalog: messages/<lang>/monitor.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// New builds the monitor over the host's probes, sampling every svc.monitor.sample_interval for
// svc.monitor.sample_duration (defaults applied by config). It does no I/O.
func New(deps app.Platform, opts Options) (*Service, error) {
	if deps.Config == nil {
		return nil, errors.New("monitor: a configuration is required")
	}
	return newMonitor(deps, opts, newHostProbes()), nil
}

// Module lists what the module adds to the server: the sys/monitor resource and the background
// sampler worker.
func (m *Service) Module() app.Module {
	return app.Module{
		Name:      "monitor",
		Resources: []rpc.Resource{m.resource()},
		Messages:  Messages(),
		Workers:   []app.Worker{{Name: "sampler", Run: m.sampler.run}},
	}
}

// Service is the monitor module at run time: the handlers of sys/monitor and their sampler.
type Service struct {
	probes  probes
	sampler *sampler
	build   app.Build
	opts    Options
	logger  *slog.Logger
}

func newMonitor(deps app.Platform, opts Options, p probes) *Service {
	logger := deps.Logger.With(slog.String("module", "monitor"))
	return &Service{
		probes: p,
		sampler: &sampler{probes: p, interval: deps.Config.Monitor.SampleInterval, window: deps.Config.Monitor.SampleDuration,
			logger: logger, now: time.Now, wait: sleep},
		build:  app.BuildInfo(),
		opts:   opts,
		logger: logger,
	}
}

func (m *Service) resource() rpc.Resource {
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
		rpc.Handle("get_readiness", m.getReadiness, limit, perm),
	}}
}

// live makes the handler of an action read live by one probe; a failed probe answers 2101 and
// its cause is logged.
func live[T any](m *Service, probe func(context.Context) (*T, error)) func(context.Context, rpc.Call, rpc.NoParams) (*T, error) {
	return func(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*T, error) {
		v, err := probe(ctx)
		if err != nil {
			m.log(c).Warn("monitor: probe failed", slog.String("action", c.Action), slog.Any("error", err))
			return nil, ErrCollectionFailed.Wrap(err)
		}
		return v, nil
	}
}

func (m *Service) log(c rpc.Call) *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return m.logger
}

// getCPU answers from the sample cache: 2100 before the first sample, 2101 after a failed one.
func (m *Service) getCPU(context.Context, rpc.Call, rpc.NoParams) (*CPUInfo, error) {
	return m.sampler.cpuInfo()
}

// getProcess answers from the sample cache like getCPU.
func (m *Service) getProcess(context.Context, rpc.Call, rpc.NoParams) (*ProcessInfo, error) {
	return m.sampler.processInfo()
}

// getBuildInfo answers the build data read once at build time; it cannot fail.
func (m *Service) getBuildInfo(context.Context, rpc.Call, rpc.NoParams) (*app.Build, error) {
	return &m.build, nil
}

// getEventStreams asks the stream inspector; without one the report is empty and disabled.
func (m *Service) getEventStreams(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*EventStreams, error) {
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
func (m *Service) getIntegrationStats(context.Context, rpc.Call, rpc.NoParams) (*IntegrationStats, error) {
	if m.opts.Integration == nil {
		return &IntegrationStats{Enabled: false, Stats: []InvocationStats{}}, nil
	}
	stats := m.opts.Integration.InvocationStats()
	if stats == nil {
		stats = []InvocationStats{}
	}
	return &IntegrationStats{Enabled: true, Stats: stats}, nil
}
