package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/internal/eventtest"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/uptrace/bun"
)

// Environment of the crash child: the test binary re-executed, run as the child by TestMain.
const (
	envCrashMode   = "SVC_EVENT_CRASH_MODE"   // relay | stream | rollback
	envCrashDS     = "SVC_EVENT_CRASH_DS"     // JSON config.DataSource
	envCrashDir    = "SVC_EVENT_CRASH_DIR"    // where the child writes its "blocked" marker
	envCrashBlock  = "SVC_EVENT_CRASH_BLOCK"  // the event N whose handler blocks forever
	envCrashPrefix = "SVC_EVENT_CRASH_PREFIX" // stream prefix
)

// handledEvent records one handler run durably, so runs are counted across processes.
type handledEvent struct {
	bun.BaseModel `bun:"table:crash_handled"`
	ID            string `bun:"id,pk"`
	EventID       string `bun:"event_id"`
}

// crashConfig is the bus configuration of both the child and the restarted node: short leases,
// intervals and backoff so recovery happens in seconds of real time.
func crashConfig(mode, prefix string) config.Event {
	cfg := defaultConfig()
	cfg.Middleware.Inbox = true
	cfg.Inbox.ProcessingLease = time.Second
	o := &cfg.Transports.Outbox
	o.Enabled, o.RelayInterval, o.MinLease, o.LeaseMultiplier, o.BatchSize = true, 50*time.Millisecond, 300*time.Millisecond, 1, 20
	cfg.Transports.TxMemory.Enabled = true
	switch mode {
	case "stream":
		k := &cfg.Transports.KVStoreStream
		k.Enabled, k.StreamPrefix, k.BlockTimeout = true, prefix, 100*time.Millisecond
		k.ClaimIdle, k.ClaimInterval, k.HandlerTimeout = 300*time.Millisecond, 100*time.Millisecond, 200*time.Millisecond
		cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"kvstore_stream"}}}
	case "rollback":
		cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "tx_memory", "memory"}}}
	default:
		cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "memory"}}}
	}
	return cfg
}

// recordingHandler inserts a crash_handled row per run; at event N == block it writes the marker
// and blocks forever (the parent kills the process there).
func recordingHandler(d *db.DB, block int, marker string) func(context.Context, *event.Envelope, testEvent) error {
	return func(ctx context.Context, env *event.Envelope, e testEvent) error {
		if e.N == block {
			_ = os.WriteFile(marker, []byte(env.ID), 0o600)
			select {}
		}
		_, err := d.NewInsert().Model(&handledEvent{ID: uuid.NewString(), EventID: env.ID}).Exec(context.WithoutCancel(ctx))
		return err
	}
}

// TestMain runs the crash child instead of the tests when the crash tests re-execute this test
// binary with envCrashMode set (see runChild).
func TestMain(m *testing.M) {
	if mode := os.Getenv(envCrashMode); mode != "" {
		if err := crashChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// crashChild is the child process of the crash tests: it starts a bus in mode and blocks until
// the parent kills it; it returns only on a set-up error.
func crashChild(mode string) error {
	var ds config.DataSource
	if err := json.Unmarshal([]byte(os.Getenv(envCrashDS)), &ds); err != nil {
		return err
	}
	d, err := db.Open(context.Background(), "primary", ds)
	if err != nil {
		return err
	}
	var rdb *redis.Client
	if mode == "stream" {
		rdb = redis.NewClient(&redis.Options{Addr: os.Getenv(testservice.EnvRedisAddr)})
	}
	b, err := event.New(crashConfig(mode, os.Getenv(envCrashPrefix)), event.Deps{DB: d, Redis: rdb, Transports: transports})
	if err != nil {
		return err
	}
	var block int
	_, _ = fmt.Sscan(os.Getenv(envCrashBlock), &block)
	marker := filepath.Join(os.Getenv(envCrashDir), "blocked")
	if _, err := event.SubscribeTyped(b, recordingHandler(d, block, marker), event.WithGroup("g")); err != nil {
		return err
	}
	if err := b.Start(context.Background()); err != nil {
		return err
	}
	eventtest.StartWorkers(b) // the relay and the reaper, as on a server
	if mode == "rollback" {
		_ = b.RunInTx(context.Background(), d, func(ctx context.Context, tx bun.Tx) error {
			if err := b.Publish(ctx, testEvent{N: 1}, event.InTx(tx)); err != nil {
				return err
			}
			_ = os.WriteFile(marker, []byte("in tx"), 0o600)
			select {} // killed before the commit
		})
	}
	select {} // killed by the parent
}

// runChild starts the child in mode and kills it with SIGKILL once it wrote its marker.
func runChild(t *testing.T, mode string, ds config.DataSource, prefix string, block int) {
	t.Helper()
	dir := t.TempDir()
	dsJSON, _ := json.Marshal(ds)
	cmd := exec.Command(os.Args[0]) // TestMain turns it into the crash child
	cmd.Env = testservice.ChildEnv(envCrashMode+"="+mode, envCrashDS+"="+string(dsJSON), envCrashDir+"="+dir,
		envCrashBlock+"="+fmt.Sprint(block), envCrashPrefix+"="+prefix)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "blocked")
	eventually(t, 60*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }, "child reached its crash point: "+out.String())
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// syncBuffer collects the child's output.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return string(s.b) }

// crashDB is a data source with the event tables and crash_handled.
func crashDB(t *testing.T, kind config.DBKind) (config.DataSource, *db.DB) {
	ds := testservice.DataSource(t, kind)
	d := testservice.OpenDB(t, ds)
	ctx := context.Background()
	if err := db.Migrate(ctx, d, *event.Migrations()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewCreateTable().Model((*handledEvent)(nil)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return ds, d
}

// handledCounts returns how often each event id was handled.
func handledCounts(t *testing.T, d *db.DB) map[string]int {
	var rows []handledEvent
	if err := d.NewSelect().Model(&rows).Scan(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.EventID]++
	}
	return out
}

// restartAndCheck starts a fresh node on d, waits until all ids were handled and checks that each
// was handled exactly once.
func restartAndCheck(t *testing.T, cfg config.Event, deps event.Deps, ids []string) {
	t.Helper()
	b := newBus(t, cfg, deps)
	if _, err := event.SubscribeTyped(b, recordingHandler(deps.DB, -1, ""), event.WithGroup("g")); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	eventually(t, 60*time.Second, func() bool { return len(handledCounts(t, deps.DB)) == len(ids) }, "every committed event handled after the restart")
	counts := handledCounts(t, deps.DB)
	for _, id := range ids {
		if counts[id] != 1 {
			t.Errorf("event %s handled %d times, want 1", id, counts[id])
		}
	}
}

// TestCrashOutboxRelay (a): the relaying process is killed by SIGKILL inside a handler in the
// middle of a relay batch; after a restart every committed event reaches its subscriber once.
func TestCrashOutboxRelay(t *testing.T) {
	t.Parallel()
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			ds, d := crashDB(t, kind)
			cfg := crashConfig("relay", "")
			ids := publishCommitted(t, cfg, event.Deps{DB: d}, d, 60)
			runChild(t, "relay", ds, "", 30)
			var processing int
			_ = d.NewSelect().Model((*event.OutboxRow)(nil)).ColumnExpr("count(*)").Where("status = ?", event.OutboxProcessing).Scan(context.Background(), &processing)
			if processing == 0 {
				t.Errorf("no row was mid-batch at the kill")
			}
			restartAndCheck(t, cfg, event.Deps{DB: d}, ids)
		})
	}
}

// publishCommitted commits n outbox events (N = 0…n-1) from a node without a relay (its workers
// do not run) and returns their ids in order.
func publishCommitted(t *testing.T, cfg config.Event, deps event.Deps, d *db.DB, n int) []string {
	t.Helper()
	b := newBus(t, cfg, deps)
	startBus(t, b)
	var ids []string
	for i := range n {
		ids = append(ids, publishTx(t, b, d, testEvent{N: i}))
	}
	return ids
}

// TestCrashStreamConsumer (b): a stream consumer is killed by SIGKILL inside a handler; another
// process's reaper claims the entry, it is handled once (inbox), nothing is lost.
func TestCrashStreamConsumer(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	ds, d := crashDB(t, config.SQLite)
	cfg := crashConfig("stream", prefix)
	deps := event.Deps{DB: d, Redis: rdb}
	pub := newBus(t, cfg, deps)
	start(t, pub)
	// the group exists before publishing, so the child reads every entry
	if err := rdb.XGroupCreateMkStream(context.Background(), prefix+"svc.test.happened", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 40 {
		if err := pub.Publish(context.Background(), testEvent{N: i}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, lastStreamID(t, rdb, prefix))
	}
	runChild(t, "stream", ds, prefix, 20)
	p, err := rdb.XPending(context.Background(), prefix+"svc.test.happened", "g").Result()
	if err != nil || p.Count == 0 {
		t.Fatalf("pending after the kill = %+v, %v, want the entry held by the dead consumer", p, err)
	}
	restartAndCheck(t, cfg, deps, ids)
}

// lastStreamID reads the event id of the newest entry of the test stream.
func lastStreamID(t *testing.T, rdb *redis.Client, prefix string) string {
	t.Helper()
	msgs, err := rdb.XRevRangeN(context.Background(), prefix+"svc.test.happened", "+", "-", 1).Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("XREVRANGE = %v, %v", msgs, err)
	}
	var f struct{ ID string } // the frame's event id (kvstream's frame format)
	if err := json.Unmarshal([]byte(msgs[0].Values["frame"].(string)), &f); err != nil || f.ID == "" {
		t.Fatalf("frame %v: %v", msgs[0].Values, err)
	}
	return f.ID
}

// TestCrashRollback (c): a process killed inside its transaction, after publishing to the outbox
// and tx_memory, delivers nothing: no outbox row survives and a restarted node handles nothing.
func TestCrashRollback(t *testing.T) {
	t.Parallel()
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			ds, d := crashDB(t, kind)
			runChild(t, "rollback", ds, "", -1)
			b := newBus(t, crashConfig("rollback", ""), event.Deps{DB: d})
			rec := newRecorder()
			_, _ = b.Subscribe("svc.test.happened", rec.Handle, event.WithGroup("g"))
			stop := start(t, b)
			// a committed marker relayed after the restart proves the relay ran
			if err := b.Publish(context.Background(), testEvent{N: 2}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, func() bool { return rec.Count() >= 1 }, "marker relayed")
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for _, env := range rec.Envs {
				p, _ := env.Payload.(testEvent) // in-process, or relayed as JSON
				if raw, ok := env.Payload.(event.RawPayload); ok {
					_ = json.Unmarshal(raw.Body, &p)
				}
				if p.N == 1 {
					t.Errorf("the rolled-back event was delivered")
				}
			}
			if n := countRows(t, d, (*event.OutboxRow)(nil)); n != 1 {
				t.Errorf("outbox rows = %d, want only the marker", n)
			}
			if c := handledCounts(t, d); len(c) != 0 {
				t.Errorf("crash_handled = %v, want empty", c)
			}
		})
	}
}
