package svc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestApprovalNeedsTransactionalRoute: the approval module refuses to start when a routing rule
// sends approval.* to a transport that is not transactional, and starts when the rule names
// tx_memory or when no rule covers approval.* (config.Event.Effective adds the outbox route).
func TestApprovalNeedsTransactionalRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		routing []config.EventRoute
		wantErr error
	}{
		{"memory refused", []config.EventRoute{{Pattern: "approval.*", Transports: []string{config.TransportMemory}}}, event.ErrTxRequired},
		{"catch-all memory refused", []config.EventRoute{{Pattern: "*", Transports: []string{config.TransportMemory}}}, event.ErrTxRequired},
		{"tx_memory", []config.EventRoute{{Pattern: "approval.*", Transports: []string{config.TransportTxMemory}}}, nil},
		{"implicit outbox", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := svctest.Config(t, config.SQLite)
			cfg.Event.Transports.TxMemory.Enabled = true
			cfg.Event.Routing = tt.routing
			if tt.name == "catch-all memory refused" {
				cfg.Event.Routing = append([]config.EventRoute{{Pattern: "svc.storage.*", Transports: []string{config.TransportOutbox, config.TransportMemory}}}, cfg.Event.Routing...)
				cfg.Event.Transports.Outbox.Enabled = true
			}
			srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()), svc.WithApproval(approval.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, err = srv.Start(ctx)
			if err == nil {
				defer srv.Stop(ctx)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Start = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// fixedAssignees is a host's assignee service: everyone's superior is "boss".
type fixedAssignees struct{}

func (fixedAssignees) Superior(context.Context, string) (string, error) { return "boss", nil }
func (fixedAssignees) DepartmentLeaders(context.Context, string) ([]string, error) {
	return []string{"lead"}, nil
}
func (fixedAssignees) RoleUsers(context.Context, string) ([]string, error) { return nil, nil }

// TestApprovalDirectory: without host resolvers the module resolves through the built-in
// directory (what `svc dept` and `svc user set-*` manage); a host's AssigneeService replaces
// only that part, the names and departments still come from the built-in store.
func TestApprovalDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	builtin := svctest.New(t, svctest.WithOptions(svc.WithApproval(approval.Options{})))
	host := svctest.New(t, svctest.WithOptions(svc.WithApproval(approval.Options{Assignees: fixedAssignees{}})))
	for _, srv := range []*svctest.Server{builtin, host} {
		st := srv.Security().Store()
		ann, err := st.Create(ctx, "ann", "Ann", "long-enough-pass-1", []string{"finance"})
		if err != nil {
			t.Fatal(err)
		}
		ben, _ := st.Create(ctx, "ben", "", "long-enough-pass-2", nil)
		dir := security.NewDirectory(srv.DB(), nil)
		if _, err := dir.AddDepartment(ctx, "fin", "Finance", ""); err != nil {
			t.Fatal(err)
		}
		if err := dir.SetLeaders(ctx, "fin", []string{"ann"}); err != nil {
			t.Fatal(err)
		}
		if err := dir.SetUserDepartment(ctx, "ben", "fin"); err != nil {
			t.Fatal(err)
		}
		if err := dir.SetSuperior(ctx, "ben", "ann"); err != nil {
			t.Fatal(err)
		}
		apv := srv.Approval()
		sup, _ := apv.Assignees().Superior(ctx, ben.ID)
		leaders, _ := apv.Assignees().DepartmentLeaders(ctx, "fin")
		if srv == builtin {
			roleUsers, _ := apv.Assignees().RoleUsers(ctx, "finance")
			if sup != ann.ID || !cmp.Equal(leaders, []string{ann.ID}) || !cmp.Equal(roleUsers, []string{ann.ID}) {
				t.Errorf("built-in: superior %q, leaders %v, role users %v", sup, leaders, roleUsers)
			}
		} else if sup != "boss" || !cmp.Equal(leaders, []string{"lead"}) {
			t.Errorf("host: superior %q, leaders %v, want the host's", sup, leaders)
		}
		users, err := apv.Users().ResolveUsers(ctx, []string{ben.ID, ann.ID})
		want := map[string]approval.UserInfo{
			ben.ID: {ID: ben.ID, Name: "ben", DepartmentID: users[ben.ID].DepartmentID, DepartmentName: "Finance"},
			ann.ID: {ID: ann.ID, Name: "Ann"},
		}
		if err != nil || !cmp.Equal(users, want) || users[ben.ID].DepartmentID == "" {
			t.Errorf("ResolveUsers = %v %v, want %v", users, err, want)
		}
		if id, name, _ := apv.Departments().UserDepartment(ctx, ben.ID); id == "" || name != "Finance" {
			t.Errorf("UserDepartment(ben) = %q %q", id, name)
		}
	}
}

// TestDepartmentListFollowsApprovalDirectory: security/department lists the built-in
// departments while approval asks the built-in directory (or without approval), and has no
// operations (404/1200) once the host gave approval an organisation of its own, whose
// departments the built-in tables do not hold.
func TestDepartmentListFollowsApprovalDirectory(t *testing.T) {
	t.Parallel()
	admin := svctest.As(svctest.User("admin", "admin"))
	roles := svctest.WithConfig(func(c *config.Config) { c.Security.Roles = map[string][]string{"admin": {"*"}} })
	for _, tt := range []struct {
		name       string
		opts       []svc.Option
		wantStatus int
	}{
		{"no approval", nil, 200},
		{"built-in directory", []svc.Option{svc.WithApproval(approval.Options{})}, 200},
		{"host assignees", []svc.Option{svc.WithApproval(approval.Options{Assignees: fixedAssignees{}})}, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := svctest.New(t, roles, svctest.WithOptions(tt.opts...))
			if _, err := srv.Security().Directory().AddDepartment(context.Background(), "fin", "Finance", ""); err != nil {
				t.Fatal(err)
			}
			r := srv.Call(t, security.ResourceDepartment, "find_tree", map[string]any{}, admin)
			if r.Status != tt.wantStatus {
				t.Fatalf("find_tree = %d/%d %s, want %d", r.Status, r.Code, r.Data, tt.wantStatus)
			}
			if tt.wantStatus == 200 {
				var tree []security.DepartmentNode
				r.DataAs(t, &tree)
				if len(tree) != 1 || tree[0].Name != "Finance" {
					t.Errorf("find_tree = %+v, want Finance", tree)
				}
			}
		})
	}
}
