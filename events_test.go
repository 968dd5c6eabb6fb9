package svc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// received collects the payloads a subscriber got, in order.
type received[T any] struct {
	mu   sync.Mutex
	list []T
}

func (r *received[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, v)
}

func (r *received[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.list...)
}

// subscribeTyped is a host module that subscribes to T's events while it is built (group
// "host", needed by at-least-once routes) and collects what it receives.
func subscribeTyped[T event.Event](into *received[T]) svc.ModuleFunc {
	return func(d app.Deps) (app.Module, error) {
		_, err := event.SubscribeTyped(d.Events, func(_ context.Context, _ *event.Envelope, p T) error {
			into.add(p)
			return nil
		}, event.WithGroup("host"))
		return app.Module{Name: "subscriber"}, err
	}
}

// eventRoutes are the two transactional routes of storage events: the code default (the outbox
// relaying to memory, config.Event.Effective; the shipped configuration writes the same rule)
// and tx_memory.
var eventRoutes = []struct {
	name   string
	config func(*config.Config)
}{
	{"outbox", func(*config.Config) {}},
	{"tx_memory", useTxMemory},
}

// useTxMemory routes storage events to tx_memory.
func useTxMemory(c *config.Config) {
	c.Event.Transports.TxMemory.Enabled = true
	c.Event.Routing = []config.EventRoute{{Pattern: storage.EventPattern, Transports: []string{config.TransportTxMemory}}}
}

// upload runs a one-part upload of content through /api and returns the file key.
func upload(t *testing.T, srv *svctest.Server, content string, as svctest.CallOption) (key string, complete func() svctest.Response) {
	t.Helper()
	var plan storage.InitUploadResult
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.txt", "size": len(content), "contentType": "text/plain"}, as)
	if r.Code != 0 {
		t.Fatalf("init_upload: code %d (%s)", r.Code, r.Message)
	}
	r.DataAs(t, &plan)
	r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "blob", Content: bytes.NewReader([]byte(content))}}, as)
	if r.Code != 0 {
		t.Fatalf("upload_part: code %d (%s)", r.Code, r.Message)
	}
	return plan.Key, func() svctest.Response {
		return srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, as)
	}
}

// TestStorageEventsReachHostModule: a complete upload delivers svc.storage.file.uploaded to a
// subscriber a host module registered while it was built, on every database and both
// transactional routes.
func TestStorageEventsReachHostModule(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		for _, route := range eventRoutes {
			t.Run(route.name, func(t *testing.T) {
				var got received[storage.FileUploaded]
				srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(route.config),
					svctest.WithOptions(svc.WithModule(subscribeTyped(&got))))
				key, complete := upload(t, srv, "hello", svctest.As(svctest.User("alice")))
				if r := complete(); r.Code != 0 {
					t.Fatalf("complete_upload: code %d (%s)", r.Code, r.Message)
				}
				svctest.Eventually(t, 10*time.Second, func() bool { return len(got.all()) > 0 }, "the uploaded event")
				want := storage.FileUploaded{FileKey: key, Size: 5, ContentType: "text/plain", OriginalFilename: "a.txt", UploadedBy: "alice"}
				if all := got.all(); len(all) != 1 || all[0] != want {
					t.Errorf("received %+v, want one %+v", all, want)
				}
			})
		}
	})
}

// failingPublisher publishes through the server's bus and then, while fail is set, fails, so
// the storage transaction that wrote the event rolls back.
type failingPublisher struct {
	srv  **svctest.Server
	fail atomic.Bool
}

func (f *failingPublisher) Publish(ctx context.Context, tx bun.IDB, e storage.Event) error {
	if err := storage.BusPublisher((*f.srv).Events()).Publish(ctx, tx, e); err != nil {
		return err
	}
	if f.fail.Load() {
		return errors.New("injected failure after the event was written")
	}
	return nil
}

// TestStorageEventsRolledBack: an upload whose transaction fails after the event was written
// delivers nothing; the retry that commits delivers exactly once (a later upload's event is the
// synchronisation point: both routes deliver in order).
func TestStorageEventsRolledBack(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		for _, route := range eventRoutes {
			t.Run(route.name, func(t *testing.T) {
				var got received[storage.FileUploaded]
				var srv *svctest.Server
				pub := &failingPublisher{srv: &srv}
				srv = svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(route.config), svctest.WithOptions(
					svc.WithModule(subscribeTyped(&got)), svc.WithStorage(storage.Options{Events: pub})))
				alice := svctest.As(svctest.User("alice"))
				first, complete := upload(t, srv, "first", alice)
				pub.fail.Store(true)
				if r := complete(); r.Code == 0 {
					t.Fatal("complete_upload succeeded despite the failing transaction")
				}
				pub.fail.Store(false)
				if r := complete(); r.Code != 0 {
					t.Fatalf("retried complete_upload: code %d (%s)", r.Code, r.Message)
				}
				second, complete2 := upload(t, srv, "second", alice)
				if r := complete2(); r.Code != 0 {
					t.Fatalf("second complete_upload: code %d (%s)", r.Code, r.Message)
				}
				svctest.Eventually(t, 10*time.Second, func() bool {
					all := got.all()
					return len(all) > 0 && all[len(all)-1].FileKey == second
				}, "the second upload's event")
				var keys []string
				for _, e := range got.all() {
					keys = append(keys, e.FileKey)
				}
				if want := []string{first, second}; strings.Join(keys, ",") != strings.Join(want, ",") {
					t.Errorf("delivered keys %q, want %q (the rolled-back attempt delivers nothing)", keys, want)
				}
				if route.name == "outbox" {
					n, err := srv.DB().NewSelect().Table("sys_event_outbox").Count(context.Background())
					if err != nil || n != 2 {
						t.Errorf("sys_event_outbox rows = %d (%v), want 2", n, err)
					}
				}
			})
		}
	})
}

// auditedModule is a host module with an audited public operation.
func auditedModule(app.Deps) (app.Module, error) {
	ping := func(context.Context, rpc.Call, map[string]any) (string, error) { return "pong", nil }
	return app.Module{Name: "audited", Resources: []rpc.Resource{{Name: "test/audited", Ops: []rpc.Op{
		rpc.Handle("ping", ping, rpc.Audit()),
	}}}}, nil
}

// securityEvents subscribes to the login events of the security module.
func securityEvents(into *received[security.Event]) svc.ModuleFunc {
	return func(d app.Deps) (app.Module, error) {
		for _, typ := range []string{security.EventLoginSucceeded, security.EventLoginFailed} {
			_, err := d.Events.Subscribe(typ, func(_ context.Context, env *event.Envelope) error {
				if n, ok := env.Payload.(event.Named); ok {
					if e, ok := n.Payload.(security.Event); ok {
						into.add(e)
					}
				}
				return nil
			})
			if err != nil {
				return app.Module{}, err
			}
		}
		return app.Module{Name: "security-events"}, nil
	}
}

// TestLoginAndAuditEvents: login success and failure reach subscribers as the security module's
// events and as svc.security.login (wire-runtime §2.9), and an audited operation's record as
// svc.api.request.audit.
func TestLoginAndAuditEvents(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		var sec received[security.Event]
		var logins received[security.LoginEvent]
		var audits received[rpc.AuditEvent]
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithOptions(svc.WithModule(securityEvents(&sec)),
			svc.WithModule(subscribeTyped(&logins)), svc.WithModule(subscribeTyped(&audits)), svc.WithModule(auditedModule)))
		user := failThenLogin(t, srv, "erin")
		if r := srv.Call(t, "test/audited", "ping", map[string]any{"q": "x", "token": "t-1"}, svctest.As(svctest.User("bob")), svctest.WithHeader("User-Agent", "events-test")); r.Code != 0 {
			t.Fatalf("ping: code %d (%s)", r.Code, r.Message)
		}
		svctest.Eventually(t, 10*time.Second, func() bool {
			return len(sec.all()) == 2 && len(logins.all()) == 2 && len(audits.all()) == 1
		}, "two security events, two login events and one audit event")

		types := map[string]security.Event{}
		for _, e := range sec.all() {
			types[e.Type] = e
		}
		if e := types[security.EventLoginFailed]; e.Identifier != "erin" || e.Reason == "" {
			t.Errorf("login_failed = %+v, want identifier erin and a reason", e)
		}
		if e := types[security.EventLoginSucceeded]; e.PrincipalID != user.ID || e.RequestID == "" {
			t.Errorf("login_succeeded = %+v, want principal %s and a request id", e, user.ID)
		}
		var ok, failed int
		for _, l := range logins.all() {
			switch {
			case l.IsOK && l.UserID != nil && *l.UserID == user.ID && l.Username == "erin" && l.AuthType == "password":
				ok++
			case !l.IsOK && l.UserID == nil && l.FailReason != "":
				failed++
			}
		}
		if ok != 1 || failed != 1 {
			t.Errorf("svc.security.login events = %+v, want one success and one failure", logins.all())
		}
		a := audits.all()[0]
		if a.Resource != "test/audited" || a.Action != "ping" || a.Version != "v1" || a.UserID == nil || *a.UserID != "bob" ||
			a.ResultCode != 0 || a.RequestID == "" || a.UserAgent != "events-test" {
			t.Errorf("audit event = %+v", a)
		}
		params, _ := json.Marshal(a.RequestParams)
		result, _ := json.Marshal(a.ResultData)
		if string(params) != `{"q":"x","token":"[REDACTED]"}` || string(result) != `"pong"` {
			t.Errorf("audit requestParams %s, resultData %s; want the params with the token redacted and \"pong\"", params, result)
		}
	})
}

// TestEventStreamsOnRedis: with the kvstore_stream transport on real Redis, get_event_streams
// shows a stream, its group and the pending entry a subscriber is still handling.
func TestEventStreamsOnRedis(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		prefix := svctest.UniquePrefix(t) + ":events:"
		holding, release := make(chan struct{}, 1), make(chan struct{})
		subscribe := func(d app.Deps) (app.Module, error) {
			_, err := d.Events.Subscribe("test.stream.held", func(ctx context.Context, _ *event.Envelope) error {
				holding <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}, event.WithGroup("holders"))
			return app.Module{Name: "holder"}, err
		}
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			c.KVStore = svctest.RedisConfig(t)
			c.Event.Transports.KVStoreStream.Enabled = true
			c.Event.Transports.KVStoreStream.StreamPrefix = prefix
			c.Event.Transports.KVStoreStream.BlockTimeout = 100 * time.Millisecond // a quick Stop
			c.Event.Routing = []config.EventRoute{{Pattern: "test.stream.*", Transports: []string{config.TransportKVStoreStream}}}
			c.Security.Roles = map[string][]string{"monitor": {monitor.Permission}}
		}), svctest.WithOptions(svc.WithModule(subscribe)))
		defer close(release)
		if err := srv.Events().Publish(context.Background(), event.Named{Type: "test.stream.held", Payload: map[string]int{"n": 1}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-holding:
		case <-time.After(10 * time.Second):
			t.Fatal("the subscriber did not receive the event")
		}
		var report monitor.EventStreams
		r := srv.Call(t, monitor.Resource, "get_event_streams", nil, svctest.As(svctest.User("ops", "monitor")))
		if r.Status != http.StatusOK || r.Code != 0 {
			t.Fatalf("get_event_streams: HTTP %d code %d (%s)", r.Status, r.Code, r.Message)
		}
		r.DataAs(t, &report)
		if !report.Enabled || len(report.Streams) != 1 {
			t.Fatalf("get_event_streams = %s, want enabled with one stream", r.Data)
		}
		st := report.Streams[0]
		if st.Stream != prefix+"test.stream.held" || st.Length != 1 || len(st.Groups) != 1 ||
			st.Groups[0].Name != "holders" || st.Groups[0].Pending != 1 || st.Groups[0].Consumers < 1 || st.Groups[0].LastDeliveredID == "" {
			t.Errorf("get_event_streams stream = %+v, want %stest.stream.held, length 1, group holders with 1 pending", st, prefix)
		}
	})
}

// TestStorageEventsNeedTransactionalRoute: a routing rule that sends storage events to memory
// fails startup, naming the rule and the fix.
func TestStorageEventsNeedTransactionalRoute(t *testing.T) {
	cfg := svctest.Config(t, config.SQLite)
	cfg.Event.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{config.TransportMemory}}}
	srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = srv.Start(context.Background())
	if err == nil {
		srv.Stop(context.Background())
		t.Fatal("Start succeeded with storage events routed to memory")
	}
	if !errors.Is(err, event.ErrTxRequired) || !strings.Contains(err.Error(), `svc.event.routing[0] "svc.*"`) ||
		!strings.Contains(err.Error(), "outbox or tx_memory") {
		t.Errorf("Start error = %v, want ErrTxRequired naming svc.event.routing[0] and the outbox or tx_memory fix", err)
	}
}

// shippedConfig loads configs/application.toml with its data directory (the SQLite file and the
// filesystem storage root) moved to a temporary one and svc.security.secret set to the harness's
// TestSecret, as an operator sets SVC_SECURITY_SECRET: the shipped file has none (the server
// would generate one in its database), and svctest mints tokens with the configured secret.
func shippedConfig(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"SVC_DATA_SOURCES_PRIMARY_PATH": filepath.Join(dir, "svc.db"),
		"SVC_STORAGE_FILESYSTEM_ROOT":   filepath.Join(dir, "storage"),
		"SVC_SECURITY_SECRET":           svctest.TestSecret,
	}
	shipped, _, err := config.Load(config.LoadOptions{Path: "configs/application.toml",
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("load the shipped configuration: %v", err)
	}
	return shipped
}

// TestShippedConfigDeliversStorageEvents: the server boots from configs/application.toml (its
// data directory moved to a temporary one) and a host subscriber receives a storage event
// through the outbox: the row is written with the upload and relayed to memory.
func TestShippedConfigDeliversStorageEvents(t *testing.T) {
	shipped := shippedConfig(t)
	if !shipped.Event.Transports.Outbox.Enabled {
		t.Fatal("the shipped configuration has no outbox")
	}
	var got received[storage.FileUploaded]
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { *c = *shipped }),
		svctest.WithOptions(svc.WithModule(subscribeTyped(&got))))
	key, complete := upload(t, srv, "shipped", svctest.As(svctest.User("alice")))
	if r := complete(); r.Code != 0 {
		t.Fatalf("complete_upload: code %d (%s)", r.Code, r.Message)
	}
	svctest.Eventually(t, 10*time.Second, func() bool { return len(got.all()) == 1 }, "the uploaded event")
	if f := got.all()[0]; f.FileKey != key || f.UploadedBy != "alice" {
		t.Errorf("received %+v, want key %s uploaded by alice", f, key)
	}
	var status string
	svctest.Eventually(t, 10*time.Second, func() bool {
		err := srv.DB().NewSelect().Table("sys_event_outbox").Column("status").Where("event_type = ?", storage.EventFileUploaded).
			Scan(context.Background(), &status)
		return err == nil && status == "completed"
	}, "the outbox row completed")
}

// TestAdoptionInHostTransactionPublishes: on the code default (the outbox), host code adopting a
// file in its own transaction — no event.TxScope — publishes svc.storage.file.claimed: the row
// commits with the adoption and the relay forwards it at its next tick.
func TestAdoptionInHostTransactionPublishes(t *testing.T) {
	var got received[storage.FileClaimed]
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Event.Transports.Outbox.RelayInterval = 50 * time.Millisecond }),
		svctest.WithOptions(svc.WithModule(subscribeTyped(&got))))
	key, complete := upload(t, srv, "adopt", svctest.As(svctest.User("alice")))
	if r := complete(); r.Code != 0 {
		t.Fatalf("complete_upload: code %d (%s)", r.Code, r.Message)
	}
	if err := srv.DB().InTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		return srv.Storage().Adopt(ctx, tx, svctest.User("alice"), key)
	}); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	svctest.Eventually(t, 10*time.Second, func() bool { return len(got.all()) == 1 }, "the claimed event")
	if f := got.all()[0]; f.FileKey != key {
		t.Errorf("claimed %+v, want key %s", f, key)
	}
}

// TestHostSinksAdd: a host audit sink (WithAuditSink) and a host security sink
// (security.Options.Events) receive their records in addition to the bus, whose subscribers
// still get svc.api.request.audit and the security events.
func TestHostSinksAdd(t *testing.T) {
	var busSec received[security.Event]
	var busAudits received[rpc.AuditEvent]
	var hostSec received[security.Event]
	var hostAudits received[rpc.AuditRecord]
	hostAudit := auditSinkFunc(func(_ context.Context, rec rpc.AuditRecord) { hostAudits.add(rec) })
	hostEvents := security.EventSinkFunc(func(_ context.Context, e security.Event) { hostSec.add(e) })
	srv := svctest.New(t, svctest.WithOptions(svc.WithModule(securityEvents(&busSec)), svc.WithModule(subscribeTyped(&busAudits)),
		svc.WithModule(auditedModule), svc.WithAuditSink(hostAudit), svc.WithSecurity(security.Options{Events: hostEvents})))
	if r := srv.Call(t, security.ResourceAuth, "login", map[string]any{"type": "password", "principal": "nobody", "credentials": "x"}); r.Code == 0 {
		t.Fatal("login of an unknown user succeeded")
	}
	if r := srv.Call(t, "test/audited", "ping", nil, svctest.As(svctest.User("bob"))); r.Code != 0 {
		t.Fatalf("ping: code %d (%s)", r.Code, r.Message)
	}
	svctest.Eventually(t, 10*time.Second, func() bool {
		return len(busSec.all()) == 1 && len(busAudits.all()) == 1
	}, "the bus's subscribers get the login failure and the audit event")
	if h := hostSec.all(); len(h) != 1 || h[0].Type != security.EventLoginFailed {
		t.Errorf("host security sink got %+v, want the login failure", h)
	}
	if h := hostAudits.all(); len(h) != 1 || h[0].Resource != "test/audited" || h[0].Action != "ping" {
		t.Errorf("host audit sink got %+v, want the ping record", h)
	}
}

// auditSinkFunc adapts a function to rpc.AuditSink.
type auditSinkFunc func(context.Context, rpc.AuditRecord)

func (f auditSinkFunc) Audit(ctx context.Context, rec rpc.AuditRecord) { f(ctx, rec) }
