package eventbench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/kvstream"
	"github.com/svc-framework/svc/event/memory"
	"github.com/svc-framework/svc/event/outbox"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/uptrace/bun"
)

// tick is the benchmark event.
type tick struct {
	N int `json:"n"`
}

func (tick) EventType() string { return "svc.bench.tick" }

// newBus builds a bus with the four transports; it is stopped when the benchmark ends.
func newBus(b *testing.B, cfg config.Event, deps event.Deps) *event.Bus {
	deps.Transports = map[string]event.Factory{config.TransportMemory: memory.New, config.TransportTxMemory: memory.NewTx,
		config.TransportOutbox: outbox.New, config.TransportKVStoreStream: kvstream.New}
	bus, err := event.New(cfg, deps)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bus.Stop(context.Background()) })
	return bus
}

// start starts bus and runs its workers (the outbox relay) on app.Workers, as the server does;
// the workers stop when the benchmark ends, before the bus.
func start(b *testing.B, bus *event.Bus) {
	if err := bus.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	var ws []app.Worker
	for _, w := range bus.Workers() {
		ws = append(ws, app.Worker{Name: w.Name, Interval: w.Interval, Run: w.Run})
	}
	workers := app.StartWorkers(context.Background(), slog.New(slog.DiscardHandler), ws)
	b.Cleanup(func() { _ = workers.Stop(context.Background()) })
}

// waitFor polls until n handler runs were counted.
func waitFor(b *testing.B, got *atomic.Int64, n int64) {
	deadline := time.Now().Add(5 * time.Minute)
	for got.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("handled %d of %d", got.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkMemory: one publisher, one subscription on the memory transport (block policy, so
// nothing is dropped); the clock stops when the handler saw the last event.
func BenchmarkMemory(b *testing.B) {
	cfg := config.Default().Event
	cfg.Transports.Memory.FullPolicy = config.FullPolicyBlock
	cfg.Transports.Memory.QueueSize = 4096
	bus := newBus(b, cfg, event.Deps{})
	var got atomic.Int64
	if _, err := bus.Subscribe("svc.bench.tick", func(context.Context, *event.Envelope) error { got.Add(1); return nil }); err != nil {
		b.Fatal(err)
	}
	start(b, bus)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := bus.Publish(ctx, tick{N: i}); err != nil {
			b.Fatal(err)
		}
	}
	waitFor(b, &got, int64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkOutboxPostgres: 16 publishers each commit one event per transaction on PostgreSQL;
// the relay (woken by the commits) delivers to a memory subscriber on the same node.
func BenchmarkOutboxPostgres(b *testing.B) { benchOutbox(b, config.Postgres, 1) }

// BenchmarkOutboxMySQL is BenchmarkOutboxPostgres on MariaDB/MySQL (for information).
func BenchmarkOutboxMySQL(b *testing.B) { benchOutbox(b, config.MySQL, 1) }

// BenchmarkOutboxSQLite is BenchmarkOutboxPostgres on SQLite (for information; one writer).
func BenchmarkOutboxSQLite(b *testing.B) { benchOutbox(b, config.SQLite, 1) }

// BenchmarkOutboxPostgresBatch10 (a PublishBatch figure, not the per-transaction target): 16
// publishers each commit ten events per transaction with PublishBatch; b.N counts events.
func BenchmarkOutboxPostgresBatch10(b *testing.B) { benchOutbox(b, config.Postgres, 10) }

// BenchmarkPostgresCommitCeiling is the ceiling the outbox figure is bounded by on this machine:
// 16 goroutines each commit one outbox-shaped row per transaction, with no bus and no relay,
// written by the same single-round-trip insert as the outbox's (no RETURNING).
func BenchmarkPostgresCommitCeiling(b *testing.B) { commitCeiling(b, config.Postgres) }

// BenchmarkSQLiteCommitCeiling is BenchmarkPostgresCommitCeiling on a SQLite file: the
// database's own single-row commit rate, the reference of BenchmarkOutboxSQLite.
func BenchmarkSQLiteCommitCeiling(b *testing.B) { commitCeiling(b, config.SQLite) }

// commitCeiling commits b.N outbox-shaped rows, one per transaction, from 16 goroutines.
func commitCeiling(b *testing.B, kind config.DBKind) {
	d := outboxDB(b, kind)
	b.ResetTimer()
	publishConcurrently(b, 16, func() error {
		return d.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
			now := time.Now().UTC()
			id := uuid.NewString()
			_, err := tx.NewInsert().Model(&event.OutboxRow{ID: id, CreatedAt: now, EventID: id, EventType: "svc.bench.tick",
				Source: "bench", Payload: `{"n":0}`, Status: event.OutboxCompleted, OccurredAt: now}).Returning("NULL").Exec(ctx)
			return err
		})
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// outboxDB is a fresh database of kind with the event tables.
func outboxDB(b *testing.B, kind config.DBKind) *db.DB {
	d := testservice.OpenDB(b, testservice.DataSource(b, kind))
	if err := db.Migrate(context.Background(), d, *event.Migrations()); err != nil {
		b.Fatal(err)
	}
	return d
}

// benchOutbox publishes b.N events on kind from 16 publishers, per transaction in batches of
// size perTx (the last one shorter), and reports events/s and the publish → handler latency.
func benchOutbox(b *testing.B, kind config.DBKind, perTx int) {
	d := outboxDB(b, kind)
	cfg := config.Default().Event
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.BatchSize = 500
	cfg.Transports.Outbox.RelayInterval = time.Second
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "memory"}}}
	bus := newBus(b, cfg, event.Deps{DB: d})
	var (
		got       atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration
	)
	_, err := bus.Subscribe("svc.bench.tick", func(_ context.Context, env *event.Envelope) error {
		lat := time.Since(env.PublishedAt)
		mu.Lock()
		latencies = append(latencies, lat)
		mu.Unlock()
		got.Add(1)
		return nil
	}, event.WithGroup("bench"))
	if err != nil {
		b.Fatal(err)
	}
	start(b, bus)
	batches := (b.N + perTx - 1) / perTx
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	publishN(b, 16, batches, func() error {
		n := min(int64(perTx), left.Add(-int64(perTx))+int64(perTx))
		evts := make([]event.Event, n)
		for i := range evts {
			evts[i] = tick{}
		}
		return bus.RunInTx(context.Background(), d, func(ctx context.Context, tx bun.Tx) error {
			return bus.PublishBatch(ctx, evts, event.InTx(tx))
		})
	})
	waitFor(b, &got, int64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	reportLatency(b, latencies)
}

// reportLatency adds p50 and p99 in milliseconds.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkStream: one publisher appends to the stream, one group with 8 readers consumes.
func BenchmarkStream(b *testing.B) {
	addr := testservice.Require(b, testservice.EnvRedisAddr)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
	prefix := fmt.Sprintf("svcbench:%s:", testservice.Suffix(6))
	b.Cleanup(func() {
		ctx := context.Background()
		for _, k := range rdb.Keys(ctx, prefix+"*").Val() {
			rdb.Del(ctx, k)
		}
		_ = rdb.Close()
	})
	cfg := config.Default().Event
	cfg.Transports.KVStoreStream.Enabled = true
	cfg.Transports.KVStoreStream.StreamPrefix = prefix
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"kvstore_stream"}}}
	bus := newBus(b, cfg, event.Deps{Redis: rdb})
	var got atomic.Int64
	if _, err := bus.Subscribe("svc.bench.tick", func(context.Context, *event.Envelope) error { got.Add(1); return nil },
		event.WithGroup("bench"), event.WithConcurrency(8)); err != nil {
		b.Fatal(err)
	}
	start(b, bus)
	b.ResetTimer()
	publishConcurrently(b, 8, func() error { return bus.Publish(context.Background(), tick{}) })
	waitFor(b, &got, int64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// publishConcurrently calls publish b.N times in total from n goroutines.
func publishConcurrently(b *testing.B, n int, publish func() error) { publishN(b, n, b.N, publish) }

// publishN calls publish total times from n goroutines.
func publishN(b *testing.B, n, total int, publish func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(total) {
				if err := publish(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkOutboxRelayDrainPostgres measures the relay alone: b.N pending rows are written
// before the clock starts (one multi-row insert), then the bus starts and the clock stops when
// the memory subscriber handled them all.
func BenchmarkOutboxRelayDrainPostgres(b *testing.B) {
	d := outboxDB(b, config.Postgres)
	rows := make([]event.OutboxRow, b.N)
	now := time.Now().UTC()
	for i := range rows {
		id := uuid.NewString()
		rows[i] = event.OutboxRow{ID: id, CreatedAt: now, EventID: id, EventType: "svc.bench.tick", Source: "bench",
			Payload: `{"n":0}`, Status: event.OutboxPending, OccurredAt: now}
	}
	for chunk := range slices.Chunk(rows, 1000) {
		if _, err := d.NewInsert().Model(&chunk).Exec(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	cfg := config.Default().Event
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.BatchSize = 500
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "memory"}}}
	bus := newBus(b, cfg, event.Deps{DB: d})
	var got atomic.Int64
	if _, err := bus.Subscribe("svc.bench.tick", func(context.Context, *event.Envelope) error { got.Add(1); return nil },
		event.WithGroup("bench")); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start(b, bus)
	waitFor(b, &got, int64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
