package approval_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestAdminQueries runs the approval/admin queries on the three databases: permissions, the
// tenant rule (a non-super-admin sees its tenant whatever tenantId it sends; a super-admin every
// tenant or the one it asks for), filters, order, paging, DTO shapes and the metrics.
func TestAdminQueries(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		ids := queryFixture(e)
		for i, st := range []string{"failed", "failed", "applied", "pending"} {
			projection(e, "t1", ids["i1"], st, i)
		}
		projection(e, "t2", ids["i2"], "failed", 9)
		finishAfter(e, ids["i1"], 90*time.Second)
		if _, err := e.srv.DB().NewUpdate().Table("apv_task").Set("is_timeout = ?", true).Where("instance_id = ?", ids["i4"]).
			Where("assignee_id = ?", "u1").Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		t2, super, nobody := tenantUser("bob", "t2", "admin"), superUser("root"), tenantUser("nob", "t1", "nobody")
		steps := []step{
			{name: "instances newest first", resource: adminR, action: "find_instances", params: `{}`, check: all(
				want("total", 4, "items.0.instanceId", "$i4", "items.3.instanceId", "$i1", "items.0.tenantId", "t1", "items.0.flowName", "Flow par",
					"items.0.applicant.id", "app2", "items.0.status", "running", "items.0.currentNodeName", "A", "items.3.status", "approved"),
				keys("items.0", "instanceId", "instanceNo", "title", "tenantId", "flowId", "flowName", "applicant", "status", "currentNodeName", "createdAt"),
				notNull("items.3.finishedAt"))},
			{name: "instances by applicant", resource: adminR, action: "find_instances", params: `{"applicantId":"app"}`, check: want("total", 3)},
			{name: "instances by status", resource: adminR, action: "find_instances", params: `{"status":"approved"}`, check: want("total", 1, "items.0.instanceId", "$i1")},
			{name: "instances by flow", resource: adminR, action: "find_instances", params: `{"flowId":"nope"}`, check: want("total", 0)},
			{name: "instances by keyword", resource: adminR, action: "find_instances", params: `{"keyword":"app2"}`, check: want("total", 1)},
			{name: "instances paged", resource: adminR, action: "find_instances", params: `{"page":2,"pageSize":3}`, check: all(want("total", 4, "items.0.instanceId", "$i1"), length("items", 1))},
			{name: "instances of another tenant", as: t2, resource: adminR, action: "find_instances", params: `{"tenantId":"t1"}`, check: want("total", 0)},
			{name: "super-admin everywhere", as: super, resource: adminR, action: "find_instances", params: `{}`, check: want("total", 4)},
			{name: "super-admin asks t2", as: super, resource: adminR, action: "find_instances", params: `{"tenantId":"t2"}`, check: want("total", 0)},
			{name: "instances need permission", as: nobody, resource: adminR, action: "find_instances", params: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "tasks newest first", resource: adminR, action: "find_tasks", params: `{}`, check: all(
				want("total", 8, "items.0.instanceTitle", "app2: Flow par", "items.0.nodeName", "A", "items.0.status", "pending"),
				keys("items.0", "taskId", "instanceId", "instanceTitle", "flowName", "nodeName", "assignee", "status", "createdAt"))},
			{name: "tasks by instance", resource: adminR, action: "find_tasks", params: `{"instanceId":"$i1$"}`, check: all(
				want("total", 2, "items.0.status", "approved"), notNull("items.0.finishedAt"))},
			{name: "tasks by assignee and status", resource: adminR, action: "find_tasks", params: `{"assigneeId":"u2","status":"approved"}`,
				check: want("total", 2, "items.0.assignee.id", "u2", "items.0.instanceId", "$i2")},
			{name: "tasks of another tenant", as: t2, resource: adminR, action: "find_tasks", params: `{}`, check: want("total", 0)},
			{name: "tasks need permission", as: nobody, resource: adminR, action: "find_tasks", params: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "logs oldest first", resource: adminR, action: "find_action_logs", params: `{"instanceId":"$i1$"}`, check: all(
				want("total", 3, "items.0.action", "submit", "items.0.operator.id", "app", "items.1.action", "approve", "items.2.opinion", "ok",
					"items.2.operator.id", "u2"),
				keys("items.0", "logId", "action", "nodeId", "operator", "createdAt"))},
			{name: "logs paged", resource: adminR, action: "find_action_logs", params: `{"instanceId":"$i1$","page":2,"pageSize":2}`, check: all(want("total", 3), length("items", 1))},
			{name: "logs of another tenant", as: t2, resource: adminR, action: "find_action_logs", params: `{"instanceId":"$i1$"}`, check: want("total", 0)},
			{name: "logs need an instance", resource: adminR, action: "find_action_logs", params: `{}`, wantCode: rpc.CodeBadRequest},
			{name: "logs need permission", as: nobody, resource: adminR, action: "find_action_logs", params: `{"instanceId":"$i1$"}`, wantCode: rpc.CodeAccessDenied},
			{name: "metrics", resource: adminR, action: "get_metrics", params: `{"tenantId":"t2"}`, check: all(
				want("tenantId", "t1", "instanceCounts", map[string]int{"running": 3, "approved": 1, "rejected": 0, "withdrawn": 0, "returned": 0, "terminated": 0},
					"taskCounts.pending", 5, "taskCounts.approved", 3, "taskCounts.waiting", 0, "timeoutTaskCount", 1,
					"businessProjectionCounts", map[string]int{"pending": 1, "processing": 0, "applied": 1, "failed": 2},
					"pendingBindingFailures", 2, "pendingBusinessProjections", 3),
				near("avgCompletionSeconds", 90), notNull("capturedAt"))},
			{name: "metrics of t2", as: t2, resource: adminR, action: "get_metrics", params: `{}`, check: want("tenantId", "t2",
				"instanceCounts.running", 0, "avgCompletionSeconds", -1, "pendingBindingFailures", 1)},
			{name: "metrics of every tenant", as: super, resource: adminR, action: "get_metrics", params: `{}`, check: want("tenantId", "",
				"instanceCounts.running", 3, "pendingBindingFailures", 3)},
			{name: "metrics need permission", as: nobody, resource: adminR, action: "get_metrics", params: `{}`, wantCode: rpc.CodeAccessDenied},
		}
		run(t, e.srv, withIDNames(steps, ids), ids)
	})
}

// projection inserts a business projection row of tenant owned by instance with status (the
// binding piece fills the table; the metrics only count it).
func projection(e *eng, tenant, instance, status string, n int) {
	e.t.Helper()
	now := time.Now().UTC()
	row := map[string]any{"id": "p" + tenant + string(rune('a'+n)), "tenant_id": tenant, "flow_id": "f", "flow_version_id": "v",
		"owner_instance_id": instance, "target_hash": tenant + status + string(rune('a'+n)), "consistency": "eventual",
		"binding": "{}", "record_key": "{}", "desired_status": "running", "desired_started_at": now, "desired_revision": 1,
		"status": status, "created_at": now, "updated_at": now}
	if _, err := e.srv.DB().NewInsert().Model(&row).TableExpr("apv_business_projection").Exec(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// finishAfter sets the instance's finished_at to d after its created_at.
func finishAfter(e *eng, id string, d time.Duration) {
	e.t.Helper()
	var inst approval.Instance
	ctx := context.Background()
	if err := e.srv.DB().NewSelect().Model(&inst).Where("id = ?", id).Scan(ctx); err != nil {
		e.t.Fatal(err)
	}
	inst.FinishedAt = crud.NewTime(inst.CreatedAt.Add(d))
	if _, err := e.srv.DB().NewUpdate().Model(&inst).Column("finished_at").WherePK().Exec(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// near checks the number at path is within a millisecond of v.
func near(path string, v float64) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		if got, ok := jsonAt(t, data, path).(float64); !ok || math.Abs(got-v) > 0.001 {
			t.Errorf("%s = %v, want %v", path, jsonAt(t, data, path), v)
		}
	}
}

// TestQueryAccess: the approval/admin queries need a token (1000) and their permission of
// wire-approval §12 (1100); the approval/my queries need only a token — a principal without
// any permission gets its own answer.
func TestQueryAccess(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"find_instances": "approval.instance.query", "find_tasks": "approval.task.query",
		"find_action_logs": "approval.action_log.query", "get_metrics": "approval.metrics.query"}
	roles := map[string][]string{"nothing": {}}
	for _, perm := range admin {
		roles[perm] = []string{perm}
	}
	srv := svctest.New(t, svctest.WithDB(config.SQLite), svctest.WithConfig(func(c *config.Config) { c.Security.Roles = roles }),
		svctest.WithOptions(approvalOption()))
	nothing := svctest.User("u", "nothing")
	for action, perm := range admin {
		params := map[string]any{"instanceId": "x"}
		if r := srv.Call(t, adminR, action, params); r.Code != rpc.CodeUnauthenticated {
			t.Errorf("%s without a token: code %d, want 1000", action, r.Code)
		}
		if r := srv.Call(t, adminR, action, params, svctest.As(nothing)); r.Code != rpc.CodeAccessDenied {
			t.Errorf("%s without %s: code %d, want 1100", action, perm, r.Code)
		}
		if r := srv.Call(t, adminR, action, params, svctest.As(svctest.User("u", perm))); r.Code != 0 {
			t.Errorf("%s with %s: code %d (%s)", action, perm, r.Code, r.Message)
		}
	}
	for _, action := range []string{"find_available_flows", "find_initiated", "find_pending_tasks", "find_completed_tasks",
		"find_cc_records", "get_pending_counts"} {
		if r := srv.Call(t, myR, action, map[string]any{}); r.Code != rpc.CodeUnauthenticated {
			t.Errorf("my.%s without a token: code %d, want 1000", action, r.Code)
		}
		if r := srv.Call(t, myR, action, map[string]any{}, svctest.As(nothing)); r.Code != 0 {
			t.Errorf("my.%s without permissions: code %d (%s), want 0", action, r.Code, r.Message)
		}
	}
}
