package approval_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// Principals of the tests: admins of tenants t1 and t2 (tenantId in their details, as a host's
// user-info loader sets it), a super-admin, a t1 user with only query rights, and a user of the
// built-in store (no details: tenant "default").
var (
	alice  = tenantUser("alice", "t1", "admin")
	bob    = tenantUser("bob", "t2", "admin")
	root   = svctest.User("root", "admin", approval.SuperAdminRole)
	viewer = tenantUser("vic", "t1", "viewer")
	plain  = svctest.User("dora", "admin")
	broken = &rpc.Principal{Type: rpc.PrincipalUser, ID: "eve", Name: "eve", Roles: []string{"admin"}, Details: map[string]any{"dept": "x"}}
)

func tenantUser(id, tenant string, roles ...string) *rpc.Principal {
	p := svctest.User(id, roles...)
	p.Details = map[string]any{"tenantId": tenant}
	return p
}

func newServer(t *testing.T, kind config.DBKind, opts ...svc.Option) *svctest.Server {
	t.Helper()
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}, "viewer": {"approval.category.query",
			"approval.delegation.query", "approval.flow.query"}}
	}), svctest.WithOptions(append([]svc.Option{approvalOption()}, opts...)...))
}

// approvalOption includes the module with the built-in directory.
func approvalOption() svc.Option { return svc.WithApproval(approval.Options{}) }

// step is one row of a scenario: an /api call in the original client's shape and what it must
// answer. params is JSON where $name$ is replaced by the id the step named name created (the
// data's id, or flow id for approval/flow.create).
type step struct {
	name             string
	resource, action string
	params           string
	meta             map[string]any
	as               *rpc.Principal
	wantCode         int
	check            func(t *testing.T, data json.RawMessage)
}

// run plays the steps in order on srv.
func run(t *testing.T, srv *svctest.Server, steps []step, ids map[string]string) {
	t.Helper()
	for _, s := range steps {
		params := s.params
		for k, v := range ids {
			params = strings.ReplaceAll(params, "$"+k+"$", v)
		}
		var p any
		if params != "" {
			if err := json.Unmarshal([]byte(params), &p); err != nil {
				t.Fatalf("%s: params %s: %v", s.name, params, err)
			}
		}
		as := s.as
		if as == nil {
			as = alice
		}
		opts := []svctest.CallOption{svctest.As(as)}
		if s.meta != nil {
			opts = append(opts, svctest.WithMeta(s.meta))
		}
		r := srv.Call(t, s.resource, s.action, p, opts...)
		if r.Code != s.wantCode {
			t.Errorf("%s: code = %d (%s), want %d", s.name, r.Code, r.Message, s.wantCode)
			continue
		}
		if r.Code == 0 {
			var c struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(r.Data, &c) == nil && c.ID != "" {
				ids[s.name] = c.ID
			}
		}
		if s.check != nil {
			s.check(t, r.Data)
		}
	}
}

// jsonAt returns the value at a dotted path of data (array indexes as numbers).
func jsonAt(t *testing.T, data json.RawMessage, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	for _, p := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i := 0
			for _, ch := range p {
				i = i*10 + int(ch-'0')
			}
			if i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// want checks the values at paths (JSON-encoded comparison).
func want(pairs ...any) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		for i := 0; i+1 < len(pairs); i += 2 {
			path := pairs[i].(string)
			got, _ := json.Marshal(jsonAt(t, data, path))
			exp, _ := json.Marshal(pairs[i+1])
			if string(got) != string(exp) {
				t.Errorf("%s = %s, want %s (data %.400s)", path, got, exp, data)
			}
		}
	}
}

// length checks the length of the array at path ("" for the data itself).
func length(path string, n int) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		var v any = nil
		if path == "" {
			json.Unmarshal(data, &v)
		} else {
			v = jsonAt(t, data, path)
		}
		a, _ := v.([]any)
		if len(a) != n {
			t.Errorf("len(%s) = %d, want %d (data %.400s)", path, len(a), n, data)
		}
	}
}

func all(checks ...func(t *testing.T, data json.RawMessage)) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		for _, c := range checks {
			c(t, data)
		}
	}
}

const (
	catR  = "approval/category"
	delR  = "approval/delegation"
	flowR = "approval/flow"
)

// TestCategories runs approval/category on the three databases in the client's shapes: tree
// building, search in params, tenancy (forced tenant on create, other tenants not found, the
// super-admin across tenants), validation and delete rules.
func TestCategories(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		steps := []step{
			{name: "root", resource: catR, action: "create", params: `{"tenantId":"t1","code":"hr","name":"HR","sortOrder":2,"isActive":true}`},
			{name: "fin", resource: catR, action: "create", params: `{"tenantId":"t1","code":"fin","name":"Finance","sortOrder":1,"isActive":true}`},
			{name: "leave", resource: catR, action: "create", params: `{"tenantId":"t1","code":"leave","name":"Leave","parentId":"$root$","sortOrder":0,"isActive":false,"remark":"r"}`},
			{name: "forced tenant", resource: catR, action: "create", params: `{"tenantId":"t2","code":"sneak","name":"Sneak","sortOrder":0,"isActive":true}`},
			{name: "dup code", resource: catR, action: "create", params: `{"tenantId":"t1","code":"hr","name":"again","sortOrder":0,"isActive":true}`, wantCode: rpc.CodeRecordAlreadyExists},
			{name: "same code in t2", as: bob, resource: catR, action: "create", params: `{"tenantId":"t2","code":"hr","name":"HR2","sortOrder":0,"isActive":true}`},
			{name: "missing name", resource: catR, action: "create", params: `{"tenantId":"t1","code":"x","sortOrder":0,"isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "parent of another tenant", as: bob, resource: catR, action: "create", params: `{"tenantId":"t2","code":"y","name":"Y","parentId":"$root$","sortOrder":0,"isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "tree", resource: catR, action: "find_tree", params: `{}`, check: all(length("", 3),
				want("0.code", "sneak", "0.tenantId", "t1", "1.code", "fin", "2.code", "hr", "2.children.0.code", "leave", "2.children.0.parentId", "$root"))},
			{name: "tree by name", resource: catR, action: "find_tree", params: `{"name":"eav"}`, check: all(length("", 1), want("0.code", "leave"))},
			{name: "tree by isActive", resource: catR, action: "find_tree", params: `{"isActive":false}`, check: length("", 1)},
			{name: "viewer reads", as: viewer, resource: catR, action: "find_tree", params: `{}`, check: length("", 3)},
			{name: "viewer cannot create", as: viewer, resource: catR, action: "create", params: `{"tenantId":"t1","code":"v","name":"V","sortOrder":0,"isActive":true}`, wantCode: rpc.CodeAccessDenied},
			{name: "t2 sees its own", as: bob, resource: catR, action: "find_tree", params: `{}`, check: all(length("", 1), want("0.name", "HR2"))},
			{name: "super sees all", as: root, resource: catR, action: "find_tree", params: `{}`, check: length("", 4)},
			{name: "super asks one tenant", as: root, resource: catR, action: "find_tree", params: `{"tenantId":"t2"}`, check: length("", 1)},
			{name: "super creates in t2", as: root, resource: catR, action: "create", params: `{"tenantId":"t2","code":"ops","name":"Ops","sortOrder":0,"isActive":true}`},
			{name: "cross-tenant update", as: bob, resource: catR, action: "update", params: `{"id":"$root$","tenantId":"t2","code":"hr","name":"stolen","sortOrder":0,"isActive":true}`, wantCode: rpc.CodeRecordNotFound},
			{name: "cross-tenant delete", as: bob, resource: catR, action: "delete", params: `{"id":"$root$"}`, wantCode: rpc.CodeRecordNotFound},
			{name: "cycle", resource: catR, action: "update", params: `{"id":"$root$","tenantId":"t1","code":"hr","name":"HR","parentId":"$leave$","sortOrder":2,"isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "update", resource: catR, action: "update", params: `{"id":"$leave$","tenantId":"t1","code":"leave","name":"Leave 2","parentId":"$fin$","sortOrder":5,"isActive":true}`},
			{name: "moved", resource: catR, action: "find_tree", params: `{"name":"Leave 2"}`, check: want("0.parentId", "$fin", "0.sortOrder", 5)},
			{name: "delete parent with child", resource: catR, action: "delete", params: `{"id":"$fin$"}`, wantCode: rpc.CodeForeignKeyViolation},
			{name: "delete child", resource: catR, action: "delete", params: `{"id":"$leave$"}`},
			{name: "delete parent", resource: catR, action: "delete", params: `{"id":"$fin$"}`},
			{name: "no delete_many", resource: catR, action: "delete_many", params: `{"pks":["$root$"]}`, wantCode: rpc.CodeNotFound},
			{name: "details without tenant", as: broken, resource: catR, action: "find_tree", params: `{}`, wantCode: approval.ErrCodeAccessDenied},
			{name: "built-in user is in default", as: plain, resource: catR, action: "create", params: `{"tenantId":"t1","code":"d","name":"D","sortOrder":0,"isActive":true}`},
			{name: "default tenant", as: plain, resource: catR, action: "find_tree", params: `{}`, check: want("0.tenantId", "default")},
		}
		ids := map[string]string{}
		run(t, srv, withIDNames(steps, ids), ids)
	})
}

// TestDelegations runs approval/delegation on the three databases: filters in params and paging
// in meta (the client's shape), startsAt/endsAt and the older startTime/endTime, ownership (a
// caller who is not a super-admin sees and edits only what it delegates; delegatorId is stamped),
// category and flow scopes of the caller's tenant only, and validation.
func TestDelegations(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		page := map[string]any{"page": 1, "size": 2}
		steps := []step{
			{name: "cat", resource: catR, action: "create", params: `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`},
			{name: "d1", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"carl","startsAt":"2026-01-01 08:00:00","endsAt":"2026-02-01 08:00:00","isActive":true,"reason":"leave"}`},
			{name: "d2 old names", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"dan","flowCategoryId":"$cat$","startTime":"2026-03-01 00:00:00","endTime":"2026-03-02 00:00:00","isActive":false}`},
			{name: "d3 stamped delegator", resource: delR, action: "create", params: `{"delegatorId":"mallory","delegateeId":"erin","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`},
			{name: "bob's", as: bob, resource: delR, action: "create", params: `{"delegatorId":"bob","delegateeId":"alice","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`},
			{name: "other tenant's category", as: bob, resource: delR, action: "create", params: `{"delegatorId":"bob","delegateeId":"x","flowCategoryId":"$cat$","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "unknown flow", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"x","flowId":"nope","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "empty window", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"x","startsAt":"2026-01-02 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "no window", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"x","isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "self", resource: delR, action: "create", params: `{"delegatorId":"alice","delegateeId":"alice","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-02 00:00:00","isActive":true}`, wantCode: rpc.CodeBadRequest},
			{name: "page", resource: delR, action: "find_page", params: `{}`, meta: page, check: all(want("total", 3, "page", 1, "size", 2), length("items", 2))},
			{name: "page 2", resource: delR, action: "find_page", params: `{}`, meta: map[string]any{"page": 2, "size": 2}, check: length("items", 1)},
			{name: "by delegatee", resource: delR, action: "find_page", params: `{"delegateeId":"dan"}`, meta: page,
				check: want("total", 1, "items.0.startsAt", "2026-03-01 00:00:00", "items.0.flowCategoryId", "$cat", "items.0.isActive", false)},
			{name: "by isActive", resource: delR, action: "find_page", params: `{"isActive":true}`, meta: page, check: want("total", 2)},
			{name: "stamped", resource: delR, action: "find_page", params: `{"delegateeId":"erin"}`, check: want("items.0.delegatorId", "alice")},
			{name: "filters in meta too", resource: delR, action: "find_page", meta: map[string]any{"delegateeId": "carl"}, check: want("total", 1, "items.0.reason", "leave")},
			{name: "bob sees his", as: bob, resource: delR, action: "find_page", params: `{}`, check: want("total", 1)},
			{name: "super sees all", as: root, resource: delR, action: "find_page", params: `{}`, check: want("total", 4)},
			{name: "viewer sees own only", as: viewer, resource: delR, action: "find_page", params: `{}`, check: want("total", 0)},
			{name: "update pinned", resource: delR, action: "update", params: `{"id":"$d1$","delegatorId":"bob","delegateeId":"carl","startsAt":"2026-01-01 08:00:00","endsAt":"2026-01-15 08:00:00","isActive":false}`},
			{name: "updated", resource: delR, action: "find_page", params: `{"delegateeId":"carl"}`, check: want("items.0.delegatorId", "alice", "items.0.endsAt", "2026-01-15 08:00:00", "items.0.isActive", false)},
			{name: "other's update", as: bob, resource: delR, action: "update", params: `{"id":"$d1$","delegatorId":"bob","delegateeId":"x","startsAt":"2026-01-01 08:00:00","endsAt":"2026-01-15 08:00:00","isActive":true}`, wantCode: rpc.CodeRecordNotFound},
			{name: "other's delete", as: bob, resource: delR, action: "delete", params: `{"id":"$d1$"}`, wantCode: rpc.CodeRecordNotFound},
			{name: "super updates anyone's", as: root, resource: delR, action: "update", params: `{"id":"$bob's$","delegatorId":"bob","delegateeId":"carl","startsAt":"2026-01-01 00:00:00","endsAt":"2026-01-03 00:00:00","isActive":true}`},
			{name: "delete", resource: delR, action: "delete", params: `{"id":"$d1$"}`},
			{name: "after delete", resource: delR, action: "find_page", params: `{}`, check: want("total", 2)},
			{name: "category in use", resource: catR, action: "delete", params: `{"id":"$cat$"}`, wantCode: rpc.CodeForeignKeyViolation},
			{name: "no find_all", resource: delR, action: "find_all", params: `{}`, wantCode: rpc.CodeNotFound},
		}
		ids := map[string]string{}
		run(t, srv, withIDNames(steps, ids), ids)
	})
}

// withIDNames makes each check see the ids the run created as "$name" (see run).
func withIDNames(steps []step, ids map[string]string) []step {
	for i := range steps {
		if c := steps[i].check; c != nil {
			steps[i].check = func(t *testing.T, data json.RawMessage) {
				s := string(data)
				for k, v := range ids {
					s = strings.ReplaceAll(s, `"`+v+`"`, `"$`+k+`"`)
				}
				c(t, json.RawMessage(s))
			}
		}
	}
	return steps
}
