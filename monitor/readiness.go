package monitor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// readinessTimeout bounds each dependency's check of get_readiness.
const readinessTimeout = 2 * time.Second

// Kinds of Dependency.
const (
	KindDataSource = "data_source"
	KindKVStore    = "kvstore"
)

// Dependency is one thing the server needs to serve, checked by get_readiness: a data source or
// the key-value store. The composition root lists them (Options.Dependencies); feature modules
// do not reach the databases of others.
type Dependency struct {
	// Name is the data source's name (svc.data_sources.<name>) or "kvstore".
	Name string
	// Kind is KindDataSource or KindKVStore.
	Kind string
	// Type is the engine: sqlite, postgres, mysql, redis.
	Type string
	// Ping answers nil when the dependency serves.
	Ping func(ctx context.Context) error
}

// ReadinessCheck is the outcome of one Dependency in get_readiness. It carries no error text:
// a driver's message may name addresses and users.
type ReadinessCheck struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Type      string  `json:"type"`
	Ready     bool    `json:"ready"`
	LatencyMs float64 `json:"latencyMs"`
}

// Readiness is the answer of get_readiness: Ready when every check is.
type Readiness struct {
	Ready  bool             `json:"ready"`
	Checks []ReadinessCheck `json:"checks"`
}

// getReadiness pings every dependency at once, each within readinessTimeout; it never fails. A
// failed check is logged with its cause.
func (m *Service) getReadiness(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*Readiness, error) {
	deps := m.opts.Dependencies
	out := &Readiness{Ready: true, Checks: make([]ReadinessCheck, len(deps))}
	var wg sync.WaitGroup
	for i, d := range deps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now() // before the deadline is set: a check cut by it took at least readinessTimeout
			ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
			defer cancel()
			err := d.Ping(ctx)
			out.Checks[i] = ReadinessCheck{Name: d.Name, Kind: d.Kind, Type: d.Type, Ready: err == nil,
				LatencyMs: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				m.log(c).Warn("monitor: dependency not ready", slog.String("dependency", d.Name), slog.Any("error", err))
			}
		}()
	}
	wg.Wait()
	for _, ch := range out.Checks {
		out.Ready = out.Ready && ch.Ready
	}
	return out, nil
}
