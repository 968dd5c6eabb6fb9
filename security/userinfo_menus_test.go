package security_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// menuTree is a configured tree with every visibility rule: public entries, role-gated,
// permission-gated (wildcards through svc.security.roles) and a directory that empties.
var menuTree = []config.Menu{
	{Type: "menu", Path: "/", Name: "Home", Icon: "house"},
	{Type: "directory", Path: "/system", Name: "System", Icon: "settings", Children: []config.Menu{
		{Type: "menu", Path: "/system/monitor", Name: "Monitor", Permissions: []string{"sys.monitor"}},
		{Type: "menu", Path: "/system/cron", Name: "Cron", Permissions: []string{"cron.schedule.query"}},
	}},
	{Type: "report", Path: "/report/$key", Name: "Uploads", Roles: []string{"viewer"},
		Meta: map[string]any{"params": map[string]any{"key": "uploads"}}},
	{Type: "directory", Path: "/admin", Name: "Admin", Roles: []string{"admin"}, Children: []config.Menu{
		{Type: "view", Path: "/admin/users", Name: "Users"},
	}},
}

// TestUserInfoMenus: get_user_info of the built-in user store answers svc.security.menus
// filtered per user, in the shape of wire-core §5.7 (icon always present, meta as configured).
func TestUserInfoMenus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withCfg(func(c *config.Config) { c.Security.Menus = menuTree }))
	house := "house"
	settings := "settings"
	home := security.UserMenu{Type: "menu", Path: "/", Name: "Home", Icon: &house}
	tests := []struct {
		user  string
		roles []string
		want  []security.UserMenu
	}{
		{"nobody", nil, []security.UserMenu{home}},
		{"ops", []string{"ops"}, []security.UserMenu{home,
			{Type: "directory", Path: "/system", Name: "System", Icon: &settings, Children: []security.UserMenu{
				{Type: "menu", Path: "/system/monitor", Name: "Monitor"},
				{Type: "menu", Path: "/system/cron", Name: "Cron"},
			}}}},
		{"viewer", []string{"viewer"}, []security.UserMenu{home,
			{Type: "report", Path: "/report/$key", Name: "Uploads", Meta: map[string]any{"params": map[string]any{"key": "uploads"}}}}},
		{"admin", []string{"admin"}, []security.UserMenu{home,
			{Type: "directory", Path: "/system", Name: "System", Icon: &settings, Children: []security.UserMenu{
				{Type: "menu", Path: "/system/monitor", Name: "Monitor"},
				{Type: "menu", Path: "/system/cron", Name: "Cron"},
			}},
			{Type: "directory", Path: "/admin", Name: "Admin", Children: []security.UserMenu{{Type: "view", Path: "/admin/users", Name: "Users"}}}}},
	}
	for _, tt := range tests {
		e.addUser(t, tt.user, "Secret-pass-1", tt.roles...)
		tok := e.login(t, tt.user, "Secret-pass-1")
		r := e.call(t, "get_user_info", nil, svctest.WithToken(tok.AccessToken))
		want(t, r, 200, 0)
		var info security.UserInfo
		r.DataAs(t, &info)
		if diff := cmp.Diff(tt.want, info.Menus); diff != "" {
			t.Errorf("%s: menus mismatch (-want +got):\n%s", tt.user, diff)
		}
	}
	// The wire shape: icon is present as null when unset, children and meta only when set.
	e.addUser(t, "wire", "Secret-pass-1", "ops")
	tok := e.login(t, "wire", "Secret-pass-1")
	var raw struct {
		Menus []map[string]any `json:"menus"`
	}
	e.call(t, "get_user_info", nil, svctest.WithToken(tok.AccessToken)).DataAs(t, &raw)
	child := raw.Menus[1]["children"].([]any)[0].(map[string]any)
	if icon, ok := child["icon"]; !ok || icon != nil {
		t.Errorf("child icon = %v (present %v), want null", icon, ok)
	}
	if _, ok := child["children"]; ok {
		t.Errorf("leaf carries children: %v", child)
	}
}

// TestAccessTokenLifetime: svc.security.access_token_expires sets exp − iat of issued access
// tokens, and the server refuses them once it has passed (1002); refresh tokens are unaffected.
func TestAccessTokenLifetime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ttl  time.Duration
		want time.Duration
	}{
		{"default", 0, 30 * time.Minute},
		{"shortened", 5 * time.Minute, 5 * time.Minute},
		{"lengthened", 2 * time.Hour, 2 * time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withCfg(func(c *config.Config) {
				if tt.ttl > 0 {
					c.Security.AccessTokenExpires = tt.ttl
				}
			}))
			e.addUser(t, "ann", "Secret-pass-1")
			tok := e.login(t, "ann", "Secret-pass-1")
			_, claims := jwtParts(t, tok.AccessToken)
			var exp, iat int64
			if json.Unmarshal(claims["exp"], &exp) != nil || json.Unmarshal(claims["iat"], &iat) != nil {
				t.Fatalf("exp %s, iat %s: want integers", claims["exp"], claims["iat"])
			}
			if got := time.Duration(exp-iat) * time.Second; got != tt.want {
				t.Errorf("exp - iat = %s, want %s", got, tt.want)
			}
			e.clock.Advance(tt.want - time.Minute)
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(tok.AccessToken)), 200, 0)
			e.clock.Advance(2 * time.Minute)
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(tok.AccessToken)), 401, rpc.CodeTokenExpired)
		})
	}
}
