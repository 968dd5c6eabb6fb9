package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/waitgroup"
	"github.com/svc-framework/svc/rpc"
)

// drainTimeout is how long Stop lets running handlers finish before canceling them
// (wire-runtime §1.8).
const drainTimeout = 30 * time.Second

// errShutdown is the cause of the run contexts canceled at shutdown.
var errShutdown = errors.New("canceled by shutdown")

// Options are what host code plugs into the module. Every field is optional.
type Options struct {
	// Jobs are this node's job handlers; a node claims only schedules of jobs it has.
	Jobs []JobHandler
	// NodeID names this node in crn_run.node_id; default "<hostname>-<random>".
	NodeID string
	// Events receives svc.cron.run.failed and svc.cron.run.abandoned; nil publishes them on the
	// server's event bus (app.Platform.Events, BusPublisher), or drops them when there is none.
	Events Publisher
	// Builtins adds the built-in jobs http.request (bounded by svc.cron.store.http_allowed_hosts)
	// and event.publish (on the server's event bus) to Jobs. The ready binary (cmd/svc) sets it;
	// library hosts opt in, since http.request lets whoever manages schedules make the server
	// call URLs.
	Builtins bool
}

// Service is the cron store at run time: the engine that claims and runs schedules, and the
// handlers of sys/cron/schedule and sys/cron/run.
type Service struct {
	cfg    config.CronStore
	db     *db.DB
	clock  func() time.Time
	log    *slog.Logger
	jobs   *Registry
	nodeID string
	events Publisher
	// metrics are the Prometheus series of issue #19.
	metrics *metrics
	// wire formats the date-time strings of the older wire shape in the server's zone.
	wire wireTimes

	// runCtx is the parent of every run's context, canceled with errShutdown when the drain
	// ends. It is the one context kept in a struct, on purpose: runs outlive the Claim call
	// that starts them, so they cannot inherit its ctx, and they must end only at shutdown.
	runCtx    context.Context
	cancelRun context.CancelCauseFunc

	wake chan struct{} // one pending wake-up of the claim loop
	// journalSlots bounds concurrent outcome writes (journalWriters).
	journalSlots chan struct{}

	mu       sync.Mutex
	inflight map[string]struct{} // run ids this node executes (heartbeats)
	stopping bool
	wg       sync.WaitGroup
}

// New builds the cron store from the server's dependencies (svc.cron.store, the primary
// database, clock and logger) and the host's job handlers. It does no I/O. Duplicate or empty
// job names fail (wire-runtime §1.1).
func New(deps app.Platform, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil {
		return nil, errors.New("cron: the configuration and the primary database are required")
	}
	handlers := opts.Jobs
	if opts.Builtins {
		policy, err := NewHostPolicy(deps.Config.Cron.Store.HTTPAllowedHosts)
		if err != nil {
			return nil, err
		}
		handlers = append(slices.Clip(handlers), HTTPRequestJob(policy), EventPublishJob(deps.Events))
	}
	jobs, err := NewRegistry(handlers...)
	if err != nil {
		return nil, err
	}
	if opts.Events == nil && deps.Events != nil {
		opts.Events = BusPublisher(deps.Events)
	}
	node := opts.NodeID
	if node == "" {
		host, _ := os.Hostname()
		node = fmt.Sprintf("%s-%s", host, rpc.NewID()[24:])
	}
	m, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Service{
		cfg: deps.Config.Cron.Store, db: deps.DB, clock: deps.Clock, jobs: jobs, nodeID: node, events: opts.Events, metrics: m,
		log:    deps.Logger.With(slog.String("module", "cron"), slog.String("node", node)),
		runCtx: ctx, cancelRun: cancel, inflight: map[string]struct{}{}, wake: make(chan struct{}, 1), journalSlots: make(chan struct{}, journalWriters), wire: wireTimes{loc: time.Local},
	}, nil
}

// Module lists what the module adds to the server: the sys/cron resources (without operations
// while svc.cron.store.enabled is false), the migrations, and the claim, heartbeat and recovery
// workers, plus the hourly pruner when run_retention is set. Start seeds the default schedules
// of the handlers.
func (s *Service) Module() app.Module {
	m := app.Module{
		Name:        "cron",
		Resources:   []rpc.Resource{s.ScheduleResource(), s.RunResource()},
		Messages:    Messages(),
		Migrations:  Migrations(),
		AutoMigrate: s.cfg.Enabled && s.cfg.AutoMigrate,
	}
	if !s.cfg.Enabled {
		m.Start = s.warnDisabled
		return m
	}
	m.Workers = []app.Worker{
		{Name: "cron-claim", Run: s.loop},
		{Name: "cron-heartbeat", Interval: s.cfg.HeartbeatInterval, Run: s.Heartbeat},
		{Name: "cron-recovery", Interval: min(s.cfg.AbandonedAfter/2, s.cfg.PollInterval), Run: s.Sweep},
	}
	if s.cfg.RunRetention > 0 {
		m.Workers = append(m.Workers, app.Worker{Name: "cron-prune", Interval: pruneInterval, Run: s.Prune})
	}
	m.Start = s.seed
	m.Stop = s.Stop
	return m
}

// Jobs returns this node's job registry.
func (s *Service) Jobs() *Registry { return s.jobs }

// NodeID returns the name of this node in the journal.
func (s *Service) NodeID() string { return s.nodeID }

// warnDisabled logs that registered handlers will not run while the store is off.
func (s *Service) warnDisabled(ctx context.Context) error {
	if len(s.jobs.Names()) > 0 {
		s.log.WarnContext(ctx, "cron job handlers are registered but svc.cron.store.enabled is false: they will not run",
			slog.Int("jobs", len(s.jobs.Names())))
	}
	return nil
}

// Stop ends the engine (wire-runtime §1.8): no further claims, running handlers get the drain
// time (30 s, or until ctx ends) to finish, stragglers are canceled and journaled canceled.
func (s *Service) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	drain, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	if waitgroup.Wait(drain, &s.wg) == nil {
		return nil
	}
	s.cancelRun(errShutdown)
	if err := waitgroup.Wait(ctx, &s.wg); err != nil {
		return fmt.Errorf("cron: runs did not finish at shutdown: %w", err)
	}
	return nil
}

// Wait blocks until every run this node started has been journaled, or ctx ends (tests and
// operators).
func (s *Service) Wait(ctx context.Context) error {
	return waitgroup.Wait(ctx, &s.wg)
}
