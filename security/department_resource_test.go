package security_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// deptCodes writes a find_tree answer as codes, children in brackets: "hq[fin[ap]] ops".
func deptCodes(nodes []security.DepartmentNode) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n.Code
		if len(n.Children) > 0 {
			parts[i] += "[" + deptCodes(n.Children) + "]"
		}
	}
	return strings.Join(parts, " ")
}

// TestDepartmentResource runs security/department find_tree on every database: the access
// rules (bearer, its own permission token), the tree of what `svc dept` made with leaders and
// parents, the keyword (name or code, any case, wildcards literal) keeping the ancestors of
// what it finds, and its bound.
func TestDepartmentResource(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		e := newEnv(t, onDB(kind), withCfg(func(c *config.Config) {
			c.Security.Roles["deptreader"] = []string{security.PermDepartmentQuery}
			c.Security.Roles["userreader"] = []string{security.PermUserQuery}
		}))
		ctx := context.Background()
		e.addUser(t, "root", "root-pw", "admin")
		e.addUser(t, "reader", "reader-pw", "deptreader")
		e.addUser(t, "other", "other-pw", "userreader")
		lead := e.addUser(t, "lead", "lead-pw")
		dir := e.sec.Directory()
		ids := map[string]string{}
		for _, d := range []struct{ code, name, parent string }{
			{"hq", "Head office", ""}, {"ops", "Operations", ""}, {"fin", "Finance", "hq"},
			{"ap", "Accounts payable", "fin"}, {"it", "IT", "hq"},
		} {
			dept, err := dir.AddDepartment(ctx, d.code, d.name, d.parent)
			if err != nil {
				t.Fatal(err)
			}
			ids[d.code] = dept.ID
		}
		if err := dir.SetLeaders(ctx, "fin", []string{"lead"}); err != nil {
			t.Fatal(err)
		}
		root := e.login(t, "root", "root-pw").AccessToken
		reader := e.login(t, "reader", "reader-pw").AccessToken
		other := e.login(t, "other", "other-pw").AccessToken
		find := func(token string, params any) svctest.Response {
			t.Helper()
			return e.srv.Call(t, security.ResourceDepartment, "find_tree", params, svctest.WithToken(token))
		}

		t.Run("access", func(t *testing.T) {
			want(t, e.srv.Call(t, security.ResourceDepartment, "find_tree", map[string]any{}), 401, rpc.CodeUnauthenticated)
			want(t, find(other, map[string]any{}), 403, rpc.CodeAccessDenied) // security.user.query is not enough
			want(t, find(reader, map[string]any{}), 200, 0)
			want(t, find(root, map[string]any{}), 200, 0)
		})

		t.Run("tree", func(t *testing.T) {
			r := find(reader, map[string]any{})
			want(t, r, 200, 0)
			var tree []security.DepartmentNode
			r.DataAs(t, &tree)
			if got := deptCodes(tree); got != "hq[fin[ap] it] ops" {
				t.Errorf("tree = %s, want hq[fin[ap] it] ops", got)
			}
			fin := tree[0].Children[0]
			wantFin := security.Department{ID: ids["fin"], Code: "fin", Name: "Finance", ParentID: ids["hq"], LeaderIDs: []string{lead.ID}}
			if diff := cmp.Diff(wantFin, fin.Department); diff != "" {
				t.Errorf("fin (-want +got):\n%s", diff)
			}
			// the wire shape: a leaf's children and leaders are empty lists, a root has no parentId
			var raw []map[string]json.RawMessage
			r.DataAs(t, &raw)
			if got := string(raw[1]["children"]) + string(raw[1]["leaderIds"]); got != "[][]" {
				t.Errorf("ops children, leaderIds = %s, want [][]", got)
			}
			if _, ok := raw[1]["parentId"]; ok {
				t.Errorf("a root carries parentId: %v", raw[1])
			}
		})

		t.Run("keyword", func(t *testing.T) {
			for _, tt := range []struct{ keyword, want string }{
				{"PAYABLE", "hq[fin[ap]]"}, // a name, any case, with its ancestors
				{"it", "hq[it]"},           // a code
				{"o", "hq[fin[ap]] ops"},   // "Head office", "Accounts payable", "Operations", "ops"
				{"%", ""},                  // wildcards are literal
				{"  fin ", "hq[fin]"},      // trimmed
				{"nothing", ""},
			} {
				r := find(reader, map[string]any{"keyword": tt.keyword})
				want(t, r, 200, 0)
				var tree []security.DepartmentNode
				r.DataAs(t, &tree)
				if got := deptCodes(tree); got != tt.want {
					t.Errorf("keyword %q = %q, want %q", tt.keyword, got, tt.want)
				}
			}
			want(t, find(reader, map[string]any{"keyword": strings.Repeat("x", 129)}), 400, rpc.CodeBadRequest)
		})
	})
}

// TestDepartmentResourceHidden: with Options.HideDepartments (a host organisation for
// approval) security/department has no operations, so the console's picker takes ids typed.
func TestDepartmentResourceHidden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSec(func(o *security.Options) { o.HideDepartments = true }))
	e.addUser(t, "root", "root-pw", "admin")
	root := e.login(t, "root", "root-pw").AccessToken
	want(t, e.srv.Call(t, security.ResourceDepartment, "find_tree", map[string]any{}, svctest.WithToken(root)), 404, rpc.CodeNotFound)
}
