package outbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/svc-framework/svc/event"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/uptrace/bun"
)

// switchSink is a sink transport whose publishes fail while failing is set (per event type) and
// otherwise record the envelope.
type switchSink struct {
	mu      sync.Mutex
	failing map[string]bool
	got     []*event.Envelope
}

func (s *switchSink) Capabilities() event.Capabilities    { return event.Capabilities{} }
func (s *switchSink) Subscribe(*event.Subscription) error { return nil }
func (s *switchSink) Unsubscribe(*event.Subscription)     {}
func (s *switchSink) Start(context.Context) error         { return nil }
func (s *switchSink) Stop(context.Context) error          { return nil }
func (s *switchSink) Workers() []event.Worker             { return nil }
func (s *switchSink) setFailing(typ string, on bool)      { s.mu.Lock(); s.failing[typ] = on; s.mu.Unlock() }
func (s *switchSink) Publish(_ context.Context, env *event.Envelope) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing[env.Type] {
		return fmt.Errorf("sink down: dial tcp 10.0.0.7:6379: password=hunter2 Authorization: Bearer abc.def")
	}
	s.got = append(s.got, env)
	return nil
}

func (s *switchSink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.got) }

// outboxConfig routes svc.* to the outbox with the memory sink.
func outboxConfig() config.Event {
	cfg := defaultConfig()
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.MaxRetries = 3
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "memory"}}}
	return cfg
}

// outboxBus is a bus on d whose relay is driven by hand (startBus: its workers do not run), with
// a fake clock.
func outboxBus(t *testing.T, d *db.DB, cfg config.Event, clock *testservice.Clock) *event.Bus {
	t.Helper()
	return newBus(t, cfg, event.Deps{DB: d, Clock: clock.Now, AppName: "test"})
}

// sinkBus is a started outboxBus whose relay forwards to a switchSink, returned with it.
func sinkBus(t *testing.T, d *db.DB, cfg config.Event, clock *testservice.Clock) (*event.Bus, *switchSink) {
	t.Helper()
	b := outboxBus(t, d, cfg, clock)
	sink := &switchSink{failing: map[string]bool{}}
	outboxOf(b).sink = sink
	startBus(t, b)
	return b, sink
}

// rowOf reads the outbox row of one event.
func rowOf(t *testing.T, d *db.DB, eventID string) event.OutboxRow {
	t.Helper()
	var r event.OutboxRow
	if err := d.NewSelect().Model(&r).Where("event_id = ?", eventID).Scan(context.Background()); err != nil {
		t.Fatalf("read outbox row %s: %v", eventID, err)
	}
	return r
}

func countRows(t *testing.T, d *db.DB, model any) int {
	t.Helper()
	n, err := d.NewSelect().Model(model).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// publishTx publishes evt through the outbox in a committed transaction and returns its id.
func publishTx(t *testing.T, b *event.Bus, d *db.DB, evt event.Event) string {
	t.Helper()
	var id string
	err := b.RunInTx(context.Background(), d, func(ctx context.Context, tx bun.Tx) error {
		return b.Publish(ctx, evt, event.InTx(tx), event.WithHeaders(map[string]string{"x": "y"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.NewSelect().Model((*event.OutboxRow)(nil)).Column("event_id").OrderExpr("created_at DESC, id DESC").Limit(1).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestOutboxStates walks the outbox state machine on each database: pending → processing →
// completed; failed → retried after 2^n s → dead through the DLQ; DLQ failure keeps it failed
// with the old count; rollback writes nothing; the loop guard; cleanup.
func TestOutboxStates(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		cfg := outboxConfig()
		cfg.Routing = append(cfg.Routing, config.EventRoute{Pattern: "svc-dlq.*", Transports: []string{"outbox", "memory"}})
		b, sink := sinkBus(t, d, cfg, clock)

		// rollback: nothing written
		_ = b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
			if err := b.Publish(ctx, testEvent{N: 0}, event.InTx(tx)); err != nil {
				t.Fatal(err)
			}
			return errors.New("rollback")
		})
		if n := countRows(t, d, (*event.OutboxRow)(nil)); n != 0 {
			t.Fatalf("rows after rollback = %d, want 0", n)
		}

		// pending → completed
		id := publishTx(t, b, d, testEvent{N: 1})
		if r := rowOf(t, d, id); r.Status != event.OutboxPending || r.Source != "test" || !strings.Contains(r.Payload, `"n"`) || r.Headers == "" {
			t.Fatalf("row = %+v, want pending with payload and headers", r)
		}
		if n, err := outboxOf(b).RelayOnce(ctx); err != nil || n != 1 {
			t.Fatalf("RelayOnce = %d, %v", n, err)
		}
		if r := rowOf(t, d, id); r.Status != event.OutboxCompleted || r.ProcessedAt.IsZero() || !r.RetryAfter.IsZero() {
			t.Errorf("row = %+v, want completed", r)
		}
		if sink.count() != 1 || sink.got[0].ID != id || sink.got[0].Headers["x"] != "y" {
			t.Fatalf("sink got %d, want the event with its id and headers", sink.count())
		}
		if p := sink.got[0].Payload.(event.RawPayload); string(p.Body) == "" || p.Type != "svc.test.happened" {
			t.Errorf("payload = %+v", p)
		}

		// failed → backoff → retried → dead (max_retries 3)
		sink.setFailing("svc.test.happened", true)
		id = publishTx(t, b, d, testEvent{N: 2})
		for attempt := 1; attempt <= 2; attempt++ {
			if n, _ := outboxOf(b).RelayOnce(ctx); n != 1 {
				t.Fatalf("attempt %d claimed %d", attempt, n)
			}
			r := rowOf(t, d, id)
			wantAfter := event.DBTime(clock.Now().Add(time.Duration(1<<attempt) * time.Second))
			if r.Status != event.OutboxFailed || r.RetryCount != attempt || !r.RetryAfter.Equal(wantAfter) {
				t.Fatalf("after attempt %d: %+v, want failed, count %d, retry_after %v", attempt, r, attempt, wantAfter)
			}
			if strings.Contains(r.LastError, "hunter2") || strings.Contains(r.LastError, "10.0.0.7") || strings.Contains(r.LastError, "abc.def") {
				t.Errorf("last_error not redacted: %q", r.LastError)
			}
			if n, _ := outboxOf(b).RelayOnce(ctx); n != 0 {
				t.Fatalf("claimed %d before retry_after", n)
			}
			clock.Advance(time.Duration(1<<attempt) * time.Second)
		}
		// third failure reaches max_retries: the DLQ forward fails too → stays failed, old count
		sink.setFailing(event.DeadLetterPrefix+"svc.test.happened", true)
		_, _ = outboxOf(b).RelayOnce(ctx)
		if r := rowOf(t, d, id); r.Status != event.OutboxFailed || r.RetryCount != 2 {
			t.Fatalf("after failed DLQ: %+v, want failed with count 2", r)
		}
		clock.Advance(time.Hour)
		sink.setFailing(event.DeadLetterPrefix+"svc.test.happened", false)
		_, _ = outboxOf(b).RelayOnce(ctx)
		r := rowOf(t, d, id)
		if r.Status != event.OutboxDead || r.RetryCount != 3 || r.ProcessedAt.IsZero() {
			t.Fatalf("after DLQ: %+v, want dead with count 3", r)
		}
		if m := b.Metrics().Snapshot(); m.Relayed != 1 || m.RelayFailures != 4 || m.DeadLettered != 1 {
			t.Errorf("metrics = %+v, want 1 relayed, 4 failures, 1 dead-lettered", m)
		}
		dlq := sink.got[len(sink.got)-1]
		if dlq.Type != "svc-dlq.svc.test.happened" || dlq.Headers[event.HeaderDeadLetter] != "1" || dlq.ID != id {
			t.Errorf("DLQ envelope = %+v", dlq)
		}

		// the loop guard: a dead-lettered event cannot enter the outbox again
		err := b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
			return b.Publish(ctx, event.RawPayload{Type: dlq.Type, Body: []byte(`{}`)}, event.InTx(tx), event.WithHeaders(dlq.Headers))
		})
		if !errors.Is(err, event.ErrDeadLetterLoop) {
			t.Errorf("republish of a DLQ event = %v, want ErrDeadLetterLoop", err)
		}

		// cleanup removes completed rows past completed_ttl and keeps dead ones
		clock.Advance(cfg.Transports.Outbox.CompletedTTL + time.Hour)
		if n, err := outboxOf(b).Cleanup(ctx); err != nil || n != 1 {
			t.Errorf("Cleanup = %d, %v, want 1", n, err)
		}
		if n := countRows(t, d, (*event.OutboxRow)(nil)); n != 1 {
			t.Errorf("rows after cleanup = %d, want the dead one", n)
		}
	})
}

// TestOutboxLeaseTakeover: rows claimed by a relay that then crashed are taken over by another
// relay once their lease expires, not before.
func TestOutboxLeaseTakeover(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		crashed := outboxBus(t, d, outboxConfig(), clock)
		startBus(t, crashed)
		for i := range 3 {
			publishTx(t, crashed, d, testEvent{N: i})
		}
		rows, err := outboxOf(crashed).claim(ctx) // claimed, never forwarded
		if err != nil || len(rows) != 3 {
			t.Fatalf("claim = %d, %v", len(rows), err)
		}
		other, sink := sinkBus(t, d, outboxConfig(), clock)
		if n, _ := outboxOf(other).RelayOnce(ctx); n != 0 {
			t.Fatalf("claimed %d rows under a live lease", n)
		}
		clock.Advance(outboxOf(other).lease() + time.Second)
		if n, err := outboxOf(other).RelayOnce(ctx); n != 3 || err != nil {
			t.Fatalf("takeover claimed %d, %v, want 3", n, err)
		}
		if sink.count() != 3 {
			t.Errorf("sink got %d, want 3", sink.count())
		}
	})
}

// TestOutboxWake: with a relay interval of an hour, a commit wakes the local relay at once, and
// the event reaches a memory subscriber of the sink.
func TestOutboxWake(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		cfg := outboxConfig()
		cfg.Transports.Outbox.RelayInterval = time.Hour
		b, rec := recordedBus(t, cfg, event.Deps{DB: d})
		publishTx(t, b, d, testEvent{N: 1})
		// a plain publish on an outbox route writes the row in its own transaction, not to the
		// sink directly
		if err := b.Publish(context.Background(), testEvent{N: 2}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() bool { return rec.Count() == 2 }, "both events relayed without waiting for the interval")
		if rec.Duplicates() != 0 {
			t.Errorf("duplicates = %d", rec.Duplicates())
		}
	})
}

// TestCleanError: secrets and addresses are redacted, the text cut to 256 bytes on a rune
// boundary.
func TestCleanError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, bad string }{
		{"dial tcp 192.168.1.2:5432: refused", "192.168.1.2"},
		{`login failed: password=s3cret`, "s3cret"},
		{`{"password":"s3cret"}`, "s3cret"},
		{"Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"},
		{"got Bearer eyJhbGciOi.x.y", "eyJhbGciOi"},
		{"redis://user:pw@host/0", "pw@"},
		{"token=abc123&x=1", "abc123"},
	} {
		if got := cleanError(tt.in); strings.Contains(got, tt.bad) {
			t.Errorf("cleanError(%q) = %q, still contains %q", tt.in, got, tt.bad)
		}
	}
	long := strings.Repeat("é", 200)
	if got := cleanError(long); len(got) > maxLastError || !strings.HasPrefix(long, got) {
		t.Errorf("cut to %d bytes, valid prefix %v", len(got), strings.HasPrefix(long, got))
	}
}

// TestBackoff: 2^n seconds, capped at one hour.
func TestBackoff(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 3: 8 * time.Second, 11: 2048 * time.Second, 12: time.Hour, 40: time.Hour} {
		if got := backoff(n); got != want {
			t.Errorf("backoff(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestOutboxMemorySinkHandlerFailure: with the memory sink the relay runs the handler; its
// failure makes the row failed and the retry completes it.
func TestOutboxMemorySinkHandlerFailure(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.SQLite)
	clock := newFakeClock()
	b := outboxBus(t, d, outboxConfig(), clock)
	calls := 0
	_, _ = b.Subscribe("svc.test.happened", func(context.Context, *event.Envelope) error {
		calls++
		if calls == 1 {
			return errors.New("not yet")
		}
		return nil
	}, event.WithGroup("g"))
	startBus(t, b)
	id := publishTx(t, b, d, testEvent{N: 1})
	ctx := context.Background()
	_, _ = outboxOf(b).RelayOnce(ctx)
	if r := rowOf(t, d, id); r.Status != event.OutboxFailed || r.RetryCount != 1 || !strings.Contains(r.LastError, "not yet") {
		t.Fatalf("row = %+v, want failed after the handler error", r)
	}
	clock.Advance(2 * time.Second)
	_, _ = outboxOf(b).RelayOnce(ctx)
	if r := rowOf(t, d, id); r.Status != event.OutboxCompleted || calls != 2 {
		t.Errorf("row = %s after %d calls, want completed after 2", r.Status, calls)
	}
}

// TestOutboxStreamSink: the outbox relays to the kvstore_stream sink, whose group consumer
// handles the event.
func TestOutboxStreamSink(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	d := migratedDB(t, config.SQLite)
	cfg := streamConfig(prefix)
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.Sink = config.TransportKVStoreStream
	cfg.Transports.Outbox.RelayInterval = time.Hour
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "kvstore_stream"}}}
	b, rec := recordedBus(t, cfg, event.Deps{DB: d, Redis: rdb})
	id := publishTx(t, b, d, testEvent{N: 1})
	eventually(t, 10*time.Second, func() bool { return rec.Count() == 1 }, "relayed through the stream")
	if rec.Envs[0].ID != id {
		t.Errorf("delivered %s, want %s", rec.Envs[0].ID, id)
	}
	// the relay completes the row after the append, so the consumer may see the event first
	eventually(t, 10*time.Second, func() bool { return rowOf(t, d, id).Status == event.OutboxCompleted }, "row completed")
	if n, _ := rdb.XLen(context.Background(), prefix+"svc.test.happened").Result(); n != 1 {
		t.Errorf("stream length = %d, want 1 (no direct publish besides the relay)", n)
	}
}

// TestOutboxColumns: the RETURNING list of the PostgreSQL claim names every column of
// OutboxRow, in order, so a column added to the model is not silently left zero.
func TestOutboxColumns(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.SQLite)
	var names []string
	for _, f := range d.Dialect().Tables().Get(reflect.TypeFor[event.OutboxRow]()).Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ", "); got != outboxColumns {
		t.Errorf("OutboxRow columns %q, outboxColumns %q", got, outboxColumns)
	}
}

// TestRelaySession: on PostgreSQL the relay writes through a session with synchronous_commit
// off, and a dropped session's connection never returns to the pool with that setting.
func TestRelaySession(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.Postgres)
	d.SetMaxOpenConns(1) // the pool's only connection: a pooled session would be seen below
	b := newBus(t, outboxConfig(), event.Deps{DB: d})
	ctx := context.Background()
	setting := func(idb bun.IDB) string {
		var v string
		if err := idb.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	sess := &relaySession{o: outboxOf(b)}
	idb, err := sess.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := setting(idb); got != "off" {
		t.Errorf("relay session synchronous_commit = %s, want off", got)
	}
	if n, _, err := outboxOf(b).relayBatch(ctx, idb, nil); err != nil || n != 0 {
		t.Errorf("relayBatch on the session = %d, %v; want 0 rows, no error", n, err)
	}
	sess.drop()
	if got := setting(d); got != "on" {
		t.Errorf("pool synchronous_commit after drop = %s, want on (the session must not be pooled)", got)
	}
}

// outboxOf is the outbox transport of b.
func outboxOf(b *event.Bus) *Transport {
	t, _ := b.Transport(config.TransportOutbox)
	return t.(*Transport)
}
