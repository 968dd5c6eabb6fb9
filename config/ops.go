package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Defaults of the operations sections (issue #19).
const (
	// DefaultAdminAddress is svc.admin.address's default: loopback only, so metrics and
	// profiles are never public by accident.
	DefaultAdminAddress = "127.0.0.1:9464"
	// DefaultMetricsPath is svc.metrics.path's default.
	DefaultMetricsPath = "/metrics"
	// DefaultTracingSampleRatio is svc.tracing.sample_ratio's default: every trace.
	DefaultTracingSampleRatio = 1.0
)

// Admin is the svc.admin section: the separate listener of /metrics and /debug/pprof. It is
// opened only when svc.metrics.enabled or svc.pprof.enabled is true.
type Admin struct {
	// Address is svc.admin.address (default "127.0.0.1:9464"): host:port of the admin listener.
	// It must differ from the public svc.app.port; bind it to a non-loopback address only
	// behind a firewall that admits the scraper alone.
	Address string `toml:"address"`
}

// Metrics is the svc.metrics section: the Prometheus exposition.
type Metrics struct {
	// Enabled is svc.metrics.enabled (default false): collect metrics and serve them on the
	// admin address. When false the /api path carries no metrics work at all.
	Enabled bool `toml:"enabled"`
	// Path is svc.metrics.path (default "/metrics"): the scrape path on the admin address.
	Path string `toml:"path"`
}

// Pprof is the svc.pprof section.
type Pprof struct {
	// Enabled is svc.pprof.enabled (default false): serve net/http/pprof under /debug/pprof/ on
	// the admin address (never on the public port).
	Enabled bool `toml:"enabled"`
}

// Tracing is the svc.tracing section: OpenTelemetry traces exported over OTLP/HTTP.
type Tracing struct {
	// Enabled is svc.tracing.enabled (default false): create spans and export them. When false
	// no tracer provider exists and the /api path does no tracing work.
	Enabled bool `toml:"enabled"`
	// Endpoint is svc.tracing.endpoint (default ""): the OTLP/HTTP collector as host:port
	// ("otel-collector:4318"). Empty uses the OpenTelemetry SDK's own default and its
	// OTEL_EXPORTER_OTLP_* environment variables (localhost:4318).
	Endpoint string `toml:"endpoint"`
	// Insecure is svc.tracing.insecure (default false): send to the endpoint over plain HTTP.
	Insecure bool `toml:"insecure"`
	// SampleRatio is svc.tracing.sample_ratio (default 1): the share of new traces recorded,
	// in (0, 1]; a call that arrives with a sampled traceparent is always recorded.
	SampleRatio float64 `toml:"sample_ratio"`
	// ServiceName is svc.tracing.service_name (default svc.app.name): the service.name
	// resource attribute of every span.
	ServiceName string `toml:"service_name"`
}

func (a *Admin) applyDefaults() {
	if a.Address == "" {
		a.Address = DefaultAdminAddress
	}
}

func (m *Metrics) applyDefaults() {
	if m.Path == "" {
		m.Path = DefaultMetricsPath
	}
}

func (t *Tracing) applyDefaults(appName string) {
	if t.SampleRatio <= 0 || t.SampleRatio > 1 {
		t.SampleRatio = DefaultTracingSampleRatio
	}
	if t.ServiceName == "" {
		t.ServiceName = appName
	}
}

// validateAdmin checks svc.admin.address when the admin listener is opened: a host:port whose
// port is not the public svc.app.port, so metrics and profiles never share the public listener.
func (c *Config) validateAdmin() []error {
	if !c.Metrics.Enabled && !c.Pprof.Enabled {
		return nil
	}
	_, port, err := net.SplitHostPort(c.Admin.Address)
	if err != nil {
		return []error{fmt.Errorf("svc.admin.address %q: want host:port: %w", c.Admin.Address, ErrInvalidValue)}
	}
	if port == strconv.Itoa(int(c.App.Port)) {
		return []error{fmt.Errorf("svc.admin.address %q: same port as svc.app.port: %w", c.Admin.Address, ErrInvalidValue)}
	}
	if !strings.HasPrefix(c.Metrics.Path, "/") {
		return []error{fmt.Errorf("svc.metrics.path %q: must start with /: %w", c.Metrics.Path, ErrInvalidValue)}
	}
	return nil
}
