package approval_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// recorder collects the approval.flow.* events delivered to an in-process subscriber.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) module(d app.Deps) (app.Module, error) {
	for _, typ := range []string{approval.EventFlowCreated, approval.EventFlowUpdated, approval.EventFlowDeployed,
		approval.EventFlowToggled, approval.EventFlowPublished} {
		if _, err := d.Events.Subscribe(typ, func(_ context.Context, env *event.Envelope) error {
			b, _ := json.Marshal(env.Payload)
			r.mu.Lock()
			r.events = append(r.events, env.Type+" "+string(b))
			r.mu.Unlock()
			return nil
		}); err != nil {
			return app.Module{}, err
		}
	}
	return app.Module{Name: "recorder"}, nil
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// newFlowServer routes approval events to tx_memory (in-process, after commit) and records them.
func newFlowServer(t *testing.T, kind config.DBKind, rec *recorder) *svctest.Server {
	t.Helper()
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}, "viewer": {"approval.flow.query"}}
		c.Event.Transports.TxMemory.Enabled = true
		c.Event.Routing = []config.EventRoute{{Pattern: "approval.*", Transports: []string{config.TransportTxMemory}}}
	}), svctest.WithOptions(svc.WithApproval(approval.Options{}), svc.WithModule(rec.module)))
}

// createBizTable creates the host business table the binding tests name: id primary key, a
// nullable unique code, the status and instance columns.
func createBizTable(t *testing.T, srv *svctest.Server) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE biz_order (id VARCHAR(36) NOT NULL PRIMARY KEY, code VARCHAR(36) NULL, tenant VARCHAR(36) NOT NULL,
			no VARCHAR(36) NOT NULL, status VARCHAR(16) NULL, apv_instance_id VARCHAR(64) NULL, started_at TIMESTAMP NULL,
			finished_at TIMESTAMP NULL, CONSTRAINT uk_biz_order_code UNIQUE (code), CONSTRAINT uk_biz_order_tenant_no UNIQUE (tenant, no))`,
	} {
		if _, err := srv.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

const binding = `"bindingMode":"business","businessBinding":{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"status","instanceIdColumn":"apv_instance_id","startedAtColumn":"started_at","finishedAtColumn":"finished_at","statusMapping":{"approved":"DONE"}}`

// TestFlows runs approval/flow's commands and queries (deploy aside) on the three databases in
// the client's shapes (page/pageSize in params for find_flows), with tenancy, validation codes,
// the business-binding check against the live schema, and the approval.flow.* events.
func TestFlows(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		rec := &recorder{}
		srv := newFlowServer(t, kind, rec)
		createBizTable(t, srv)
		flow := func(code, extra string) string {
			return `{"tenantId":"t1","code":"` + code + `","name":"Flow ` + code + `","categoryId":"$cat$","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""` + extra + `}`
		}
		bind := func(b string) string {
			return `{"tenantId":"t1","code":"b","name":"B","categoryId":"$cat$","bindingMode":"business","isAllInitiationAllowed":true,"instanceTitleTemplate":"","businessBinding":` + b + `}`
		}
		steps := []step{
			{name: "cat", resource: catR, action: "create", params: `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`},
			{name: "cat2", as: bob, resource: catR, action: "create", params: `{"tenantId":"t2","code":"c","name":"C","sortOrder":0,"isActive":true}`},
			{name: "leave", resource: flowR, action: "create", params: flow("leave", `,"labels":{"app":"hr","mobile":"yes"},"adminUserIds":["alice"],"icon":"i","description":"d","initiators":[{"kind":"role","ids":["staff"]},{"kind":"department","ids":["d1","d2"]}]`),
				check: want("code", "leave", "tenantId", "t1", "isActive", false, "currentVersion", 0, "instanceTitleTemplate", "{{.flowName}}-{{.instanceNo}}",
					"labels.app", "hr", "adminUserIds", []string{"alice"}, "bindingMode", "standalone", "createdBy", "alice")},
			{name: "trip", resource: flowR, action: "create", params: flow("trip", `,"labels":{"app":"fin"},"instanceTitleTemplate":"{{.applicantName}} trip"`)},
			{name: "biz", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"biz","name":"Biz","categoryId":"$cat$",` + binding + `,"isAllInitiationAllowed":false,"instanceTitleTemplate":"x"}`,
				check: want("businessBinding.keyColumns", []string{"id"}, "isAllInitiationAllowed", false)},
			{name: "code exists", resource: flowR, action: "create", params: flow("leave", ""), wantCode: approval.ErrCodeFlowCodeExists},
			{name: "same code in t2", as: bob, resource: flowR, action: "create", params: `{"tenantId":"","code":"leave","name":"L","categoryId":"$cat2$","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`,
				check: want("tenantId", "t2")},
			{name: "other tenant asked", as: bob, resource: flowR, action: "create", params: flow("x", ""), wantCode: approval.ErrCodeAccessDenied},
			{name: "category of another tenant", as: bob, resource: flowR, action: "create", params: `{"tenantId":"t2","code":"y","name":"Y","categoryId":"$cat$","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`, wantCode: rpc.CodeBadRequest},
			{name: "bad binding mode", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"m","name":"M","categoryId":"$cat$","bindingMode":"mixed","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`, wantCode: approval.ErrCodeInvalidBindingMode},
			{name: "binding on standalone", resource: flowR, action: "create", params: flow("u", `,"businessBinding":{"tableName":"biz_order"}`), wantCode: approval.ErrCodeBindingUnexpected},
			{name: "bad template", resource: flowR, action: "create", params: flow("t", `,"instanceTitleTemplate":"{{.flowName"`), wantCode: approval.ErrCodeInvalidTitleTemplate},
			{name: "bad initiator", resource: flowR, action: "create", params: flow("i", `,"initiators":[{"kind":"group","ids":["g"]}]`), wantCode: approval.ErrCodeInvalidInitiatorKind},
			{name: "bad label", resource: flowR, action: "create", params: flow("l", `,"labels":{"-bad":"x"}`), wantCode: rpc.CodeBadRequest},
			{name: "missing name", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"n","categoryId":"$cat$","bindingMode":"standalone"}`, wantCode: rpc.CodeBadRequest},
			{name: "binding missing", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"b","name":"B","categoryId":"$cat$","bindingMode":"business","instanceTitleTemplate":""}`, wantCode: approval.ErrCodeBindingIncomplete},
			{name: "binding without instance column", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"status"}`), wantCode: approval.ErrCodeBindingIncomplete},
			{name: "binding bad identifier", resource: flowR, action: "create", params: bind(`{"tableName":"biz order","keyColumns":["id"],"statusColumn":"status","instanceIdColumn":"apv_instance_id"}`), wantCode: approval.ErrCodeInvalidBusinessIdentifier},
			{name: "binding conflict", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"status","instanceIdColumn":"status"}`), wantCode: approval.ErrCodeBindingColumnsConflict},
			{name: "binding bad mapping", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"status","instanceIdColumn":"apv_instance_id","statusMapping":{"paused":"P"}}`), wantCode: approval.ErrCodeBindingStatusMappingInvalid},
			{name: "binding missing table", resource: flowR, action: "create", params: bind(`{"tableName":"no_such","keyColumns":["id"],"statusColumn":"status","instanceIdColumn":"apv_instance_id"}`), wantCode: approval.ErrCodeBindingSchemaInvalid},
			{name: "binding missing column", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"state","instanceIdColumn":"apv_instance_id"}`), wantCode: approval.ErrCodeBindingSchemaInvalid},
			{name: "binding key not unique", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["no"],"statusColumn":"status","instanceIdColumn":"apv_instance_id"}`), wantCode: approval.ErrCodeBindingKeyNotUnique},
			{name: "binding nullable unique key", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["code"],"statusColumn":"status","instanceIdColumn":"apv_instance_id"}`), wantCode: approval.ErrCodeBindingKeyNotUnique},
			{name: "binding composite key", resource: flowR, action: "create", params: bind(`{"tableName":"biz_order","keyColumns":["no","tenant"],"statusColumn":"status","instanceIdColumn":"apv_instance_id"}`)},
			{name: "page of flows", resource: flowR, action: "find_flows", params: `{"page":1,"pageSize":2}`,
				check: all(want("total", 4, "page", 1, "size", 2, "items.0.code", "b", "items.1.code", "biz"), length("items", 2))},
			{name: "default page size", resource: flowR, action: "find_flows", params: `{}`, check: want("size", 20, "total", 4)},
			{name: "keyword", resource: flowR, action: "find_flows", params: `{"keyword":"Flow"}`, check: want("total", 2)},
			{name: "labels", resource: flowR, action: "find_flows", params: `{"labels":{"app":"hr"}}`, check: all(want("total", 1, "items.0.code", "leave"))},
			{name: "two labels", resource: flowR, action: "find_flows", params: `{"labels":{"app":"hr","mobile":"no"}}`, check: want("total", 0)},
			{name: "category", resource: flowR, action: "find_flows", params: `{"categoryId":"$cat$","isActive":false}`, check: want("total", 4)},
			{name: "viewer lists", as: viewer, resource: flowR, action: "find_flows", params: `{}`, check: want("total", 4)},
			{name: "t2 lists its own", as: bob, resource: flowR, action: "find_flows", params: `{"tenantId":"t1"}`, check: want("total", 1, "items.0.tenantId", "t2")},
			{name: "super lists all", as: root, resource: flowR, action: "find_flows", params: `{}`, check: want("total", 5)},
			{name: "super lists t2", as: root, resource: flowR, action: "find_flows", params: `{"tenantId":"t2"}`, check: want("total", 1)},
			{name: "initiators", resource: flowR, action: "find_initiators", params: `{"flowId":"$leave$"}`,
				check: all(length("", 2), want("0.kind", "department", "0.ids", []string{"d1", "d2"}, "0.flowId", "$leave", "1.kind", "role"))},
			{name: "initiators cross-tenant", as: bob, resource: flowR, action: "find_initiators", params: `{"flowId":"$leave$"}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "initiators super", as: root, resource: flowR, action: "find_initiators", params: `{"flowId":"$leave$"}`, check: length("", 2)},
			{name: "update", resource: flowR, action: "update", params: `{"flowId":"$leave$","name":"Leave","bindingMode":"standalone","isAllInitiationAllowed":false,"instanceTitleTemplate":"{{.flowName}}","initiators":[{"kind":"user","ids":["u9"]}]}`,
				check: want("name", "Leave", "code", "leave", "labels", nil, "isAllInitiationAllowed", false, "instanceTitleTemplate", "{{.flowName}}", "adminUserIds", []string{})},
			{name: "initiators replaced", resource: flowR, action: "find_initiators", params: `{"flowId":"$leave$"}`, check: all(length("", 1), want("0.kind", "user"))},
			{name: "update cross-tenant", as: bob, resource: flowR, action: "update", params: `{"flowId":"$leave$","name":"X","bindingMode":"standalone","instanceTitleTemplate":"x"}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "update bad template", resource: flowR, action: "update", params: `{"flowId":"$leave$","name":"X","bindingMode":"standalone","instanceTitleTemplate":"{{if}}"}`, wantCode: approval.ErrCodeInvalidTitleTemplate},
			{name: "toggle", resource: flowR, action: "toggle_active", params: `{"flowId":"$leave$","isActive":true}`},
			{name: "active", resource: flowR, action: "find_flows", params: `{"isActive":true}`, check: all(want("total", 1, "items.0.isActive", true))},
			{name: "toggle cross-tenant", as: bob, resource: flowR, action: "toggle_active", params: `{"flowId":"$leave$","isActive":false}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "toggle viewer", as: viewer, resource: flowR, action: "toggle_active", params: `{"flowId":"$leave$","isActive":false}`, wantCode: rpc.CodeAccessDenied},
			{name: "no versions yet", resource: flowR, action: "find_versions", params: `{"flowId":"$leave$"}`, check: length("", 0)},
			{name: "graph without version", resource: flowR, action: "get_graph", params: `{"flowId":"$leave$"}`,
				check: all(want("flow.code", "leave", "version", nil), length("nodes", 0), length("edges", 0))},
			{name: "graph unknown version", resource: flowR, action: "get_graph", params: `{"flowId":"$leave$","versionId":"nope"}`, wantCode: approval.ErrCodeVersionNotFound},
			{name: "graph unknown flow", resource: flowR, action: "get_graph", params: `{"flowId":"nope"}`, wantCode: approval.ErrCodeFlowNotFound},
			{name: "publish unknown", resource: flowR, action: "publish_version", params: `{"versionId":"nope"}`, wantCode: approval.ErrCodeVersionNotFound},
			{name: "flow in use", resource: catR, action: "delete", params: `{"id":"$cat$"}`, wantCode: rpc.CodeForeignKeyViolation},
		}
		ids := map[string]string{}
		run(t, srv, withIDNames(steps, ids), ids)
		got := rec.snapshot()
		wantTypes := []string{approval.EventFlowCreated, approval.EventFlowCreated, approval.EventFlowCreated, approval.EventFlowCreated,
			approval.EventFlowCreated, approval.EventFlowUpdated, approval.EventFlowToggled}
		if len(got) != len(wantTypes) {
			t.Fatalf("events = %d %v, want %d", len(got), got, len(wantTypes))
		}
		for i, w := range wantTypes {
			if len(got[i]) < len(w) || got[i][:len(w)] != w {
				t.Errorf("event %d = %s, want %s", i, got[i], w)
			}
		}
		var toggled approval.FlowEvent
		json.Unmarshal([]byte(got[6][len(approval.EventFlowToggled)+1:]), &toggled)
		if toggled.FlowID != ids["leave"] || toggled.TenantID != "t1" || toggled.Code != "leave" || toggled.IsActive == nil || !*toggled.IsActive {
			t.Errorf("toggled event = %+v", toggled)
		}
	})
}
