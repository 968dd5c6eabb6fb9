package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestDirectoryCLI runs `svc dept add|list|set-leader` and `svc user set-department|
// set-superior` on the three databases, then checks that the directory the approval module
// resolves through answers what the commands set: superiors, department leaders (by id and
// code), role users, user names and departments; refusals exit 1 and change nothing.
func TestDirectoryCLI(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), usersTOML)
		for _, u := range []struct{ name, roles string }{{"ann", "admin"}, {"ben", "ops"}, {"cy", "ops,admin"}, {"dee", ""}} {
			env.mustRun("long-enough-pass-1\n", "user", "add", u.name, "--password-stdin", "--roles", u.roles, "--display-name", strings.ToUpper(u.name))
		}
		if out := env.mustRun("", "dept", "add", "hq", "--name", "Head office"); !strings.HasPrefix(out, "department hq created (id ") {
			t.Errorf("dept add = %q", out)
		}
		env.mustRun("", "dept", "add", "sales", "--parent", "hq", "--name", "Sales")
		env.mustRun("", "dept", "set-leader", "sales", "ben", "CY")
		env.mustRun("", "dept", "set-leader", "hq", "ann")
		env.mustRun("", "user", "set-department", "dee", "sales")
		env.mustRun("", "user", "set-department", "ben", "sales")
		env.mustRun("", "user", "set-superior", "dee", "ben")
		env.mustRun("", "user", "set-superior", "ben", "ann")

		refusals := []struct {
			args    []string
			wantErr string
		}{
			{[]string{"dept", "add", "hq"}, "department already exists"},
			{[]string{"dept", "add", "x", "--parent", "nope"}, "department not found"},
			{[]string{"dept", "add", "has space"}, "invalid department"},
			{[]string{"dept", "set-leader", "sales", "nobody"}, "user not found"},
			{[]string{"dept", "set-leader", "sales"}, "--clear"},
			{[]string{"user", "set-department", "dee", "nope"}, "department not found"},
			{[]string{"user", "set-department", "dee"}, "--clear"},
			{[]string{"user", "set-superior", "ann", "dee"}, "own (indirect) superior"},
			{[]string{"user", "set-superior", "ann", "ann"}, "own (indirect) superior"},
			{[]string{"user", "set-superior", "ghost", "ann"}, "user not found"},
		}
		for _, r := range refusals {
			res := env.run("", r.args...)
			if res.code != 1 || !strings.Contains(res.errOut, r.wantErr) {
				t.Errorf("svc %s: exit %d, stderr %q; want 1 and %q", strings.Join(r.args, " "), res.code, res.errOut, r.wantErr)
			}
		}

		out := env.mustRun("", "dept", "list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[1], "hq") || !strings.Contains(lines[1], "ann") ||
			!strings.Contains(lines[2], "Sales") || !strings.Contains(lines[2], " hq ") || !strings.Contains(lines[2], "ben,cy") {
			t.Errorf("dept list =\n%s", out)
		}

		ctx := context.Background()
		dir := security.NewDirectory(env.db, nil)
		id := func(name string) string {
			u, err := env.store.LookupUser(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return u.ID
		}
		depts, _ := dir.Departments(ctx)
		salesID := depts[1].ID
		if sup, _ := dir.Superior(ctx, id("dee")); sup != id("ben") {
			t.Errorf("Superior(dee) = %q, want ben", sup)
		}
		if sup, _ := dir.Superior(ctx, id("ann")); sup != "" {
			t.Errorf("Superior(ann) = %q, want none", sup)
		}
		wantLeaders := []string{id("ben"), id("cy")}
		slices.Sort(wantLeaders)
		for _, ref := range []string{salesID, "sales"} {
			got, err := dir.DepartmentLeaders(ctx, ref)
			if err != nil || !cmp.Equal(got, wantLeaders) {
				t.Errorf("DepartmentLeaders(%s) = %v %v, want %v", ref, got, err, wantLeaders)
			}
		}
		if got, _ := dir.DepartmentLeaders(ctx, "nope"); len(got) != 0 {
			t.Errorf("DepartmentLeaders(nope) = %v, want none", got)
		}
		if got, _ := dir.RoleUsers(ctx, "ops"); !cmp.Equal(got, []string{id("ben"), id("cy")}) {
			t.Errorf("RoleUsers(ops) = %v", got)
		}
		if got, _ := dir.RoleUsers(ctx, "adm"); len(got) != 0 {
			t.Errorf("RoleUsers(adm) = %v, want none (no prefix match)", got)
		}
		users, err := dir.ResolveUsers(ctx, []string{id("dee"), id("ann"), "ghost"})
		want := map[string]security.DirectoryUser{
			id("dee"): {ID: id("dee"), Name: "DEE", DepartmentID: salesID, DepartmentName: "Sales"},
			id("ann"): {ID: id("ann"), Name: "ANN"},
		}
		if err != nil || !cmp.Equal(users, want) {
			t.Errorf("ResolveUsers = %v %v, want %v", users, err, want)
		}
		if dID, dName, _ := dir.UserDepartment(ctx, id("ben")); dID != salesID || dName != "Sales" {
			t.Errorf("UserDepartment(ben) = %s %s", dID, dName)
		}

		env.mustRun("", "user", "set-department", "dee", "--clear")
		env.mustRun("", "user", "set-superior", "dee", "--clear")
		env.mustRun("", "dept", "set-leader", "sales", "--clear")
		if dID, _, _ := dir.UserDepartment(ctx, id("dee")); dID != "" {
			t.Errorf("after --clear: department %q", dID)
		}
		if sup, _ := dir.Superior(ctx, id("dee")); sup != "" {
			t.Errorf("after --clear: superior %q", sup)
		}
		if got, _ := dir.DepartmentLeaders(ctx, "sales"); len(got) != 0 {
			t.Errorf("after --clear: leaders %v", got)
		}
	})
}

// TestMigrateApproval: `svc migrate` creates the approval module's tables (the binary includes
// the module) on the three databases, and a second run applies nothing.
func TestMigrateApproval(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), usersTOML)
		out := env.mustRun("", "migrate")
		if !strings.Contains(out, "applied approval 001_init") {
			t.Errorf("svc migrate = %q, want the approval migration", out)
		}
		if n, err := env.db.NewSelect().Table("apv_flow").Count(context.Background()); err != nil || n != 0 {
			t.Errorf("apv_flow after migrate: %d %v", n, err)
		}
		if out := env.mustRun("", "migrate"); !strings.Contains(out, "0 migration(s) applied") {
			t.Errorf("second svc migrate = %q", out)
		}
	})
}
