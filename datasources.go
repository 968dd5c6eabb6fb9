package svc

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/kv"
)

// dataSources are the connections one Start (or one Migrate) opens: every data source of
// svc.data_sources and the kv store client (nil when svc.kvstore is off). They are set once
// by openData and never reassigned, so readiness checks read them without a lock; after close
// a check gets the drivers' "closed" errors.
type dataSources struct {
	dbs map[string]*db.DB
	kv  *redis.Client
}

// openData opens and pings the data sources and the kv store of cfg; on failure it closes what
// it opened.
func openData(ctx context.Context, cfg *config.Config) (*dataSources, error) {
	dbs, err := db.OpenAll(ctx, cfg.DataSources)
	if err != nil {
		return nil, err
	}
	d := &dataSources{dbs: dbs}
	if d.kv, err = kv.Open(ctx, cfg.KVStore); err != nil {
		return nil, errors.Join(err, d.close(ctx))
	}
	return d, nil
}

// primary is the primary data source (svc.data_sources.primary).
func (d *dataSources) primary() *db.DB { return d.dbs[config.PrimaryDataSource] }

// close closes the kv store client and every data source.
func (d *dataSources) close(context.Context) error {
	var kvErr error
	if d.kv != nil {
		kvErr = d.kv.Close()
	}
	return errors.Join(kvErr, db.CloseAll(d.dbs))
}

// ready reports whether every data source and the kv store answer (GET /readyz).
func (d *dataSources) ready(ctx context.Context) error {
	for name, h := range d.dbs {
		if err := h.PingContext(ctx); err != nil {
			return fmt.Errorf("data source %s: %w", name, err)
		}
	}
	if d.kv != nil {
		if err := d.kv.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("kvstore: %w", err)
		}
	}
	return nil
}
