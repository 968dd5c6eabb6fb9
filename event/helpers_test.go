package event

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// testEvent is the payload the tests publish.
type testEvent struct {
	N    int    `json:"n"`
	Name string `json:"name,omitempty"`
}

func (testEvent) EventType() string { return "svc.test.happened" }

// otherEvent has a second type.
type otherEvent struct{ N int }

func (otherEvent) EventType() string { return "svc.other.happened" }

// newFakeClock is the shared fake clock (internal/testservice; svctest cannot be imported here:
// it boots the server, which imports this package).
func newFakeClock() *testservice.Clock {
	return testservice.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
}

// defaultConfig is svc.event with every default applied.
func defaultConfig() config.Event { return config.Default().Event }

// TestTransports are the transport factories of the tests' buses (withTransports). The
// transports import this package, so its own test files cannot import them: the external test
// file transports_test.go sets this in TestMain, before any test runs.
var TestTransports map[string]Factory

// withTransports is deps with the factories of every transport, unless it has factories.
func withTransports(deps Deps) Deps {
	if deps.Transports == nil {
		deps.Transports = TestTransports
	}
	return deps
}

// newBus builds a bus with every transport's factory and stops it when the test ends (not
// started).
func newBus(t testing.TB, cfg config.Event, deps Deps) *Bus {
	t.Helper()
	b, err := New(cfg, withTransports(deps))
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

// start starts b.
func start(t testing.TB, b *Bus) {
	t.Helper()
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// migratedDB opens a database of kind with the event tables.
func migratedDB(t testing.TB, kind config.DBKind) *db.DB {
	t.Helper()
	d := testservice.OpenDB(t, testservice.DataSource(t, kind))
	ctx, cancel := context.WithTimeout(context.Background(), testservice.Timeout)
	defer cancel()
	if err := db.Migrate(ctx, d, *Migrations()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// eachDB runs fn on SQLite, PostgreSQL and MySQL/MariaDB.
func eachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) { fn(t, migratedDB(t, kind)) })
	}
}

// recorder collects deliveries.
type recorder struct {
	mu   sync.Mutex
	envs []*Envelope
	ids  map[string]int
}

func newRecorder() *recorder { return &recorder{ids: map[string]int{}} }

func (r *recorder) handle(_ context.Context, env *Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.envs = append(r.envs, env)
	r.ids[env.ID]++
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.envs)
}

// eventually is testservice.Eventually (svctest's polling helper, importable from here).
var eventually = testservice.Eventually

// outboxConfig routes svc.* to the outbox with the memory sink (as in event/outbox's tests).
func outboxConfig() config.Event {
	cfg := defaultConfig()
	cfg.Transports.Outbox.Enabled = true
	cfg.Transports.Outbox.MaxRetries = 3
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"outbox", "memory"}}}
	return cfg
}
