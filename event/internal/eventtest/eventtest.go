// Package eventtest holds the test helpers that the tests of the transport packages
// (event/memory, event/outbox, event/kvstream) share: a test event, bus set-up and teardown
// (with the bus's workers on app.Workers, or without), migrated databases on every dialect, a
// delivery recorder and the real Redis. A test package names the transports it links in a Transports
// value, whose NewBus and RecordedBus pass them in event.Deps.Transports (this package cannot
// import the transports: their tests import it). Package event's own tests
// cannot import it (it imports event) and keep their copies in event/helpers_test.go.
package eventtest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/internal/testservice"
)

// Event is the payload the tests publish (type svc.test.happened).
type Event struct {
	N    int    `json:"n"`
	Name string `json:"name,omitempty"`
}

// EventType returns svc.test.happened.
func (Event) EventType() string { return "svc.test.happened" }

// OtherEvent has a second type (svc.other.happened).
type OtherEvent struct{ N int }

// EventType returns svc.other.happened.
func (OtherEvent) EventType() string { return "svc.other.happened" }

// NewFakeClock is the shared fake clock at a fixed instant.
func NewFakeClock() *testservice.Clock {
	return testservice.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
}

// DefaultConfig is svc.event with every default applied.
func DefaultConfig() config.Event { return config.Default().Event }

// NewBus builds a bus and stops it when the test ends (not started). deps.Transports holds the
// factories of the transports cfg enables.
func NewBus(t testing.TB, cfg config.Event, deps event.Deps) *event.Bus {
	t.Helper()
	b, err := event.New(cfg, deps)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return b
}

// Transports are the transport factories a test package links (the transports' tests cannot
// share one list: each links the transports it uses). Its methods are NewBus and RecordedBus
// with these factories in event.Deps.Transports.
type Transports map[string]event.Factory

// NewBus is NewBus with ts as deps.Transports.
func (ts Transports) NewBus(t testing.TB, cfg config.Event, deps event.Deps) *event.Bus {
	t.Helper()
	deps.Transports = ts
	return NewBus(t, cfg, deps)
}

// RecordedBus is RecordedBus with ts as deps.Transports.
func (ts Transports) RecordedBus(t *testing.T, cfg config.Event, deps event.Deps) (*event.Bus, *Recorder) {
	t.Helper()
	deps.Transports = ts
	return RecordedBus(t, cfg, deps)
}

// Start starts b and runs its workers (Bus.Workers: relay, reaper, cleanups) on the server's
// worker runtime, app.Workers, as package svc does; they stop when the test ends, before the
// bus. stop stops the workers and then the bus earlier (a node that goes away).
func Start(t testing.TB, b *event.Bus) (stop func() error) {
	t.Helper()
	StartBus(t, b)
	workers := StartWorkers(b)
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(workers.Stop(ctx), b.Stop(ctx))
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return stop
}

// StartWorkers runs the workers of b on app.Workers (for a process without a testing.T: the
// crash child) and returns the runtime.
func StartWorkers(b *event.Bus) *app.Workers {
	ws := make([]app.Worker, 0, len(b.Workers()))
	for _, w := range b.Workers() {
		ws = append(ws, app.Worker{Name: w.Name, Interval: w.Interval, Run: w.Run})
	}
	return app.StartWorkers(context.Background(), slog.New(slog.DiscardHandler), ws)
}

// StartBus starts b without its workers: the test calls their bodies (RelayOnce, Reap,
// Cleanup) by hand.
func StartBus(t testing.TB, b *event.Bus) {
	t.Helper()
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// MigratedDB opens a database of kind with the event tables.
func MigratedDB(t testing.TB, kind config.DBKind) *db.DB {
	t.Helper()
	d := testservice.OpenDB(t, testservice.DataSource(t, kind))
	ctx, cancel := context.WithTimeout(context.Background(), testservice.Timeout)
	defer cancel()
	if err := db.Migrate(ctx, d, *event.Migrations()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// EachDB runs fn on SQLite, PostgreSQL and MySQL/MariaDB.
func EachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) { fn(t, MigratedDB(t, kind)) })
	}
}

// Recorder collects deliveries.
type Recorder struct {
	mu sync.Mutex
	// Envs are the deliveries in arrival order (read after the bus stopped, or under Count).
	Envs []*event.Envelope
	// IDs counts the deliveries per event id.
	IDs map[string]int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{IDs: map[string]int{}} }

// Handle is the recording handler.
func (r *Recorder) Handle(_ context.Context, env *event.Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Envs = append(r.Envs, env)
	r.IDs[env.ID]++
	return nil
}

// Count returns the number of deliveries.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Envs)
}

// Duplicates counts events delivered more than once.
func (r *Recorder) Duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.IDs {
		if c > 1 {
			n++
		}
	}
	return n
}

// Eventually is testservice.Eventually.
var Eventually = testservice.Eventually

// RecordedBus builds and starts a bus (with its workers, Start) whose recorder subscribes to svc.test.happened in group g.
func RecordedBus(t *testing.T, cfg config.Event, deps event.Deps) (*event.Bus, *Recorder) {
	t.Helper()
	b := NewBus(t, cfg, deps)
	rec := NewRecorder()
	if _, err := b.Subscribe("svc.test.happened", rec.Handle, event.WithGroup("g")); err != nil {
		t.Fatal(err)
	}
	Start(t, b)
	return b, rec
}

// Redis returns a client of the real Redis (SVC_TEST_REDIS_ADDR) and a stream prefix of the
// test's own; its keys are deleted when the test ends.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	addr := testservice.Require(t, testservice.EnvRedisAddr)
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	prefix := "svctest:event:" + testservice.Suffix(6) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		_ = rdb.Close()
	})
	return rdb, prefix
}

// StreamConfig routes svc.* to kvstore_stream under prefix with short timers; the reaper runs
// once an hour (the tests call Reap).
func StreamConfig(prefix string) config.Event {
	cfg := DefaultConfig()
	k := &cfg.Transports.KVStoreStream
	k.Enabled = true
	k.StreamPrefix = prefix
	k.BlockTimeout = 100 * time.Millisecond
	k.ClaimIdle = 50 * time.Millisecond
	k.ClaimInterval = time.Hour
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"kvstore_stream"}}}
	return cfg
}
