package event

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

type ctxKey struct{}

// TestPublishEnvelope: the envelope gets a UUIDv7 id, the type, the app name as source, the
// clock's times, the request id as correlation id, the headers and the original payload.
func TestPublishEnvelope(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := newBus(t, defaultConfig(), Deps{Clock: clock.Now, AppName: "shop",
		RequestID: func(ctx context.Context) string { s, _ := ctx.Value(ctxKey{}).(string); return s }})
	rec := newRecorder()
	if _, err := b.Subscribe("svc.test.happened", rec.handle); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	ctx := context.WithValue(context.Background(), ctxKey{}, "req-1")
	if err := b.Publish(ctx, testEvent{N: 1}, WithHeaders(map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	occurred := clock.Now().Add(-time.Hour)
	if err := b.Publish(ctx, testEvent{N: 2}, WithSource("other"), WithOccurredAt(occurred), WithCorrelationID("c-9")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return rec.count() == 2 }, "two deliveries")
	e1, e2 := rec.envs[0], rec.envs[1]
	if u, err := uuid.Parse(e1.ID); err != nil || u.Version() != 7 {
		t.Errorf("ID = %q, want a UUIDv7 (%v)", e1.ID, err)
	}
	if e1.ID == e2.ID {
		t.Errorf("two events share id %s", e1.ID)
	}
	if e1.Type != "svc.test.happened" || e1.Source != "shop" || e1.CorrelationID != "req-1" || e1.Headers["k"] != "v" {
		t.Errorf("envelope 1 = %+v", e1)
	}
	if !e1.OccurredAt.Equal(clock.Now()) || !e1.PublishedAt.Equal(clock.Now()) {
		t.Errorf("times = %v / %v, want %v", e1.OccurredAt, e1.PublishedAt, clock.Now())
	}
	if p, ok := e1.Payload.(testEvent); !ok || p.N != 1 {
		t.Errorf("payload = %#v, want the published value", e1.Payload)
	}
	if e2.Source != "other" || !e2.OccurredAt.Equal(occurred) || e2.CorrelationID != "c-9" {
		t.Errorf("envelope 2 = %+v", e2)
	}
}

// TestErrors: every sentinel of wire-runtime §2.1 that a call can return.
func TestErrors(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", MaxBodyBytes+1)
	tooMany := map[string]string{}
	for i := range MaxHeaders + 1 {
		tooMany[string(rune('a'+i%26))+strings.Repeat("k", i)] = "v"
	}
	withTx := func(c *config.Event) { c.Transports.TxMemory.Enabled = true }
	tests := []struct {
		name string
		cfg  func(*config.Event)
		run  func(b *Bus) error
		want error
	}{
		{"publish before start", nil, func(b *Bus) error { return b.Publish(context.Background(), testEvent{}) }, ErrBusNotStarted},
		{"start twice", nil, func(b *Bus) error { _ = b.Start(context.Background()); return b.Start(context.Background()) }, ErrBusAlreadyStarted},
		{"invalid type on publish", nil, started(func(b *Bus) error { return b.Publish(context.Background(), RawPayload{Type: "bad type!"}) }), ErrInvalidEventType},
		{"nil event", nil, started(func(b *Bus) error { return b.Publish(context.Background(), nil) }), ErrInvalidEventType},
		{"invalid type on subscribe", nil, func(b *Bus) error {
			_, err := b.Subscribe("a/b", func(context.Context, *Envelope) error { return nil })
			return err
		}, ErrInvalidEventType},
		{"too many headers", nil, started(func(b *Bus) error { return b.Publish(context.Background(), testEvent{}, WithHeaders(tooMany)) }), ErrPayloadTooLarge},
		{"header key too long", nil, started(func(b *Bus) error {
			return b.Publish(context.Background(), testEvent{}, WithHeaders(map[string]string{strings.Repeat("k", 129): ""}))
		}), ErrPayloadTooLarge},
		{"header value too long", nil, started(func(b *Bus) error {
			return b.Publish(context.Background(), testEvent{}, WithHeaders(map[string]string{"k": strings.Repeat("v", 1025)}))
		}), ErrPayloadTooLarge},
		{"body too large", nil, func(b *Bus) error {
			_, err := EncodeBody(&Envelope{Type: "t", Payload: testEvent{Name: big}})
			return err
		}, ErrPayloadTooLarge},
		{"tx and async", withTx, started(func(b *Bus) error { return b.Publish(context.Background(), testEvent{}, InTx(fakeIDB{}), Async()) }), ErrTxAsyncMutex},
		{"tx on a memory route", nil, started(func(b *Bus) error { return b.Publish(context.Background(), testEvent{}, InTx(fakeIDB{})) }), ErrTxRequired},
		{"tx_memory without scope", func(c *config.Event) { withTx(c); c.DefaultTransport = config.TransportTxMemory },
			started(func(b *Bus) error { return b.Publish(context.Background(), testEvent{}, InTx(fakeIDB{})) }), ErrTxScopeRequired},
		{"typed subscribe to an interface", nil, func(b *Bus) error {
			_, err := SubscribeTyped(b, func(context.Context, *Envelope, Event) error { return nil })
			return err
		}, ErrNilTypeParameter},
		{"require transactional on memory rule", func(c *config.Event) {
			c.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"memory"}}}
		},
			func(b *Bus) error { return b.RequireTransactional("svc.storage.*") }, ErrTxRequired},
		{"require transactional uncovered", nil, func(b *Bus) error { return b.RequireTransactional("svc.storage.*") }, ErrNoRouteMatched},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			b := newBus(t, cfg, Deps{})
			if err := tt.run(b); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// started starts the bus before fn.
func started(fn func(*Bus) error) func(*Bus) error {
	return func(b *Bus) error {
		if err := b.Start(context.Background()); err != nil {
			return err
		}
		return fn(b)
	}
}

// TestNewErrors: an unknown transport in a rule or as default, and a stream transport without a
// client, fail New naming the key.
func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  func(*config.Event)
		want string
	}{
		{"unknown transport in rule", func(c *config.Event) {
			c.Routing = []config.EventRoute{{Pattern: "a.*", Transports: []string{"memory"}}, {Pattern: "b.*", Transports: []string{"nats"}}}
		}, `svc.event.routing[1] "b.*": transport "nats"`},
		{"disabled transport in rule", func(c *config.Event) {
			c.Routing = []config.EventRoute{{Pattern: "a.*", Transports: []string{"tx_memory"}}}
		}, `svc.event.routing[0] "a.*": transport "tx_memory"`},
		{"unknown default", func(c *config.Event) { c.DefaultTransport = "nats" }, `svc.event.default_transport "nats"`},
		{"stream without client", func(c *config.Event) { c.Transports.KVStoreStream.Enabled = true }, "kvstore_stream"},
		{"outbox without database", func(c *config.Event) { c.Transports.Outbox.Enabled = true }, "svc.event.transports.outbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultConfig()
			tt.cfg(&cfg)
			_, err := New(cfg, withTransports(Deps{}))
			if !errors.Is(err, ErrTransportNotFound) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrTransportNotFound naming %s", err, tt.want)
			}
		})
	}
}

// TestRouting: first matching rule wins, fan-out reaches every transport of the rule, unmatched
// types take the default transport.
func TestRouting(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig()
	cfg.Transports.TxMemory.Enabled = true
	cfg.Routing = []config.EventRoute{
		{Pattern: "svc.test.*", Transports: []string{"memory", "tx_memory"}},
		{Pattern: "svc.*", Transports: []string{"tx_memory"}},
	}
	b := newBus(t, cfg, Deps{})
	for typ, want := range map[string][]string{
		"svc.test.happened":  {"memory", "tx_memory"},
		"svc.other.happened": {"tx_memory"},
		"app.thing":          {"memory"},
	} {
		if got := b.router.resolve(typ).names; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("route(%s) = %v, want %v", typ, got, want)
		}
	}
	rec := newRecorder()
	if _, err := b.Subscribe("svc.test.happened", rec.handle); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	if err := b.Publish(context.Background(), testEvent{N: 1}); err != nil {
		t.Fatal(err)
	}
	// fan-out: the subscription is attached to both transports, and a plain publish on
	// tx_memory is immediate.
	eventually(t, 5*time.Second, func() bool { return rec.count() == 2 }, "one delivery per transport")
	if err := b.RequireTransactional("svc.other.*"); err != nil {
		t.Errorf("RequireTransactional(svc.other.*) = %v, want nil", err)
	}
}

// TestSinkMissingAndGroupRequired: subscribing to a route that lists the outbox without its sink
// fails naming the rule; an at-least-once route needs a group.
func TestSinkMissingAndGroupRequired(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.SQLite)
	cfg := defaultConfig()
	cfg.Transports.Outbox.Enabled = true
	cfg.Routing = []config.EventRoute{
		{Pattern: "svc.test.*", Transports: []string{"outbox"}},
		{Pattern: "svc.other.*", Transports: []string{"outbox", "memory"}},
	}
	b := newBus(t, cfg, Deps{DB: d})
	h := func(context.Context, *Envelope) error { return nil }
	_, err := b.Subscribe("svc.test.happened", h, WithGroup("g"))
	if !errors.Is(err, ErrSinkMissing) || !strings.Contains(err.Error(), `svc.event.routing[0] "svc.test.*"`) {
		t.Errorf("err = %v, want ErrSinkMissing naming rule 0", err)
	}
	if _, err := b.Subscribe("svc.other.happened", h); !errors.Is(err, ErrGroupRequired) {
		t.Errorf("err = %v, want ErrGroupRequired", err)
	}
	if _, err := b.Subscribe("svc.other.happened", h, WithGroup("g")); err != nil {
		t.Errorf("err = %v, want nil", err)
	}
}

// fakeIDB stands for a transaction in tests that never reach the database.
type fakeIDB struct{ bun.IDB }

// TestAsync: async publishes are delivered and flushed by Stop; a full queue falls back to a
// synchronous publish.
func TestAsync(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig()
	cfg.AsyncQueueSize, cfg.AsyncWorkers = 1, 1
	b, err := New(cfg, withTransports(Deps{}))
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	release := make(chan struct{})
	if _, err := b.Subscribe("svc.test.happened", func(context.Context, *Envelope) error {
		<-release
		got.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	for range 50 {
		if err := b.Publish(context.Background(), testEvent{}, Async()); err != nil {
			t.Fatal(err)
		}
	}
	if b.metrics.asyncFallbacks.Load() == 0 {
		t.Errorf("no synchronous fallback with a queue of 1 and a blocked handler")
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 50 {
		t.Errorf("handled %d, want 50 after Stop flushed", got.Load())
	}
	if err := b.Publish(context.Background(), testEvent{}); !errors.Is(err, ErrBusNotStarted) {
		t.Errorf("publish after stop = %v, want ErrBusNotStarted", err)
	}
}

// TestShutdownTimeout: Stop fails with ErrShutdownTimeout when a handler does not finish.
func TestShutdownTimeout(t *testing.T) {
	t.Parallel()
	b, err := New(defaultConfig(), withTransports(Deps{}))
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	entered := make(chan struct{})
	_, _ = b.Subscribe("svc.test.happened", func(context.Context, *Envelope) error { close(entered); <-block; return nil })
	start(t, b)
	_ = b.Publish(context.Background(), testEvent{})
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Stop(ctx); !errors.Is(err, ErrShutdownTimeout) {
		t.Errorf("Stop = %v, want ErrShutdownTimeout", err)
	}
}

// TestSubscribeTyped: the handler gets the published value in-process and a decoded value from a
// raw payload; an undecodable payload is ErrUnknownPayload.
func TestSubscribeTyped(t *testing.T) {
	t.Parallel()
	b := newBus(t, defaultConfig(), Deps{})
	got := make(chan int, 4)
	if _, err := SubscribeTyped(b, func(_ context.Context, _ *Envelope, e testEvent) error { got <- e.N; return nil }); err != nil {
		t.Fatal(err)
	}
	var ptrErrs atomic.Int64
	if _, err := SubscribeTyped(b, func(_ context.Context, _ *Envelope, e *testEvent) error {
		if e == nil || e.N == 0 {
			ptrErrs.Add(1)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	_ = b.Publish(context.Background(), testEvent{N: 4})
	_ = b.Publish(context.Background(), RawPayload{Type: "svc.test.happened", Body: []byte(`{"n":5}`)})
	for _, want := range []int{4, 5} {
		if n := <-got; n != want {
			t.Errorf("typed payload N = %d, want %d", n, want)
		}
	}
	if _, err := decodePayload[testEvent](&Envelope{Type: "t", Payload: otherEvent{}}); !errors.Is(err, ErrUnknownPayload) {
		t.Errorf("err = %v, want ErrUnknownPayload", err)
	}
	if _, err := decodePayload[testEvent](&Envelope{Type: "t", Payload: RawPayload{Body: []byte("[")}}); !errors.Is(err, ErrUnknownPayload) {
		t.Errorf("err = %v, want ErrUnknownPayload", err)
	}
	if p, err := decodePayload[*testEvent](&Envelope{Payload: RawPayload{Body: []byte(`{"n":3}`)}}); err != nil || p.N != 3 {
		t.Errorf("pointer decode = %v, %v", p, err)
	}
}

// TestUnsubscribe: after Unsubscribe no more deliveries; calling it twice is safe.
func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	b := newBus(t, defaultConfig(), Deps{})
	rec := newRecorder()
	unsub, err := b.Subscribe("svc.test.happened", rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	start(t, b)
	_ = b.Publish(context.Background(), testEvent{})
	eventually(t, 5*time.Second, func() bool { return rec.count() == 1 }, "first delivery")
	unsub()
	unsub()
	_ = b.Publish(context.Background(), testEvent{})
	if err := b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 1 {
		t.Errorf("deliveries = %d, want 1", rec.count())
	}
}

// TestAsyncQueueFull: when the async queue is full and the synchronous fallback fails too, the
// publish fails with ErrAsyncQueueFull wrapping the cause.
func TestAsyncQueueFull(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig()
	cfg.AsyncQueueSize, cfg.AsyncWorkers = 1, 1
	cfg.Transports.Memory.QueueSize = 1
	// block briefly: the async worker is held on the full queue while the next publishes overflow
	cfg.Transports.Memory.FullPolicy = config.FullPolicyBlock
	cfg.Transports.Memory.PublishTimeout = 50 * time.Millisecond
	b := newBus(t, cfg, Deps{})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	_, _ = b.Subscribe("svc.test.happened", func(context.Context, *Envelope) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		return nil
	})
	start(t, b)
	defer close(release)
	_ = b.Publish(context.Background(), testEvent{}) // held by the handler
	<-entered
	_ = b.Publish(context.Background(), testEvent{}) // fills the subscription queue
	var err error
	for range 10 { // the async worker blocks on the full queue; the next publishes overflow
		if err = b.Publish(context.Background(), testEvent{}, Async()); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrAsyncQueueFull) || !errors.Is(err, ErrQueueFull) {
		t.Errorf("err = %v, want ErrAsyncQueueFull wrapping ErrQueueFull", err)
	}
}

// TestValidType: the shape ^[a-zA-Z0-9._-]+$.
func TestValidType(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]bool{
		"svc.storage.file.claimed": true, "svc-dlq.a_b-C9": true, "": false, "a b": false, "a/b": false, "é": false, "a*": false,
	} {
		if got := ValidType(typ); got != want {
			t.Errorf("ValidType(%q) = %v, want %v", typ, got, want)
		}
	}
}

// fileClaimed stands for a module payload that is not an Event itself.
type fileClaimed struct {
	FileKey string `json:"fileKey"`
}

func (fileClaimed) EventType() string { return "svc.storage.file.claimed" }

// TestNamed: a (name, value) event publishes the value's JSON and typed subscribers get the
// value, in-process and after the outbox (RawPayload).
func TestNamed(t *testing.T) {
	t.Parallel()
	e := Named{Type: "svc.storage.file.claimed", Payload: fileClaimed{FileKey: "k"}}
	body, err := EncodeBody(&Envelope{Type: e.Type, Payload: e})
	if err != nil || string(body) != `{"fileKey":"k"}` {
		t.Errorf("body = %s, %v", body, err)
	}
	for _, payload := range []Event{e, Named{Type: e.Type, Payload: map[string]string{"fileKey": "k"}}, RawPayload{Type: e.Type, Body: body}} {
		got, err := decodePayload[fileClaimed](&Envelope{Type: e.Type, Payload: payload})
		if err != nil || got.FileKey != "k" {
			t.Errorf("decode %T = %+v, %v", payload, got, err)
		}
	}
}

// TestReserved: the framework's prefix is reserved in any letter case (issue #31 item 13);
// look-alikes that only contain it, or lack its dot, are not.
func TestReserved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  string
		want bool
	}{
		{"svc.cron.run.failed", true},
		{"SVC.cron.run.failed", true},
		{"Svc.x", true},
		{"sVc.", true},
		{"svc", false},
		{"svcx.y", false},
		{"app.svc.x", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Reserved(tt.typ); got != tt.want {
			t.Errorf("Reserved(%q) = %t, want %t", tt.typ, got, tt.want)
		}
	}
}
