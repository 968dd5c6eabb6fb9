package approval_test

import (
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestAccess: every operation of part 1 needs a bearer token (1000 without one) and its
// permission of wire-approval §12 (1100 without it); a role holding exactly that permission
// passes the check (the answer is then the operation's own, never 1000 or 1100).
func TestAccess(t *testing.T) {
	t.Parallel()
	ops := []struct{ resource, action, permission string }{
		{catR, "find_tree", "approval.category.query"}, {catR, "create", "approval.category.create"},
		{catR, "update", "approval.category.update"}, {catR, "delete", "approval.category.delete"},
		{delR, "find_page", "approval.delegation.query"}, {delR, "create", "approval.delegation.create"},
		{delR, "update", "approval.delegation.update"}, {delR, "delete", "approval.delegation.delete"},
		{flowR, "create", "approval.flow.create"}, {flowR, "update", "approval.flow.update"},
		{flowR, "toggle_active", "approval.flow.update"}, {flowR, "deploy", "approval.flow.deploy"},
		{flowR, "publish_version", "approval.flow.publish"}, {flowR, "find_flows", "approval.flow.query"},
		{flowR, "find_versions", "approval.flow.query"}, {flowR, "find_initiators", "approval.flow.query"},
		{flowR, "get_graph", "approval.flow.query"},
	}
	roles := map[string][]string{"nothing": {}}
	for _, op := range ops {
		roles[op.permission] = []string{op.permission}
	}
	srv := svctest.New(t, svctest.WithDB(config.SQLite), svctest.WithConfig(func(c *config.Config) { c.Security.Roles = roles }),
		svctest.WithOptions(approvalOption()))
	for _, op := range ops {
		if r := srv.Call(t, op.resource, op.action, map[string]any{}); r.Code != rpc.CodeUnauthenticated {
			t.Errorf("%s.%s without a token: code %d, want 1000", op.resource, op.action, r.Code)
		}
		if r := srv.Call(t, op.resource, op.action, map[string]any{}, svctest.As(svctest.User("u", "nothing"))); r.Code != rpc.CodeAccessDenied {
			t.Errorf("%s.%s without %s: code %d, want 1100", op.resource, op.action, op.permission, r.Code)
		}
		r := srv.Call(t, op.resource, op.action, map[string]any{}, svctest.As(svctest.User("u", op.permission)))
		if r.Code == rpc.CodeUnauthenticated || r.Code == rpc.CodeAccessDenied {
			t.Errorf("%s.%s with %s: code %d (%s)", op.resource, op.action, op.permission, r.Code, r.Message)
		}
	}
}
