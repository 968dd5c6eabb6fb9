package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestGrantRuleTools (issue #42 item 1, attack test): the operation tools of security/user and
// security/session run the same handlers as /api, so the grant rule holds there too, on both
// tool paths and every database: a user administrator cannot give itself admin, create an
// admin, take over the admin's TOTP or sign the admin out; within its reach the tools work.
func TestGrantRuleTools(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := newServer(t, kind, cheapHash, svctest.WithConfig(func(c *config.Config) {
			c.Security.Roles = map[string][]string{"admin": {"*"}, "useradm": {"security.user.*", "security.session.*"}}
		}))
		ctx := context.Background()
		st := srv.Security().Store()
		root, err := st.Create(ctx, "root", "Root", password, []string{"admin"})
		if err != nil {
			t.Fatal(err)
		}
		ua, err := st.Create(ctx, "ua", "UA", password, []string{"useradm"})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := connect(t, srv.URL, login(t, srv, "ua"))
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		for _, path := range paths {
			t.Run(path.name, func(t *testing.T) {
				srv.MCP().SetFastPath(path.fast)
				refused := []struct {
					tool string
					args map[string]any
				}{
					{"security.user.set_roles", map[string]any{"id": ua.ID, "roles": []string{"admin"}}},
					{"security.user.create", map[string]any{"username": "evil_" + strings.ReplaceAll(path.name, " ", "_"), "password": password, "roles": []string{"admin"}}},
					{"security.user.begin_totp", map[string]any{"id": root.ID}},
					{"security.user.remove_totp", map[string]any{"id": root.ID}},
					{"security.user.reset_password", map[string]any{"id": root.ID, "password": "Another-Horse-9-Battery"}},
					{"security.session.revoke_user", map[string]any{"userId": root.ID}},
				}
				for _, r := range refused {
					text, isErr := call(t, cs, r.tool, r.args)
					if !isErr || !strings.Contains(text, "1074") || strings.Contains(text, "otpauth") {
						t.Errorf("%s answered error=%t %s, want the grant rule's 1074", r.tool, isErr, text)
					}
				}
				if text, isErr := call(t, cs, "security.user.update", map[string]any{"id": ua.ID, "displayName": "Still UA"}); isErr {
					t.Errorf("update of its own account: %s", text)
				}
			})
		}
		u, err := st.UserByID(ctx, ua.ID)
		if err != nil || len(u.Roles) != 1 || u.Roles[0] != "useradm" {
			t.Errorf("useradm's roles = %v, %v", u.Roles, err)
		}
		if r, err := st.UserByID(ctx, root.ID); err != nil || r.TOTPPending || r.TOTPEnroll || r.PasswordHash != root.PasswordHash {
			t.Errorf("admin changed: %+v, %v", r, err)
		}
	})
}
