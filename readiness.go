package svc

import (
	"context"
	"sort"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/monitor"
)

// dependencies lists what sys/monitor get_readiness checks, the same as GET /readyz: every data
// source of cfg (primary first, then by name) and the key-value store when enabled, each pinged
// through the handle of d (the Running server's own; after Stop a check reports it closed).
func (d *dataSources) dependencies(cfg *config.Config) []monitor.Dependency {
	names := make([]string, 0, len(cfg.DataSources))
	for name := range cfg.DataSources {
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
		out = append(out, monitor.Dependency{Name: name, Kind: monitor.KindDataSource, Type: string(cfg.DataSources[name].Type),
			Ping: d.dbs[name].PingContext})
	}
	if cfg.KVStore.Enabled && d.kv != nil {
		kvc := d.kv
		out = append(out, monitor.Dependency{Name: "kvstore", Kind: monitor.KindKVStore, Type: "redis",
			Ping: func(ctx context.Context) error { return kvc.Ping(ctx).Err() }})
	}
	return out
}
