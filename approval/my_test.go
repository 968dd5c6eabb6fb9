package approval_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

const (
	myR    = "approval/my"
	adminR = "approval/admin"
)

// queryFixture starts the instances the query tests read, on flow "par" (a cc node copying u9,
// then approval node A for u1 and u2 under the all rule): i1, i2, i3 by app, i4 by app2; u1
// and u2 approve i1, which ends approved; u2 approves i2. It answers the instance ids by name.
func queryFixture(e *eng) map[string]string {
	e.t.Helper()
	e.flow("par", `{"id":"c","kind":"cc","position":{"x":0,"y":0},"data":{"name":"Copy","ccs":[{"kind":"user","ids":["u9"]}]}},`+
		approvalNode("a", users("u1", "u2")), "s>c", "c>a", "a>end")
	ids := map[string]string{}
	for i, who := range []string{"app", "app", "app", "app2"} {
		ids["i"+string(rune('1'+i))] = e.start(user(who), "par", `{"amount":1}`)
	}
	e.must(e.decide(ids["i1"], "u1", "approve", ""))
	e.must(e.decide(ids["i1"], "u2", "approve", `,"opinion":"ok"`))
	e.must(e.decide(ids["i2"], "u2", "approve", ""))
	return ids
}

// TestMyQueries runs approval/my on the three databases in the client's shapes: every list
// scoped to the caller and its tenant, filters, order, paging, counts, the available flows
// under the initiation rule and the start form behind start's gates.
func TestMyQueries(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		ids := queryFixture(e)
		restrictedFlow(e, "only", `[{"kind":"user","ids":["app"]}]`)
		restrictedFlow(e, "clerks", `[{"kind":"role","ids":["clerk"]},{"kind":"user","ids":["nobody"]}]`)
		u1, u2, u9, app := user("u1"), user("u2"), user("u9"), user("app")
		u1t2 := tenantUser("u1", "t2", "admin")
		steps := []step{
			{name: "pending newest first", as: u1, resource: myR, action: "find_pending_tasks", params: `{}`, check: all(
				want("total", 3, "page", 1, "size", 20, "items.0.instanceId", "$i4", "items.1.instanceId", "$i3", "items.2.instanceId", "$i2",
					"items.0.instanceTitle", "app2: Flow par", "items.0.flowName", "Flow par", "items.0.nodeName", "A",
					"items.0.applicant", map[string]any{"id": "app2", "name": "app2"}, "items.0.isTimeout", false,
					"items.0.deadline", nil, "items.0.flowIcon", nil),
				keys("items.0", "taskId", "instanceId", "instanceTitle", "instanceNo", "flowName", "applicant", "nodeName", "createdAt", "isTimeout"))},
			{name: "pending paged", as: u1, resource: myR, action: "find_pending_tasks", params: `{"page":2,"pageSize":2}`,
				check: all(want("total", 3, "page", 2, "size", 2, "items.0.instanceId", "$i2"), length("items", 1))},
			{name: "page size capped", as: u1, resource: myR, action: "find_pending_tasks", params: `{"pageSize":5000}`, check: want("size", 1000)},
			{name: "pending of u2", as: u2, resource: myR, action: "find_pending_tasks", params: `{}`, check: want("total", 2)},
			{name: "same user id in another tenant", as: u1t2, resource: myR, action: "find_pending_tasks", params: `{"tenantId":"t1"}`, check: want("total", 0)},
			{name: "someone else", as: user("u3"), resource: myR, action: "find_pending_tasks", params: `{}`, check: want("total", 0)},
			{name: "completed", as: u2, resource: myR, action: "find_completed_tasks", params: `{}`, check: all(
				want("total", 2, "items.0.instanceId", "$i2", "items.1.instanceId", "$i1", "items.0.status", "approved", "items.0.nodeName", "A"),
				keys("items.0", "taskId", "instanceId", "instanceTitle", "instanceNo", "flowName", "applicant", "nodeName", "status", "finishedAt"))},
			{name: "completed elsewhere", as: u1t2, resource: myR, action: "find_completed_tasks", params: `{}`, check: want("total", 0)},
			{name: "initiated", as: app, resource: myR, action: "find_initiated", params: `{}`, check: all(
				want("total", 3, "items.0.instanceId", "$i3", "items.2.instanceId", "$i1", "items.0.status", "running",
					"items.0.currentNodeName", "A", "items.0.title", "app: Flow par", "items.2.status", "approved"),
				keys("items.0", "instanceId", "instanceNo", "title", "flowName", "status", "currentNodeName", "createdAt"))},
			{name: "initiated by status", as: app, resource: myR, action: "find_initiated", params: `{"status":"approved"}`,
				check: all(want("total", 1, "items.0.instanceId", "$i1"), notNull("items.0.finishedAt"))},
			{name: "initiated by keyword", as: user("app2"), resource: myR, action: "find_initiated", params: `{"keyword":"app2:"}`, check: want("total", 1)},
			{name: "initiated keyword is literal", as: app, resource: myR, action: "find_initiated", params: `{"keyword":"%"}`, check: want("total", 0)},
			{name: "cc unread", as: u9, resource: myR, action: "find_cc_records", params: `{"isRead":false}`, check: all(
				want("total", 4, "items.0.instanceId", "$i4", "items.0.nodeName", "Copy", "items.0.isRead", false, "items.0.applicant.id", "app2"),
				keys("items.0", "ccRecordId", "instanceId", "instanceTitle", "instanceNo", "flowName", "applicant", "nodeName", "isRead", "createdAt"))},
			{name: "counts u1", as: u1, resource: myR, action: "get_pending_counts", params: `{}`, check: want("pendingTaskCount", 3, "unreadCcCount", 0)},
			{name: "counts u9", as: u9, resource: myR, action: "get_pending_counts", params: `{}`, check: want("pendingTaskCount", 0, "unreadCcCount", 4)},
			{name: "read one", as: u9, resource: instR, action: "mark_cc_read", params: `{"instanceId":"$i1$"}`},
			{name: "cc read", as: u9, resource: myR, action: "find_cc_records", params: `{"isRead":true}`, check: want("total", 1, "items.0.instanceId", "$i1", "items.0.isRead", true)},
			{name: "cc all", as: u9, resource: myR, action: "find_cc_records", params: `{}`, check: want("total", 4)},
			{name: "counts after read", as: u9, resource: myR, action: "get_pending_counts", params: `{}`, check: want("unreadCcCount", 3)},
			{name: "counts in another tenant", as: tenantUser("u9", "t2", "admin"), resource: myR, action: "get_pending_counts", params: `{}`, check: want("pendingTaskCount", 0, "unreadCcCount", 0)},
			{name: "super-admin asks a tenant", as: superUser("u1"), resource: myR, action: "get_pending_counts", params: `{"tenantId":"t2"}`, check: want("pendingTaskCount", 0)},
			{name: "super-admin across tenants", as: superUser("u1"), resource: myR, action: "get_pending_counts", params: `{}`, check: want("pendingTaskCount", 3)},
			{name: "available to app", as: app, resource: myR, action: "find_available_flows", params: `{}`, check: all(
				want("total", 2, "items.0.flowCode", "only", "items.1.flowCode", "par", "items.1.flowName", "Flow par", "items.1.categoryName", "C"),
				keys("items.0", "flowId", "flowCode", "flowName", "labels", "categoryId", "categoryName"))},
			{name: "available to others", as: u1, resource: myR, action: "find_available_flows", params: `{}`, check: want("total", 1, "items.0.flowCode", "par")},
			{name: "available by role", as: tenantUser("cleo", "t1", "admin", "clerk"), resource: myR, action: "find_available_flows", params: `{}`,
				check: want("total", 2, "items.0.flowCode", "clerks", "items.0.labels", map[string]string{"kind": "clerks"}, "items.1.flowCode", "par")},
			{name: "available by label", as: app, resource: myR, action: "find_available_flows", params: `{"labels":{"kind":"only"}}`, check: want("total", 1, "items.0.flowCode", "only")},
			{name: "available by keyword", as: app, resource: myR, action: "find_available_flows", params: `{"keyword":"only"}`, check: want("total", 1)},
			{name: "available paged", as: app, resource: myR, action: "find_available_flows", params: `{"page":2,"pageSize":1}`, check: all(want("total", 2, "items.0.flowCode", "par"), length("items", 1))},
			{name: "available in another tenant", as: tenantUser("app", "t2", "admin"), resource: myR, action: "find_available_flows", params: `{}`, check: want("total", 0)},
			{name: "start form", as: app, resource: myR, action: "get_start_form", params: `{"tenantId":"t1","flowCode":"only"}`, check: all(
				want("flowCode", "only", "flowName", "Flow only", "version", 1, "formSchema.version", 2), notNull("versionId"), notNull("flowId"))},
			{name: "start form of the caller's tenant", as: app, resource: myR, action: "get_start_form", params: `{"flowCode":"par"}`, check: want("flowCode", "par")},
			{name: "start form refused", as: u1, resource: myR, action: "get_start_form", params: `{"tenantId":"t1","flowCode":"only"}`, wantCode: approval.ErrCodeNotAllowedInitiate},
			{name: "start form unknown", as: app, resource: myR, action: "get_start_form", params: `{"tenantId":"t1","flowCode":"nope"}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "start form other tenant", as: tenantUser("app", "t2", "admin"), resource: myR, action: "get_start_form", params: `{"tenantId":"t1","flowCode":"par"}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "start form needs a code", as: app, resource: myR, action: "get_start_form", params: `{"tenantId":"t1"}`, wantCode: rpc.CodeBadRequest},
			{name: "no token", as: nil, resource: myR, action: "find_pending_tasks", params: `{}`, wantCode: rpc.CodeUnauthenticated},
		}
		runAs(t, e.srv, steps, ids)
		e.ok(alice, flowR, "toggle_active", `{"flowId":"`+flowID(e, "only")+`","isActive":false}`)
		e.refused(approval.ErrCodeFlowNotActive, app, myR, "get_start_form", `{"tenantId":"t1","flowCode":"only"}`)
		draft := e.ok(alice, flowR, "create", `{"tenantId":"t1","code":"draft","name":"Draft","categoryId":"`+e.cat+`","bindingMode":"standalone","isAllInitiationAllowed":true}`)
		e.ok(alice, flowR, "toggle_active", `{"flowId":"`+draft["id"].(string)+`","isActive":true}`)
		e.refused(approval.ErrCodeNoPublishedVersion, app, myR, "get_start_form", `{"tenantId":"t1","flowCode":"draft"}`)
		r := e.call(app, myR, "find_available_flows", `{}`)
		if got := jsonAt(t, r.Data, "total"); got != float64(1) {
			t.Errorf("available flows after deactivation = %v, want 1 (inactive and unpublished flows are not offered)", got)
		}
	})
}

// restrictedFlow publishes flow code like eng.flow, then restricts its initiation to initiators.
func restrictedFlow(e *eng, code, initiators string) {
	e.t.Helper()
	e.flow(code, approvalNode("a", users("u1")), "s>a", "a>end")
	restrict(e, code, initiators)
}

// restrict limits who may start flow code to initiators.
func restrict(e *eng, code, initiators string) {
	e.t.Helper()
	e.ok(alice, flowR, "update", `{"flowId":"`+flowID(e, code)+`","name":"Flow `+code+`","bindingMode":"standalone","isAllInitiationAllowed":false,
		"instanceTitleTemplate":"{{.flowName}}","labels":{"kind":"`+code+`"},"initiators":`+initiators+`}`)
}

// flowID is the id of flow code of tenant t1.
func flowID(e *eng, code string) string {
	e.t.Helper()
	var id string
	if err := e.srv.DB().NewSelect().Table("apv_flow").Column("id").Where("code = ?", code).Where("tenant_id = ?", "t1").
		Scan(context.Background(), &id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// superUser is an approval super-admin with id (tenant t1 in its details).
func superUser(id string) *rpc.Principal {
	return tenantUser(id, "t1", "admin", approval.SuperAdminRole)
}

// runAs plays steps where a nil as means no token at all (run defaults nil to alice).
func runAs(t *testing.T, srv *svctest.Server, steps []step, ids map[string]string) {
	t.Helper()
	for i, s := range steps {
		if s.as != nil {
			run(t, srv, withIDNames(steps[i:i+1], ids), ids)
			continue
		}
		if r := srv.Call(t, s.resource, s.action, map[string]any{}); r.Code != s.wantCode {
			t.Errorf("%s: code = %d, want %d", s.name, r.Code, s.wantCode)
		}
	}
}

// keys checks the object at path has exactly the keys listed (the client's DTO fields; the
// optional ones the answer leaves out when empty are not listed).
func keys(path string, names ...string) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		m, _ := jsonAt(t, data, path).(map[string]any)
		for _, n := range names {
			if _, ok := m[n]; !ok {
				t.Errorf("%s has no %s (%v)", path, n, m)
			}
		}
		if len(m) != len(names) {
			t.Errorf("%s has %d keys %v, want %v", path, len(m), m, names)
		}
	}
}

// notNull checks the value at path is present and not null.
func notNull(path string) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		if jsonAt(t, data, path) == nil {
			t.Errorf("%s is null (data %.400s)", path, data)
		}
	}
}
