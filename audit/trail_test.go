package audit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/audit"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// roles is a permission checker over the principal's roles, used as permission tokens.
type roles struct{}

func (roles) HasPermission(_ context.Context, p *rpc.Principal, token string) (bool, error) {
	return slices.Contains(p.Roles, token), nil
}

// thingParams are the params of the test's audited operation; Password must be redacted.
type thingParams struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// thingModule mounts test/thing do: audited, any signed-in caller, refused for name "bad".
func thingModule(app.Deps) (app.Module, error) {
	do := func(_ context.Context, _ rpc.Call, p thingParams) (map[string]string, error) {
		if p.Name == "bad" {
			return nil, rpc.ErrBadRequest.WithMessage("bad name")
		}
		return map[string]string{"made": p.Name}, nil
	}
	return app.Module{Name: "thing", Resources: []rpc.Resource{{Name: "test/thing", Ops: []rpc.Op{
		rpc.Handle("do", do, rpc.Audit()),
	}}}}, nil
}

var (
	alice   = &rpc.Principal{Type: rpc.PrincipalUser, ID: "u-alice", Name: "alice"}
	bob     = &rpc.Principal{Type: rpc.PrincipalUser, ID: "u-bob", Name: "bob"}
	auditor = &rpc.Principal{Type: rpc.PrincipalUser, ID: "u-aud", Name: "auditor", Roles: []string{audit.PermQuery}}
)

// newServer boots a server with the trail on (unless mutate turns it off), the thing module and
// the roles checker.
func newServer(t *testing.T, kind config.DBKind, mutate func(*config.Config), opts ...svctest.Option) *svctest.Server {
	t.Helper()
	opts = append(opts, svctest.WithDB(kind), svctest.WithCheapHashing(), svctest.WithConfig(func(c *config.Config) {
		c.Audit.Enabled = true
		if mutate != nil {
			mutate(c)
		}
	}), svctest.WithOptions(svc.WithModule(thingModule), svc.WithPermissionChecker(roles{})))
	return svctest.New(t, opts...)
}

// page is a find_page answer.
type page struct {
	Page, Size int
	Total      int64
	Items      []audit.Record
}

// find pages the trail as the auditor and fails the test unless the call succeeds.
func find(t *testing.T, s *svctest.Server, search map[string]any) page {
	t.Helper()
	r := s.Call(t, audit.ResourceName, "find_page", search, svctest.As(auditor), svctest.WithMeta(map[string]any{"page": 1, "size": 100}))
	if r.Code != 0 {
		t.Fatalf("find_page(%v) code = %d (%s), want 0", search, r.Code, r.Message)
	}
	var p page
	r.DataAs(t, &p)
	return p
}

// waitTotal waits until the trail holds want records in all.
func waitTotal(t *testing.T, s *svctest.Server, want int64) {
	t.Helper()
	svctest.Eventually(t, 10*time.Second, func() bool { return find(t, s, nil).Total >= want }, "trail records written")
	if got := find(t, s, nil).Total; got != want {
		t.Fatalf("total = %d, want %d", got, want)
	}
}

// TestTrail: audited calls and a failed login are persisted with their fields, every filter
// selects what it says, get and stats answer, the permission is required, and reading the trail
// adds nothing to it.
func TestTrail(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		s := newServer(t, kind, nil)
		start := time.Now().Add(-time.Second).UnixMilli()
		ok := s.Call(t, "test/thing", "do", thingParams{Name: "one", Password: "hunter2"}, svctest.As(alice),
			svctest.WithHeader("User-Agent", "audit-test/1"))
		if ok.Code != 0 {
			t.Fatalf("do code = %d, want 0", ok.Code)
		}
		if r := s.Call(t, "test/thing", "do", thingParams{Name: "bad"}, svctest.As(alice)); r.Code != rpc.CodeBadRequest {
			t.Fatalf("do bad code = %d, want %d", r.Code, rpc.CodeBadRequest)
		}
		s.Call(t, "test/thing", "do", thingParams{Name: "two"}, svctest.As(bob))
		if r := s.Call(t, svctest.ResourceAuth, "login", map[string]any{"type": "password", "principal": "mallory",
			"credentials": "wrong"}); r.Code == 0 {
			t.Fatal("login of an unknown user succeeded")
		}
		waitTotal(t, s, 4)

		all := find(t, s, map[string]any{"user": "u-alice", "result": "ok"})
		if len(all.Items) != 1 {
			t.Fatalf("alice's successful calls = %d, want 1", len(all.Items))
		}
		rec := all.Items[0]
		if rec.UserID != "u-alice" || rec.UserName != "alice" || rec.Resource != "test/thing" || rec.Action != "do" ||
			rec.Version != "v1" || rec.Kind != audit.KindAPI || rec.Code != 0 || rec.Status != 200 || !rec.OK ||
			rec.ClientIP == "" || rec.UserAgent != "audit-test/1" || rec.RequestID != ok.Header.Get("X-Request-Id") ||
			rec.NodeID != s.Running.Audit().NodeID() || rec.At.UnixMilli() < start || rec.DurationMs < 0 {
			t.Errorf("record = %+v", rec)
		}
		var detail struct {
			Params map[string]any `json:"params"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(rec.Detail, &detail); err != nil {
			t.Fatalf("detail %s: %v", rec.Detail, err)
		}
		if detail.Params["password"] != rpc.RedactedAuditValue || detail.Params["name"] != "one" || detail.Result["made"] != "one" {
			t.Errorf("detail = %s, want the password redacted, the name and the result", rec.Detail)
		}
		if strings.Contains(string(rec.Detail), "hunter2") {
			t.Errorf("detail %s carries the password", rec.Detail)
		}

		now := time.Now().Add(time.Second).UnixMilli()
		for _, tt := range []struct {
			name   string
			search map[string]any
			want   int64
		}{
			{"user by id", map[string]any{"user": "u-alice"}, 2},
			{"user by name", map[string]any{"user": "bob"}, 1},
			{"failed login by identifier", map[string]any{"user": "mallory"}, 1},
			{"users", map[string]any{"users": []string{"u-bob", "mallory"}}, 2},
			{"failed", map[string]any{"result": "failed"}, 2},
			{"ok", map[string]any{"result": "ok"}, 2},
			{"code", map[string]any{"code": rpc.CodeBadRequest}, 1},
			{"resource and action", map[string]any{"resource": "test/thing", "action": "do"}, 3},
			{"security kind", map[string]any{"kind": audit.KindSecurity, "action": "login_failed"}, 1},
			{"range", map[string]any{"fromUnixMs": start, "toUnixMs": now}, 4},
			{"range in the future", map[string]any{"fromUnixMs": now}, 0},
			{"range in the past", map[string]any{"toUnixMs": start}, 0},
			{"node", map[string]any{"nodeId": s.Running.Audit().NodeID()}, 4},
			{"request id", map[string]any{"requestId": rec.RequestID}, 1},
		} {
			if got := find(t, s, tt.search).Total; got != tt.want {
				t.Errorf("%s: total = %d, want %d", tt.name, got, tt.want)
			}
		}

		g := s.Call(t, audit.ResourceName, "get", map[string]any{"id": rec.ID}, svctest.As(auditor))
		var got audit.Record
		g.DataAs(t, &got)
		if got.ID != rec.ID || got.RequestID != rec.RequestID {
			t.Errorf("get = %+v, want %+v", got, rec)
		}
		if r := s.Call(t, audit.ResourceName, "get", map[string]any{"id": "nope"}, svctest.As(auditor)); r.Code != rpc.CodeRecordNotFound {
			t.Errorf("get unknown code = %d, want %d", r.Code, rpc.CodeRecordNotFound)
		}
		if r := s.Call(t, audit.ResourceName, "find_page", nil, svctest.As(alice)); r.Code != rpc.CodeAccessDenied {
			t.Errorf("find_page without permission code = %d, want %d", r.Code, rpc.CodeAccessDenied)
		}
		if r := s.Call(t, audit.ResourceName, "find_page", map[string]any{"result": "maybe"}, svctest.As(auditor)); r.Code != rpc.CodeBadRequest {
			t.Errorf("find_page result maybe code = %d, want %d", r.Code, rpc.CodeBadRequest)
		}

		st := s.Call(t, audit.ResourceName, "stats", map[string]any{"fromUnixMs": start, "toUnixMs": now, "bucketMs": 3600000}, svctest.As(auditor))
		var stats audit.Stats
		st.DataAs(t, &stats)
		var calls, failures int64
		for _, b := range stats.Buckets {
			calls, failures = calls+b.Calls, failures+b.Failures
			if b.StartUnixMs%stats.BucketMs != 0 {
				t.Errorf("bucket start %d is not a multiple of %d", b.StartUnixMs, stats.BucketMs)
			}
		}
		if calls != 4 || failures != 2 || stats.BucketMs != 3600000 {
			t.Errorf("stats = %+v, want 4 calls and 2 failures in 1 h buckets", stats)
		}

		// None of the reads above was recorded.
		if c := s.Running.Audit().Counts(); c.Written != 4 || c.Dropped != 0 {
			t.Errorf("counts = %+v, want 4 written, none dropped", c)
		}
	})
}

// TestTrailSweep: the sweep deletes the records past the retention and keeps the others.
func TestTrailSweep(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		clock := svctest.NewClock(time.Now())
		s := newServer(t, kind, func(c *config.Config) { c.Audit.Retention = 48 * time.Hour }, svctest.WithClock(clock))
		s.Call(t, "test/thing", "do", thingParams{Name: "old"}, svctest.As(alice))
		waitTotal(t, s, 1)
		clock.Advance(25 * time.Hour)
		s.Call(t, "test/thing", "do", thingParams{Name: "new"}, svctest.As(alice))
		waitTotal(t, s, 2)
		clock.Advance(24 * time.Hour) // the first is 49 h old, the second 24 h
		if err := s.Running.Audit().Sweep(context.Background()); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		p := find(t, s, nil)
		if p.Total != 1 || !strings.Contains(string(p.Items[0].Detail), `"new"`) {
			t.Errorf("after the sweep: %+v, want only the newer record", p)
		}
	})
}

// TestTrailOff: with svc.audit.enabled = false the audited call succeeds, nothing is queued or
// written and sys/audit has no operations.
func TestTrailOff(t *testing.T) {
	t.Parallel()
	s := newServer(t, config.SQLite, func(c *config.Config) { c.Audit.Enabled = false })
	if r := s.Call(t, "test/thing", "do", thingParams{Name: "x"}, svctest.As(alice)); r.Code != 0 {
		t.Fatalf("do code = %d, want 0", r.Code)
	}
	if r := s.Call(t, audit.ResourceName, "find_page", nil, svctest.As(auditor)); r.Status != 404 {
		t.Errorf("find_page with the trail off: status %d, want 404", r.Status)
	}
	// Off, auto_migrate does not even create the table.
	var n int
	if err := s.Running.DB().NewSelect().Table("sys_audit_record").ColumnExpr("COUNT(*)").Scan(context.Background(), &n); err == nil {
		t.Errorf("sys_audit_record exists with %d rows, want no table", n)
	}
	if c := s.Running.Audit().Counts(); c != (audit.Counts{}) {
		t.Errorf("counts = %+v, want zero", c)
	}
}

// blockInserts is a query hook that holds every INSERT into sys_audit_record until release.
type blockInserts struct {
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func (b *blockInserts) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.HasPrefix(e.Query, "INSERT INTO") && strings.Contains(e.Query, "sys_audit_record") {
		b.once.Do(func() { close(b.held) })
		<-b.release
	}
	return ctx
}

func (b *blockInserts) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestTrailFullQueue: with the writer stuck in an INSERT and the queue full, audited calls still
// succeed at once and the records they could not queue are counted as dropped.
func TestTrailFullQueue(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		hook := &blockInserts{held: make(chan struct{}), release: make(chan struct{})}
		s := newServer(t, kind, func(c *config.Config) { c.Audit.QueueSize = 2; c.Audit.BatchSize = 1 }, svctest.WithQueryHook(hook))
		t.Cleanup(func() { close(hook.release) })
		s.Call(t, "test/thing", "do", thingParams{Name: "first"}, svctest.As(alice))
		<-hook.held // the writer holds the first record in its INSERT; the queue is empty
		for i := range 10 {
			if r := s.Call(t, "test/thing", "do", thingParams{Name: "more"}, svctest.As(alice)); r.Code != 0 {
				t.Fatalf("call %d code = %d, want 0", i, r.Code)
			}
		}
		if c := s.Running.Audit().Counts(); c.Dropped != 8 || c.Queued != 2 {
			t.Errorf("counts = %+v, want 8 dropped and 2 queued", c)
		}
	})
}

// TestTrailFailingStore: with the table gone every audited call still succeeds, and the
// records whose INSERT failed are counted as dropped.
func TestTrailFailingStore(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		s := newServer(t, kind, nil)
		if _, err := s.Running.DB().NewDropTable().Table("sys_audit_record").Exec(context.Background()); err != nil {
			t.Fatalf("drop table: %v", err)
		}
		for i := range 3 {
			if r := s.Call(t, "test/thing", "do", thingParams{Name: "x"}, svctest.As(alice)); r.Code != 0 {
				t.Fatalf("call %d code = %d, want 0", i, r.Code)
			}
		}
		svctest.Eventually(t, 10*time.Second, func() bool { return s.Running.Audit().Counts().Dropped == 3 }, "3 records dropped")
		if c := s.Running.Audit().Counts(); c.Written != 0 {
			t.Errorf("counts = %+v, want none written", c)
		}
	})
}

// TestTrailSeveralNodes: two servers on one database each write their own records, stamped with
// their node ids, to the shared table, and either reads both.
func TestTrailSeveralNodes(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		ds := svctest.DataSource(t, kind)
		shared := func(c *config.Config) { c.DataSources[config.PrimaryDataSource] = ds }
		a := newServer(t, kind, shared)
		b := newServer(t, kind, shared)
		if a.Running.Audit().NodeID() == b.Running.Audit().NodeID() {
			t.Fatalf("both nodes are named %q", a.Running.Audit().NodeID())
		}
		a.Call(t, "test/thing", "do", thingParams{Name: "on a"}, svctest.As(alice))
		b.Call(t, "test/thing", "do", thingParams{Name: "on b"}, svctest.As(bob))
		waitTotal(t, a, 2)
		for _, n := range []*svctest.Server{a, b} {
			p := find(t, a, map[string]any{"nodeId": n.Running.Audit().NodeID()})
			if p.Total != 1 {
				t.Errorf("records of node %s = %d, want 1", n.Running.Audit().NodeID(), p.Total)
			}
		}
		if got := find(t, b, nil).Total; got != 2 {
			t.Errorf("node b reads %d records, want 2", got)
		}
	})
}
