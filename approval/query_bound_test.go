package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// stmtCounter is a bun query hook recording the statements on the apv_* tables while on.
type stmtCounter struct {
	on    atomic.Bool
	mu    sync.Mutex
	stmts []string
}

var _ bun.QueryHook = (*stmtCounter)(nil)

// BeforeQuery implements bun.QueryHook.
func (c *stmtCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (c *stmtCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if c.on.Load() && strings.Contains(e.Query, "apv_") {
		c.mu.Lock()
		c.stmts = append(c.stmts, e.Query)
		c.mu.Unlock()
	}
}

// measure calls and answers the apv_* statements the call issued.
func (c *stmtCounter) measure(fn func()) []string {
	c.mu.Lock()
	c.stmts = nil
	c.mu.Unlock()
	c.on.Store(true)
	fn()
	c.on.Store(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts
}

// queryBound is a query and the number of statements it issues whatever the page holds: stmts
// for a page that is not full, stmts+count for a full one (the COUNT a full page needs for its
// total); paged queries answer {total, items}.
type queryBound struct {
	resource, action, params string
	as                       *rpc.Principal
	stmts, count             int
	paged                    bool
}

// TestQueryStatementBounds holds issue #24 item 5: each list of approval/my and approval/admin
// answers in the number of statements stated in docs/approval.md (Reference) with 1 row and with 25 (a full page: the
// lists on scanPage add their COUNT) — no lookup per row — and with the right total. The workers are held off (long scan intervals) so only the call counts.
func TestQueryStatementBounds(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		sc := &stmtCounter{}
		e := newEng(t, kind, svctest.WithQueryHook(sc), svctest.WithConfig(func(c *config.Config) {
			c.Approval.TimeoutScanInterval, c.Approval.PreWarningScanInterval = 1000*time.Hour, 1000*time.Hour
			c.Approval.CleanupScanInterval, c.Approval.BusinessBinding.ScanInterval = 1000*time.Hour, 1000*time.Hour
		}))
		e.flow("par", `{"id":"c","kind":"cc","position":{"x":0,"y":0},"data":{"name":"Copy","ccs":[{"kind":"user","ids":["u9"]}]}},`+
			approvalNode("a", users("u1", "u2")), "s>c", "c>a", "a>end")
		restrictedFlow(e, "only", `[{"kind":"user","ids":["app"]}]`)
		e.flow("solo", approvalNode("a", users("u7")), "s>a", "a>end")
		restrict(e, "solo", `[{"kind":"user","ids":["app2"]}]`)
		logged := e.start(user("app2"), "solo", `{"amount":1}`)
		more := func(n int) {
			for range n {
				id := e.start(user("app"), "par", `{"amount":1}`)
				e.must(e.decide(id, "u2", "approve", ""))
			}
		}
		more(1)
		u1, page := user("u1"), `"page":1,"pageSize":25`
		bounds := []queryBound{
			{myR, "find_available_flows", `{` + page + `}`, u1, 2, 0, true},
			{myR, "find_initiated", `{` + page + `}`, user("app"), 1, 1, true},
			{myR, "find_pending_tasks", `{` + page + `}`, u1, 1, 1, true},
			{myR, "find_completed_tasks", `{` + page + `}`, user("u2"), 1, 1, true},
			{myR, "find_cc_records", `{` + page + `}`, user("u9"), 1, 1, true},
			{myR, "get_pending_counts", `{}`, u1, 2, 0, false},
			{myR, "get_start_form", `{"flowCode":"par"}`, u1, 1, 0, false},
			{adminR, "find_instances", `{"applicantId":"app",` + page + `}`, alice, 1, 1, true},
			{adminR, "find_tasks", `{"assigneeId":"u1",` + page + `}`, alice, 1, 1, true},
			{adminR, "find_action_logs", `{"instanceId":"` + logged + `",` + page + `}`, alice, 1, 1, true},
			{adminR, "get_metrics", `{}`, alice, 3, 0, false},
		}
		checkBounds(t, e, sc, bounds, 1)
		more(24)
		for i := range 24 {
			e.flow(fmt.Sprintf("f%02d", i), approvalNode("a", users("u1")), "s>a", "a>end")
			actionLog(e, logged, i)
		}
		checkBounds(t, e, sc, bounds, 25)
		// Past the first page: a partial page gives the total by itself, an empty one counts.
		for _, c := range []struct{ page, items, stmts int }{{2, 5, 1}, {3, 0, 2}} {
			var r svctest.Response
			stmts := sc.measure(func() {
				r = e.call(u1, myR, "find_pending_tasks", fmt.Sprintf(`{"page":%d,"pageSize":20}`, c.page))
			})
			var p struct {
				Total int
				Items []json.RawMessage
			}
			_ = json.Unmarshal(r.Data, &p)
			if r.Code != 0 || len(p.Items) != c.items || p.Total != 25 || len(stmts) != c.stmts {
				t.Errorf("find_pending_tasks page %d of 20: code %d, %d items, total %d, %d statements; want %d items, total 25, %d statements",
					c.page, r.Code, len(p.Items), p.Total, len(stmts), c.items, c.stmts)
			}
		}
	})
}

// checkBounds calls each query and checks its statement count and, for lists, that the page
// holds rows items and the total counts them (rows = 25 fills the page).
func checkBounds(t *testing.T, e *eng, sc *stmtCounter, bounds []queryBound, rows int) {
	t.Helper()
	for _, b := range bounds {
		var r svctest.Response
		stmts := sc.measure(func() { r = e.call(b.as, b.resource, b.action, b.params) })
		if r.Code != 0 {
			t.Fatalf("%s.%s: code %d %s", b.resource, b.action, r.Code, r.Message)
		}
		want := b.stmts
		if rows == 25 {
			want += b.count
		}
		if len(stmts) != want {
			t.Errorf("%s.%s with %d rows: %d statements, want %d:\n%s", b.resource, b.action, rows, len(stmts), want, strings.Join(stmts, "\n"))
		}
		if b.paged {
			var p struct {
				Total int
				Items []json.RawMessage
			}
			_ = json.Unmarshal(r.Data, &p)
			if len(p.Items) != rows || p.Total != rows {
				t.Errorf("%s.%s: %d items, total %d, want %d", b.resource, b.action, len(p.Items), p.Total, rows)
			}
		}
	}
}

// actionLog inserts a comment-like action log on the instance (the audit trail's length is
// what find_action_logs pages over).
func actionLog(e *eng, instance string, n int) {
	e.t.Helper()
	row := map[string]any{"id": fmt.Sprintf("log%s%02d", instance, n), "instance_id": instance, "action": "add_cc",
		"operator_id": "app2", "operator_name": "app2", "created_at": time.Now().UTC(), "added_assignees": "[]",
		"removed_assignees": "[]", "cc_users": "[]"}
	if _, err := e.srv.DB().NewInsert().Model(&row).TableExpr("apv_action_log").Exec(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// TestCommandReads holds the reads of the engine's hot path (docs/approval.md, Benchmark):
// start reads the flow and the assignee's delegations (the published version and its graph are
// cached) and writes its instance with one insert, no update; a decision locks the instance and then, in one statement, the tasks of the task's
// visit with the instance's last visit sequence — entering the end node needs no read of its own.
func TestCommandReads(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		sc := &stmtCounter{}
		e := newEng(t, kind, svctest.WithQueryHook(sc), svctest.WithConfig(func(c *config.Config) { // only the calls count
			c.Approval.TimeoutScanInterval, c.Approval.PreWarningScanInterval = 1000*time.Hour, 1000*time.Hour
			c.Approval.CleanupScanInterval, c.Approval.BusinessBinding.ScanInterval = 1000*time.Hour, 1000*time.Hour
		}))
		e.flow("hot", approvalNode("a", users("u1")), "s>a", "a>end")
		e.start(user("app"), "hot", `{}`) // fills the caches
		selects := func(stmts []string) []string {
			return slices.DeleteFunc(stmts, func(q string) bool { return !strings.HasPrefix(strings.TrimSpace(q), "SELECT") })
		}
		var id string
		stmts := sc.measure(func() { id = e.start(user("app"), "hot", `{}`) })
		for _, q := range stmts { // the insert, flushed at the commit, writes the final row
			if strings.Contains(q, `UPDATE "apv_instance"`) || strings.Contains(q, "UPDATE `apv_instance`") {
				t.Errorf("start updated the instance it inserts: %s", q)
			}
		}
		reads := selects(stmts)
		if len(reads) != 2 {
			t.Errorf("start read %d times, want 2 (flow, delegations):\n%s", len(reads), strings.Join(reads, "\n"))
		}
		task := e.task(id, "u1")
		var r svctest.Response
		reads = selects(sc.measure(func() { r = e.call(user("u1"), instR, "process_task", `{"taskId":"`+task+`","action":"approve"}`) }))
		e.must(r)
		if len(reads) != 2 {
			t.Errorf("approve read %d times, want 2 (instance, visit):\n%s", len(reads), strings.Join(reads, "\n"))
		}
		e.wantStatus(id, approval.InstanceApproved)
	})
}
