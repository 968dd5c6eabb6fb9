package svc

import (
	"context"
	"errors"
	"sort"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/monitor"
)

// errNotOpen: a dependency checked while the server is not running.
var errNotOpen = errors.New("not open")

// dependencies lists what sys/monitor get_readiness checks, the same as GET /readyz: every data
// source (primary first, then by name) and the key-value store when enabled. The handles are
// read at check time, so the list can be built before the data sources are opened.
func (s *Server) dependencies() []monitor.Dependency {
	names := make([]string, 0, len(s.cfg.DataSources))
	for name := range s.cfg.DataSources {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == config.PrimaryDataSource) != (names[j] == config.PrimaryDataSource) {
			return names[i] == config.PrimaryDataSource
		}
		return names[i] < names[j]
	})
	out := make([]monitor.Dependency, 0, len(names)+1)
	for _, name := range names {
		out = append(out, monitor.Dependency{Name: name, Kind: monitor.KindDataSource, Type: string(s.cfg.DataSources[name].Type),
			Ping: func(ctx context.Context) error {
				d, ok := s.dbs[name]
				if !ok {
					return errNotOpen
				}
				return d.PingContext(ctx)
			}})
	}
	if s.cfg.KVStore.Enabled {
		out = append(out, monitor.Dependency{Name: "kvstore", Kind: monitor.KindKVStore, Type: "redis",
			Ping: func(ctx context.Context) error {
				if s.kv == nil {
					return errNotOpen
				}
				return s.kv.Ping(ctx).Err()
			}})
	}
	return out
}
