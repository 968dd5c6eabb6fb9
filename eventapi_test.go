package svc_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// flaky is a host subscriber of one event type (group "host") that fails while broken is set
// and counts the deliveries it accepted per event id.
type flaky struct {
	broken atomic.Bool
	mu     sync.Mutex
	got    map[string]int
}

func (f *flaky) module(typ string) svc.ModuleFunc {
	return func(d app.Deps) (app.Module, error) {
		_, err := d.Events.Subscribe(typ, func(_ context.Context, env *event.Envelope) error {
			if f.broken.Load() {
				return fmt.Errorf("downstream unavailable")
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.got[env.ID]++
			return nil
		}, event.WithGroup("host"))
		return app.Module{Name: "flaky"}, err
	}
}

func (f *flaky) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[id]
}

// outboxServer boots a server whose app.* events go through the outbox to memory, dead after one
// failure (max_retries 1; outboxServerRetries: another count), with roles reader (sys.event.query) and operator (sys.event.*).
func outboxServer(t *testing.T, kind config.DBKind, f *flaky, opts ...svc.Option) *svctest.Server {
	return outboxServerRetries(t, kind, f, 1, opts...)
}

// outboxServerRetries is outboxServer with max_retries retries.
func outboxServerRetries(t *testing.T, kind config.DBKind, f *flaky, retries int, opts ...svc.Option) *svctest.Server {
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Event.Transports.Outbox.Enabled = true
		c.Event.Transports.Outbox.MaxRetries = retries
		c.Event.Transports.Outbox.RelayInterval = 50 * time.Millisecond
		c.Event.Routing = append(c.Event.Routing, config.EventRoute{Pattern: "app.*", Transports: []string{config.TransportOutbox, config.TransportMemory}})
		c.Security.Roles = map[string][]string{"reader": {svc.EventQueryPermission}, "operator": {"sys.event.*"}}
	}), svctest.WithOptions(append(opts, svc.WithModule(f.module("app.order.placed")))...))
}

// outboxPage is find_page's data.
type outboxPage struct {
	Page, Size int
	Total      int64
	Items      []svc.OutboxRowView
}

// deadLetters publishes n app.order.placed events while the subscriber is broken and waits until
// the relay made each a dead letter; it answers their rows, oldest first.
func deadLetters(t *testing.T, srv *svctest.Server, f *flaky, n int) []svc.OutboxRowView {
	t.Helper()
	f.broken.Store(true)
	batch := rpc.NewID()
	for i := range n {
		if err := srv.Events().Publish(context.Background(), event.Named{Type: "app.order.placed", Payload: map[string]any{"order": i}},
			event.WithCorrelationID(batch)); err != nil {
			t.Fatal(err)
		}
	}
	reader := svctest.As(svctest.User("rita", "reader"))
	var rows []svc.OutboxRowView
	svctest.Eventually(t, 30*time.Second, func() bool {
		var p outboxPage
		srv.Call(t, svc.OutboxResource, "find_page", map[string]any{"status": "dead", "eventType": "app."}, reader, svctest.WithMeta(map[string]int{"size": 100})).DataAs(t, &p)
		rows = rows[:0]
		for i := len(p.Items) - 1; i >= 0; i-- {
			if p.Items[i].CorrelationID == batch {
				rows = append(rows, p.Items[i])
			}
		}
		return len(rows) == n
	}, "the relay dead-letters every event")
	return rows
}

// call runs an action and fails the test unless it answers code want.
func call(t *testing.T, srv *svctest.Server, resource, action string, params any, want int, as svctest.CallOption) svctest.Response {
	t.Helper()
	r := srv.Call(t, resource, action, params, as)
	if r.Code != want {
		t.Fatalf("%s %s: code %d (%s), want %d", resource, action, r.Code, r.Message, want)
	}
	return r
}

// TestEventOperations runs sys/event and sys/event/outbox on every database: the overview's
// transports, routes and counts, find_page's filters, get's detail, replay while the subscriber
// still fails (failed again) and after it recovered (delivered once), replay of a row no longer
// dead, discard, unknown ids (2001), the permission refusals (1100) and the audit records.
func TestEventOperations(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		f := &flaky{got: map[string]int{}}
		audits := &svctest.Audits{}
		srv := outboxServer(t, kind, f, svc.WithAuditSink(audits))
		reader, operator, nobody := svctest.As(svctest.User("rita", "reader")), svctest.As(svctest.User("otto", "operator")), svctest.As(svctest.User("nora"))
		rows := deadLetters(t, srv, f, 2)

		var ov svc.EventOverview
		call(t, srv, svc.EventResource, "get_overview", nil, 0, reader).DataAs(t, &ov)
		if !ov.Outbox.Enabled || ov.Outbox.Sink != "memory" || ov.Outbox.MaxRetries != 1 || ov.Outbox.Counts["dead"] < 2 || ov.DefaultTransport != "memory" {
			t.Errorf("overview outbox = %+v default %q", ov.Outbox, ov.DefaultTransport)
		}
		enabled := map[string]bool{}
		for _, tr := range ov.Transports {
			enabled[tr.Name] = tr.Enabled
			if tr.Name == "outbox" && (!tr.Transactional || !tr.PublishOnly || len(tr.Settings) == 0 || tr.Settings[0].Key != "sink") {
				t.Errorf("outbox transport = %+v", tr)
			}
		}
		if len(ov.Transports) != 4 || !enabled["memory"] || !enabled["outbox"] || enabled["kvstore_stream"] || enabled["tx_memory"] {
			t.Errorf("transports enabled = %v", enabled)
		}
		found := false
		for _, r := range ov.Routes {
			found = found || r.Pattern == "app.*" && len(r.Transports) == 2 && r.Transports[0] == "outbox"
		}
		if !found {
			t.Errorf("routes = %+v, want app.* → outbox, memory", ov.Routes)
		}

		// filters: status and event type prefix; get answers headers and payload
		var p outboxPage
		call(t, srv, svc.OutboxResource, "find_page", map[string]any{"eventType": "app.order", "status": "completed"}, 0, reader).DataAs(t, &p)
		if p.Total != 0 {
			t.Errorf("completed app.order rows = %d, want 0", p.Total)
		}
		call(t, srv, svc.OutboxResource, "find_page", map[string]any{"eventId": rows[0].EventID}, 0, reader).DataAs(t, &p)
		if p.Total != 1 || p.Items[0].ID != rows[0].ID || p.Items[0].LastError == "" || p.Items[0].RetryCount != 1 || p.Items[0].Payload != nil {
			t.Errorf("find by event id = %+v", p)
		}
		call(t, srv, svc.OutboxResource, "find_page", map[string]any{"status": "nonsense"}, rpc.CodeBadRequest, reader)
		var detail svc.OutboxRowView
		call(t, srv, svc.OutboxResource, "get", map[string]any{"id": rows[0].ID}, 0, reader).DataAs(t, &detail)
		if detail.Status != "dead" || string(detail.Payload) != `{"order": 0}` && string(detail.Payload) != `{"order":0}` || detail.ProcessedAt == nil {
			t.Errorf("get = %+v payload %s", detail, detail.Payload)
		}

		// refusals: no token at all, and the query token for manage actions
		call(t, srv, svc.EventResource, "get_overview", nil, rpc.CodeAccessDenied, nobody)
		call(t, srv, svc.EventResource, "get_streams", nil, rpc.CodeAccessDenied, nobody)
		call(t, srv, svc.OutboxResource, "find_page", nil, rpc.CodeAccessDenied, nobody)
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": rows[0].ID}, rpc.CodeAccessDenied, reader)
		call(t, srv, svc.OutboxResource, "discard", map[string]any{"id": rows[0].ID}, rpc.CodeAccessDenied, reader)

		// replay while the subscriber still fails: forwarded once, failed, dead again (max_retries 1)
		var rv svc.ReplayView
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": rows[0].ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayFailed || rv.Row.Status != "dead" || rv.Row.LastError == "" {
			t.Errorf("replay while broken = %+v", rv)
		}
		// recovered: delivered once, completed
		f.broken.Store(false)
		rv = svc.ReplayView{}
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": rows[0].ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayDelivered || rv.Row.Status != "completed" || rv.Row.LastError != "" || rv.Row.ProcessedAt == nil {
			t.Errorf("replay = %+v", rv)
		}
		if n := f.count(rows[0].EventID); n != 1 {
			t.Errorf("deliveries after replay = %d, want 1", n)
		}
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": rows[0].ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayNotDead || rv.Row.Status != "completed" {
			t.Errorf("second replay = %+v", rv)
		}
		if n := f.count(rows[0].EventID); n != 1 {
			t.Errorf("deliveries after a second replay = %d, want 1", n)
		}
		rec, ok := audits.Last(svc.OutboxResource, "replay")
		if !ok || rec.Principal == nil || rec.Principal.ID != "otto" {
			t.Errorf("replay audit record = %+v, %v", rec, ok)
		}

		// discard: the completed row is not dead; the dead one goes; then it is unknown
		var dv svc.DiscardView
		call(t, srv, svc.OutboxResource, "discard", map[string]any{"id": rows[0].ID}, 0, operator).DataAs(t, &dv)
		if dv.Discarded {
			t.Error("discard of a completed row answered discarded")
		}
		call(t, srv, svc.OutboxResource, "discard", map[string]any{"id": rows[1].ID}, 0, operator).DataAs(t, &dv)
		if !dv.Discarded {
			t.Error("discard of a dead row answered not discarded")
		}
		if f.count(rows[1].EventID) != 0 {
			t.Error("a discarded dead letter was delivered")
		}
		call(t, srv, svc.OutboxResource, "discard", map[string]any{"id": rows[1].ID}, rpc.CodeRecordNotFound, operator)
		call(t, srv, svc.OutboxResource, "get", map[string]any{"id": rows[1].ID}, rpc.CodeRecordNotFound, reader)
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": "no-such-row"}, rpc.CodeRecordNotFound, operator)
		call(t, srv, svc.OutboxResource, "get", map[string]any{}, rpc.CodeBadRequest, reader)
		if _, ok := audits.Last(svc.OutboxResource, "discard"); !ok {
			t.Error("discard was not audited")
		}
	})
}

// TestReplayRaces: on every database, four clients replay the same dead letters at once while
// the relay runs; each event is delivered exactly once, each row answered delivered exactly once
// (the others not_dead) and every row ends completed: the conditional update from dead is the
// only claim.
func TestReplayRaces(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		f := &flaky{got: map[string]int{}}
		srv := outboxServer(t, kind, f)
		rows := deadLetters(t, srv, f, 6)
		f.broken.Store(false)
		operator := svctest.As(svctest.User("otto", "operator"))
		var delivered [6]atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for i, row := range rows {
					var rv svc.ReplayView
					r := srv.Call(t, svc.OutboxResource, "replay", map[string]any{"id": row.ID}, operator)
					if r.Code != 0 {
						t.Errorf("replay: %d %s", r.Code, r.Message)
						return
					}
					r.DataAs(t, &rv)
					switch rv.Outcome {
					case event.ReplayDelivered:
						delivered[i].Add(1)
					case event.ReplayNotDead:
					default:
						t.Errorf("replay outcome %q", rv.Outcome)
					}
				}
			})
		}
		wg.Wait()
		reader := svctest.As(svctest.User("rita", "reader"))
		for i, row := range rows {
			var v svc.OutboxRowView
			call(t, srv, svc.OutboxResource, "get", map[string]any{"id": row.ID}, 0, reader).DataAs(t, &v)
			if d, n := delivered[i].Load(), f.count(row.EventID); d != 1 || n != 1 || v.Status != "completed" {
				t.Errorf("row %d: %d delivered answers, %d deliveries, status %s; want 1, 1, completed", i, d, n, v.Status)
			}
		}
	})
}

// TestDeadLetterOnStreamSink: with the outbox relaying to kvstore_stream on real Redis, a stream
// key that holds a value of another type (WRONGTYPE) makes the relay's XADD fail, the event goes
// to svc-dlq.<type> and the row is dead; get_streams shows the consumer group's pending and lag;
// once the key is removed, replay delivers the event to the stream and its consumer group.
func TestDeadLetterOnStreamSink(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		prefix := svctest.UniquePrefix(t) + ":events:"
		rdb := svctest.Redis(t)
		ctx := context.Background()
		got := make(chan string, 4)
		subscribe := func(d app.Deps) (app.Module, error) {
			_, err := d.Events.Subscribe("app.stream.placed", func(_ context.Context, env *event.Envelope) error {
				got <- env.ID
				return nil
			}, event.WithGroup("shipping"))
			return app.Module{Name: "shipping"}, err
		}
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			c.KVStore = svctest.RedisConfig(t)
			c.Event.Transports.KVStoreStream.Enabled = true
			c.Event.Transports.KVStoreStream.StreamPrefix = prefix
			c.Event.Transports.KVStoreStream.BlockTimeout = 100 * time.Millisecond
			c.Event.Transports.Outbox.Sink = config.TransportKVStoreStream
			c.Event.Transports.Outbox.Enabled = true
			c.Event.Transports.Outbox.MaxRetries = 1
			c.Event.Transports.Outbox.RelayInterval = 50 * time.Millisecond
			c.Event.Routing = []config.EventRoute{
				{Pattern: "svc.storage.*", Transports: []string{config.TransportOutbox, config.TransportKVStoreStream}},
				{Pattern: "approval.*", Transports: []string{config.TransportOutbox, config.TransportKVStoreStream}},
				{Pattern: "app.*", Transports: []string{config.TransportOutbox, config.TransportKVStoreStream}},
			}
			c.Security.Roles = map[string][]string{"operator": {"sys.event.*"}}
		}), svctest.WithOptions(svc.WithModule(subscribe)))
		operator := svctest.As(svctest.User("otto", "operator"))
		key := prefix + "app.stream.placed"
		if err := rdb.Del(ctx, key).Err(); err != nil { // the group was made at Start
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, key, "not a stream", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Events().Publish(ctx, event.Named{Type: "app.stream.placed", Payload: map[string]int{"n": 1}}); err != nil {
			t.Fatal(err)
		}
		var dead svc.OutboxRowView
		svctest.Eventually(t, 20*time.Second, func() bool {
			var p outboxPage
			call(t, srv, svc.OutboxResource, "find_page", map[string]any{"status": "dead"}, 0, operator).DataAs(t, &p)
			if len(p.Items) == 1 { // Total is counted by a second query: the row may change between
				dead = p.Items[0]
			}
			return len(p.Items) == 1
		}, "the relay dead-letters the event")
		if n, err := rdb.XLen(ctx, prefix+event.DeadLetterPrefix+"app.stream.placed").Result(); err != nil || n != 1 {
			t.Fatalf("dead-letter stream length = %d, %v; want 1", n, err)
		}
		if err := rdb.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		var rv svc.ReplayView
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": dead.ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayDelivered || rv.Row.Status != "completed" {
			t.Fatalf("replay = %+v", rv)
		}
		if n, err := rdb.XLen(ctx, key).Result(); err != nil || n != 1 {
			t.Errorf("stream length after replay = %d, %v; want 1", n, err)
		}
		// the group was made before the key was replaced: the reader makes it again on its next
		// read (NOGROUP) — or the replayed entry is read by a new group; either way it arrives
		select {
		case id := <-got:
			if id != dead.EventID {
				t.Errorf("consumer got %s, want %s", id, dead.EventID)
			}
		case <-time.After(20 * time.Second):
			t.Error("the replayed event did not reach the consumer group")
		}
		var report event.StreamReport
		call(t, srv, svc.EventResource, "get_streams", nil, 0, operator).DataAs(t, &report)
		names := map[string]event.StreamInfo{}
		for _, s := range report.Streams {
			names[s.Stream] = s
		}
		st, ok := names[key]
		if !report.Enabled || !ok || st.Length != 1 || len(st.Groups) != 1 || st.Groups[0].Name != "shipping" || st.Groups[0].Lag != 0 {
			t.Errorf("get_streams = %+v", report)
		}
		if _, ok := names[prefix+event.DeadLetterPrefix+"app.stream.placed"]; !ok {
			t.Errorf("get_streams lacks the dead-letter stream: %+v", report)
		}
	})
}

// TestReplayFailsThenRelayDelivers: on every database, with max_retries 2, a replay whose
// forward fails leaves the row failed with one attempt and its back-off; the relay takes it
// from there and delivers it once the subscriber recovers — exactly once, the row completed.
func TestReplayFailsThenRelayDelivers(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		f := &flaky{got: map[string]int{}}
		srv := outboxServerRetries(t, kind, f, 2)
		row := deadLetters(t, srv, f, 1)[0]
		if row.RetryCount != 2 {
			t.Fatalf("dead row attempts = %d, want 2", row.RetryCount)
		}
		operator := svctest.As(svctest.User("otto", "operator"))
		var rv svc.ReplayView
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": row.ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayFailed || rv.Row.Status != "failed" || rv.Row.RetryCount != 1 || rv.Row.RetryAfter == nil {
			t.Fatalf("replay while broken = %+v", rv)
		}
		f.broken.Store(false)
		var v svc.OutboxRowView
		svctest.Eventually(t, 20*time.Second, func() bool {
			v = svc.OutboxRowView{}
			call(t, srv, svc.OutboxResource, "get", map[string]any{"id": row.ID}, 0, operator).DataAs(t, &v)
			return v.Status == "completed"
		}, "the relay delivers the replayed row after its back-off")
		if n := f.count(row.EventID); n != 1 {
			t.Errorf("deliveries = %d, want 1", n)
		}
		call(t, srv, svc.OutboxResource, "replay", map[string]any{"id": row.ID}, 0, operator).DataAs(t, &rv)
		if rv.Outcome != event.ReplayNotDead {
			t.Errorf("replay of the completed row = %+v", rv)
		}
	})
}
