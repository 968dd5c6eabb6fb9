// Command cron benchmarks the durable cron store's engine: N nodes (each a cron.Service with
// its own connection pool, running the module's real workers on the real clock) share S
// schedules with a 1-second interval and a job that returns at once. After a warm-up it counts,
// over the measured window, the runs journaled per second (fires/s) and the fire lag — a run's
// start minus its logical time — at p50, p99 and max, from crn_run.
//
//	go run ./bench/cron -db postgres -nodes 3 -schedules 1200   # needs SVC_TEST_POSTGRES_DSN
//	go run ./bench/cron -db sqlite -nodes 1 -schedules 300
//
// The offered load is S fires/s; the engine keeps up when fires/s ≈ S and the lag stays low.
// See bench/cron/run.sh and docs/cron.md for the recorded numbers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
)

type options struct {
	kind                 string
	nodes, schedules     int
	warmup, measure      time.Duration
	batch, maxConcurrent int
}

func main() {
	var o options
	flag.StringVar(&o.kind, "db", "sqlite", "sqlite or postgres (SVC_TEST_POSTGRES_DSN)")
	flag.IntVar(&o.nodes, "nodes", 1, "nodes sharing the schedules")
	flag.IntVar(&o.schedules, "schedules", 300, "schedules, each firing every second")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "time before the measured window")
	flag.DurationVar(&o.measure, "measure", 20*time.Second, "measured window")
	flag.IntVar(&o.batch, "batch", 64, "svc.cron.store.batch_size")
	flag.IntVar(&o.maxConcurrent, "max-concurrent", 128, "svc.cron.store.max_concurrent")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	ctx := context.Background()
	ds, cleanup, err := dataSource(ctx, o.kind)
	if err != nil {
		return err
	}
	defer cleanup()
	cfg := config.Default()
	st := &cfg.Cron.Store
	st.Enabled, st.BatchSize, st.MaxConcurrent, st.PollInterval = true, o.batch, o.maxConcurrent, time.Second
	nodes, err := startNodes(ctx, cfg, ds, o.nodes)
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx, nodes[0].db, *cron.Migrations()); err != nil {
		return err
	}
	noop := cron.Spec{JobName: "noop", Trigger: cron.Trigger{Kind: cron.KindInterval, Every: time.Second}}
	for i := range o.schedules {
		noop.Name = fmt.Sprintf("bench-%05d", i)
		if _, err := nodes[i%len(nodes)].svc.Create(ctx, "bench", noop); err != nil {
			return err
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	workers := make([]*app.Workers, len(nodes))
	for i, n := range nodes { // the module's workers, run as the server runs them
		workers[i] = app.StartWorkers(ctx, quiet, n.svc.Module().Workers)
	}
	from := time.Now().Add(o.warmup)
	time.Sleep(o.warmup + o.measure + 2*time.Second) // the load runs on the real clock
	for _, w := range workers {
		_ = w.Stop(ctx)
	}
	for _, n := range nodes {
		_ = n.svc.Stop(ctx)
	}
	return report(ctx, nodes[0].svc, o, from, from.Add(o.measure))
}

// node is one cron.Service and its database handle.
type node struct {
	svc *cron.Service
	db  *db.DB
}

func startNodes(ctx context.Context, cfg *config.Config, ds config.DataSource, n int) ([]*node, error) {
	noop := cron.Job("noop", func(context.Context, cron.Execution) error { return nil })
	out := make([]*node, n)
	for i := range out {
		d, err := db.Open(ctx, config.PrimaryDataSource, ds)
		if err != nil {
			return nil, err
		}
		s, err := cron.New(app.Platform{Config: cfg, DB: d, Clock: time.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			cron.Options{Jobs: []cron.JobHandler{noop}, NodeID: fmt.Sprintf("node-%d", i)})
		if err != nil {
			return nil, err
		}
		out[i] = &node{svc: s, db: d}
	}
	return out, nil
}

// report prints fires/s and the lag percentiles of the runs whose logical time lies in
// [from, to).
func report(ctx context.Context, s *cron.Service, o options, from, to time.Time) error {
	runs, err := s.Runs(ctx, "")
	if err != nil {
		return err
	}
	var lags []time.Duration
	statuses := map[cron.Status]int{}
	for _, r := range runs {
		if r.ScheduledAt.Before(from) || !r.ScheduledAt.Before(to) {
			continue
		}
		statuses[r.Status]++
		if r.Status == cron.StatusSucceeded {
			lags = append(lags, r.StartedAt.Sub(r.ScheduledAt))
		}
	}
	if len(lags) == 0 {
		return fmt.Errorf("no run in the measured window [%s, %s) (statuses %v, %d runs in all)", from, to, statuses, len(runs))
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	fmt.Printf("db=%s nodes=%d schedules=%d (offered %d fires/s) batch=%d max_concurrent=%d window=%s\n",
		o.kind, o.nodes, o.schedules, o.schedules, o.batch, o.maxConcurrent, o.measure)
	fmt.Printf("fires/s=%.0f runs=%d statuses=%v lag p50=%s p99=%s max=%s\n",
		float64(len(lags))/o.measure.Seconds(), len(lags), statuses, pct(0.50), pct(0.99), lags[len(lags)-1])
	return nil
}

// dataSource is a fresh database of kind: a temporary SQLite file, or a new PostgreSQL schema
// or MySQL database on the test servers, dropped at the end.
func dataSource(ctx context.Context, kind string) (config.DataSource, func(), error) {
	switch kind {
	case "sqlite":
		dir, err := os.MkdirTemp("", "svc-bench-cron")
		if err != nil {
			return config.DataSource{}, nil, err
		}
		return config.DataSource{Type: config.SQLite, Path: filepath.Join(dir, "cron.db")}, func() { _ = os.RemoveAll(dir) }, nil
	case "postgres":
		return postgresDataSource(ctx, os.Getenv("SVC_TEST_POSTGRES_DSN"))
	}
	return config.DataSource{}, nil, fmt.Errorf("unknown -db %q", kind)
}

// postgresDataSource isolates the benchmark in a new PostgreSQL schema.
func postgresDataSource(ctx context.Context, dsn string) (config.DataSource, func(), error) {
	if dsn == "" {
		return config.DataSource{}, nil, fmt.Errorf("set SVC_TEST_POSTGRES_DSN (scripts/services.sh)")
	}
	ds, err := parseDSN(dsn)
	if err != nil {
		return config.DataSource{}, nil, err
	}
	admin, err := db.Open(ctx, config.PrimaryDataSource, ds)
	if err != nil {
		return config.DataSource{}, nil, err
	}
	name := fmt.Sprintf("bench_cron_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close()
		return config.DataSource{}, nil, err
	}
	ds.Schema = name
	return ds, func() { _, _ = admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); admin.Close() }, nil
}

// parseDSN reads the URL of SVC_TEST_POSTGRES_DSN.
func parseDSN(dsn string) (config.DataSource, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return config.DataSource{}, err
	}
	ds := config.DataSource{Type: config.Postgres, Host: u.Hostname(), User: u.User.Username(), Database: strings.TrimPrefix(u.Path, "/")}
	ds.Password, _ = u.User.Password()
	if q := u.Query().Get("sslmode"); q != "" {
		ds.SSLMode = config.SSLMode(q)
	}
	port, err := strconv.ParseUint(u.Port(), 10, 16)
	ds.Port = uint16(port)
	return ds, err
}
