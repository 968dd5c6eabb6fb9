package security_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// grantRoles are the roles of the grant tests: docs/console.md's example (admin, observer,
// useradm) and a role inside useradm's reach.
var grantRoles = map[string][]string{
	"admin":    {"*"},
	"observer": {"sys.monitor.query", "cron.schedule.query", "cron.run.query", "sys.schema.query", "sys.storage.file.query"},
	"useradm":  {"security.user.*", "security.session.*"},
	"helpdesk": {"security.session.revoke", "security.user.query"},
}

func withGrantRoles(c *config.Config) { c.Security.Roles = grantRoles }

// TestRoleGrantable: the grant rule's coverage is the permission checker's matching, for every
// shape of token: exact, prefix.*, *, and a role svc.security.roles does not define.
func TestRoleGrantable(t *testing.T) {
	e := newEnv(t, withCfg(func(c *config.Config) {
		c.Security.Roles = map[string][]string{
			"all": {"*"}, "sec": {"security.*"}, "users": {"security.user.*"}, "query": {"security.user.query"},
			"query2": {"security.user.query", "security.session.query"}, "empty": {},
			"deep": {"security.user.totp.*"}, "prefixlike": {"security.userx.query"},
		}
	}))
	ctx := context.Background()
	tests := []struct {
		caller []string
		role   string
		want   bool
	}{
		{[]string{"all"}, "all", true},
		{[]string{"all"}, "undefined", true},
		{[]string{"sec"}, "all", false}, // * only to holders of *
		{[]string{"sec"}, "undefined", false},
		{[]string{"sec"}, "users", true}, // security.* covers security.user.*
		{[]string{"sec"}, "query2", true},
		{[]string{"users"}, "sec", false}, // security.user.* does not cover security.*
		{[]string{"users"}, "users", true},
		{[]string{"users"}, "query", true},
		{[]string{"users"}, "deep", true}, // security.user.* covers security.user.totp.*
		{[]string{"users"}, "query2", false},
		{[]string{"users"}, "prefixlike", false}, // security.user.* is not security.user*
		{[]string{"query"}, "users", false},      // an exact token does not cover a pattern
		{[]string{"query", "query2"}, "query2", true},
		{[]string{"query"}, "query2", false}, // every token of the role, not one
		{[]string{"query"}, "empty", true},
		{nil, "empty", true},
		{nil, "query", false},
		{[]string{"undefined"}, "query", false}, // an undefined role grants nothing
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v grants %s", tt.caller, tt.role), func(t *testing.T) {
			p := &rpc.Principal{Type: rpc.PrincipalUser, ID: "caller", Roles: tt.caller}
			got, err := e.sec.RoleGrantable(ctx, p, tt.role)
			if err != nil || got != tt.want {
				t.Errorf("RoleGrantable = %t, %v; want %t", got, err, tt.want)
			}
			wantErr := error(nil)
			if !tt.want {
				wantErr = security.ErrUserGrantDenied
			}
			if err := e.sec.CheckGrant(ctx, p, nil, []string{tt.role}); err != wantErr {
				t.Errorf("CheckGrant(after) = %v, want %v", err, wantErr)
			}
			if err := e.sec.CheckGrant(ctx, p, []string{tt.role}, nil); err != wantErr {
				t.Errorf("CheckGrant(before) = %v, want %v", err, wantErr)
			}
		})
	}
	if ok, err := e.sec.RoleGrantable(ctx, rpc.System(), "all"); !ok || err != nil {
		t.Errorf("system principal: %t, %v", ok, err)
	}
}

// grantActors are the callers of TestGrantTable by role ("" is a plain user with no role).
var grantActors = []string{"admin", "useradm", "observer", ""}

// grantTargets are the accounts acted on: the caller itself, a peer with the caller's roles,
// and an admin.
var grantTargets = []string{"self", "peer", "admin"}

// grantCase is one action of security/user or security/session in TestGrantTable.
type grantCase struct {
	resource, action string
	perm             string // the permission token the action needs
	change           bool   // changes the account (the grant rule applies), else a read
	escalate         bool   // gives the target admin: refused to whoever does not hold *
	// params builds the params for target (prepared by prepare, if any) and the actor.
	params func(g *grantRun) any
	// prepare readies the target before the call (a pending enrollment, a live login, ...).
	prepare func(g *grantRun)
	// effect checks that an allowed call did what it says.
	effect func(g *grantRun)
}

// grantRun is one row of TestGrantTable: the actor, its token and the target.
type grantRun struct {
	t            *testing.T
	e            *env
	actor        *security.User
	token        string
	target       *security.User
	targetRoles  []string
	secret       string // a pending or active TOTP secret of the target, when prepared
	login        string // a login (token family) of the target, when prepared
	created      string // the user name create was asked for
	answerSecret string // the secret begin_totp answered
}

var grantSeq atomic.Int64

func (g *grantRun) user() *security.User {
	g.t.Helper()
	u, err := g.e.sec.Store().UserByID(context.Background(), g.target.ID)
	if err != nil {
		g.t.Fatal(err)
	}
	return u
}

// families are the target's live logins.
func (g *grantRun) families() []security.TokenFamily {
	g.t.Helper()
	fs, err := g.e.sec.Tokens().(*security.JWTTokens).Families(context.Background(), g.target.ID)
	if err != nil {
		g.t.Fatal(err)
	}
	return fs
}

// grantCases are every action of security/user and security/session.
func grantCases() []grantCase {
	id := func(g *grantRun) any { return map[string]any{"id": g.target.ID} }
	loginTarget := func(g *grantRun) {
		g.t.Helper()
		tok := g.e.login(g.t, g.target.Username, alicePassword).AccessToken
		info, _ := g.e.sec.Tokens().(*security.JWTTokens).Inspect(tok)
		g.login = info.Family
	}
	ctx := context.Background()
	return []grantCase{
		{resource: security.ResourceUser, action: "find_page", perm: security.PermUserQuery, params: func(*grantRun) any { return map[string]any{} }},
		{resource: security.ResourceUser, action: "get", perm: security.PermUserQuery, params: id},
		{resource: security.ResourceUser, action: "list_roles", perm: security.PermUserQuery, params: func(*grantRun) any { return map[string]any{} }},
		{resource: security.ResourceUser, action: "create", perm: security.PermUserCreate, change: true,
			params: func(g *grantRun) any {
				g.created = fmt.Sprintf("new%04d", grantSeq.Add(1))
				return map[string]any{"username": g.created, "password": alicePassword, "roles": g.targetRoles}
			},
			effect: func(g *grantRun) {
				u, err := g.e.sec.Store().LookupUser(ctx, g.created)
				if err != nil || !cmp.Equal(u.Roles, g.targetRoles) {
					g.t.Errorf("created %+v, %v; want roles %v", u, err, g.targetRoles)
				}
			}},
		{resource: security.ResourceUser, action: "update", perm: security.PermUserUpdate, change: true,
			params: func(g *grantRun) any { return map[string]any{"id": g.target.ID, "displayName": "Renamed"} },
			effect: func(g *grantRun) {
				if u := g.user(); u.DisplayName != "Renamed" {
					g.t.Errorf("display name = %q", u.DisplayName)
				}
			}},
		{resource: security.ResourceUser, action: "disable", perm: security.PermUserDisable, change: true, params: id,
			effect: func(g *grantRun) {
				if !g.user().Disabled {
					g.t.Error("not disabled")
				}
			}},
		{resource: security.ResourceUser, action: "enable", perm: security.PermUserDisable, change: true, params: id,
			prepare: func(g *grantRun) {
				if g.target.ID != g.actor.ID { // a disabled caller could not call at all
					if err := g.e.sec.Store().SetDisabled(ctx, g.target.Username, true); err != nil {
						g.t.Fatal(err)
					}
				}
			},
			effect: func(g *grantRun) {
				if g.user().Disabled {
					g.t.Error("still disabled")
				}
			}},
		{resource: security.ResourceUser, action: "set_roles", perm: security.PermUserRoles, change: true, escalate: true,
			params: func(g *grantRun) any { return map[string]any{"id": g.target.ID, "roles": []string{"admin"}} },
			effect: func(g *grantRun) {
				if r := g.user().Roles; !cmp.Equal(r, []string{"admin"}) {
					g.t.Errorf("roles = %v", r)
				}
			}},
		{resource: security.ResourceUser, action: "set_roles", perm: security.PermUserRoles, change: true,
			params: func(g *grantRun) any { return map[string]any{"id": g.target.ID, "roles": []string{}} },
			effect: func(g *grantRun) {
				if r := g.user().Roles; len(r) != 0 {
					g.t.Errorf("roles = %v", r)
				}
			}},
		{resource: security.ResourceUser, action: "reset_password", perm: security.PermUserPassword, change: true,
			params: func(g *grantRun) any { return map[string]any{"id": g.target.ID, "password": "a whole new password"} },
			effect: func(g *grantRun) {
				g.e.clock.Advance(1)
				if res, _ := g.e.passwordLogin(g.t, g.target.Username, "a whole new password"); res.Tokens == nil {
					g.t.Errorf("login with the new password answered %+v", res)
				}
			}},
		{resource: security.ResourceUser, action: "begin_totp", perm: security.PermUserTOTP, change: true, params: id,
			effect: func(g *grantRun) {
				u := g.user()
				self := g.target.ID == g.actor.ID
				switch {
				case self && (g.answerSecret == "" || !u.TOTPPending || u.TOTPEnroll):
					g.t.Errorf("own enrollment: secret %q, user %+v", g.answerSecret, u)
				case !self && (g.answerSecret != "" || u.TOTPPending || !u.TOTPEnroll):
					g.t.Errorf("another's enrollment: secret %q answered, user %+v", g.answerSecret, u)
				}
			}},
		{resource: security.ResourceUser, action: "confirm_totp", perm: security.PermUserTOTP, change: true,
			prepare: func(g *grantRun) {
				en, err := g.e.sec.Store().BeginTOTP(ctx, g.target.Username, "svc")
				if err != nil {
					g.t.Fatal(err)
				}
				g.secret = en.Secret
			},
			params: func(g *grantRun) any {
				return map[string]any{"id": g.target.ID, "code": totpCode(g.t, g.secret, g.e.clock.Now())}
			},
			effect: func(g *grantRun) {
				if u := g.user(); !u.HasTOTP() {
					g.t.Error("not enrolled")
				}
			}},
		{resource: security.ResourceUser, action: "remove_totp", perm: security.PermUserTOTP, change: true, params: id,
			prepare: func(g *grantRun) {
				st := g.e.sec.Store()
				en, err := st.BeginTOTP(ctx, g.target.Username, "svc")
				if err == nil {
					err = st.ConfirmTOTP(ctx, g.target.Username, totpCode(g.t, en.Secret, g.e.clock.Now()))
				}
				if err != nil {
					g.t.Fatal(err)
				}
			},
			effect: func(g *grantRun) {
				if g.user().HasTOTP() {
					g.t.Error("TOTP still active")
				}
			}},
		{resource: security.ResourceSession, action: "list", perm: security.PermSessionQuery, prepare: loginTarget,
			params: func(g *grantRun) any { return map[string]any{"userId": g.target.ID} }},
		{resource: security.ResourceSession, action: "revoke", perm: security.PermSessionRevoke, change: true, prepare: loginTarget,
			params: func(g *grantRun) any { return map[string]any{"id": g.login} },
			effect: func(g *grantRun) {
				for _, f := range g.families() {
					if f.ID == g.login {
						g.t.Error("login still live")
					}
				}
			}},
		{resource: security.ResourceSession, action: "revoke_user", perm: security.PermSessionRevoke, change: true, prepare: loginTarget,
			params: func(g *grantRun) any { return map[string]any{"userId": g.target.ID} },
			effect: func(g *grantRun) {
				if n := len(g.families()); n != 0 {
					g.t.Errorf("%d logins still live", n)
				}
			}},
	}
}

// grantWant is the expected answer of an action for an actor and a target, written from the
// rule's text rather than from its code: without the action's permission 403/1100; a read is
// allowed; a change is refused with 403/1074 when the target is an admin or the change gives
// admin, unless the actor holds * (admin); disabling oneself stays 400/1073.
func grantWant(c grantCase, actor, target string) (status, code int) {
	holds := actor == "admin" || (actor == "useradm" && strings.HasPrefix(c.perm, "security."))
	switch {
	case !holds:
		return 403, rpc.CodeAccessDenied
	case c.action == "disable" && target == "self":
		return 400, rpc.CodeUserSelfDisable
	case !c.change || actor == "admin":
		return 200, 0
	case target == "admin" || c.escalate:
		return 403, rpc.CodeUserGrantDenied
	}
	return 200, 0
}

// TestGrantTable (issue #42 item 1, attack test): every action of security/user and
// security/session × {admin, useradm, observer, plain user} × {self, peer, admin target}, on
// every database. A refused change leaves the target exactly as it was (user record and
// logins); an allowed one has its effect; begin_totp answers a secret only for one's own
// account.
func TestGrantTable(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		e := newEnv(t, onDB(kind), withCfg(withGrantRoles))
		for _, c := range grantCases() {
			for _, actor := range grantActors {
				for _, target := range grantTargets {
					who := actor
					if who == "" {
						who = "plain"
					}
					name := fmt.Sprintf("%s.%s/%s/%s", c.resource, c.action, who, target)
					if c.action == "set_roles" && !c.escalate {
						name += "/clear"
					}
					t.Run(name, func(t *testing.T) { runGrantCase(t, e, c, actor, target) })
				}
			}
		}
	})
}

func runGrantCase(t *testing.T, e *env, c grantCase, actor, target string) {
	var roles []string
	if actor != "" {
		roles = []string{actor}
	}
	g := &grantRun{t: t, e: e, actor: e.addUser(t, fmt.Sprintf("actor%04d", grantSeq.Add(1)), alicePassword, roles...)}
	g.token = e.login(t, g.actor.Username, alicePassword).AccessToken
	switch target {
	case "self":
		g.target = g.actor
	case "peer":
		g.target = e.addUser(t, fmt.Sprintf("peer%04d", grantSeq.Add(1)), alicePassword, roles...)
	case "admin":
		g.target = e.addUser(t, fmt.Sprintf("admin%04d", grantSeq.Add(1)), alicePassword, "admin")
	}
	g.targetRoles = g.target.Roles
	if g.targetRoles == nil {
		g.targetRoles = []string{}
	}
	if c.prepare != nil {
		c.prepare(g)
	}
	before, beforeLogins := g.user(), g.families()
	r := e.srv.Call(t, c.resource, c.action, c.params(g), svctest.WithToken(g.token))
	status, code := grantWant(c, actor, target)
	want(t, r, status, code)
	if c.action == "begin_totp" && status == 200 {
		var en security.TOTPEnrollmentView
		r.DataAs(t, &en)
		g.answerSecret = en.Secret
	}
	switch {
	case status != 200:
		if after := g.user(); !cmp.Equal(before, after) {
			t.Errorf("a refused call changed the target:\n%s", cmp.Diff(before, after))
		}
		if afterLogins := g.families(); len(afterLogins) != len(beforeLogins) {
			t.Errorf("a refused call ended logins: %d → %d", len(beforeLogins), len(afterLogins))
		}
		if c.action == "create" {
			if _, err := e.sec.Store().LookupUser(context.Background(), g.created); err == nil {
				t.Errorf("a refused create made %s", g.created)
			}
		}
	case c.effect != nil:
		c.effect(g)
	}
}

// TestGrantUseradmCannotReachAdmin replays the report of issue #42 item 1 with docs/console.md's
// useradm role, on every database: set_roles admin on itself, creating an admin, begin_totp on
// the admin and remove_totp of the admin are all refused, and the token never gains admin
// rights; the roles picker offers useradm only the roles inside its reach.
func TestGrantUseradmCannotReachAdmin(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		e := newEnv(t, onDB(kind), withCfg(withGrantRoles))
		root := e.addUser(t, "root", alicePassword, "admin")
		ua := e.addUser(t, "ua", alicePassword, "useradm")
		enrollTOTP(t, e, "root")
		token := e.login(t, "ua", alicePassword).AccessToken
		want(t, e.userCall(t, token, "set_roles", map[string]any{"id": ua.ID, "roles": []string{"useradm", "admin"}}), 403, rpc.CodeUserGrantDenied)
		want(t, e.userCall(t, token, "create", map[string]any{"username": "evil", "password": alicePassword, "roles": []string{"admin"}}), 403, rpc.CodeUserGrantDenied)
		want(t, e.userCall(t, token, "create", map[string]any{"username": "evil2", "password": alicePassword, "roles": []string{"approval:super_admin"}}), 403, rpc.CodeUserGrantDenied)
		r := e.userCall(t, token, "begin_totp", map[string]any{"id": root.ID})
		want(t, r, 403, rpc.CodeUserGrantDenied)
		if strings.Contains(string(r.Data), "otpauth") {
			t.Errorf("begin_totp on the admin answered %s", r.Data)
		}
		want(t, e.userCall(t, token, "remove_totp", map[string]any{"id": root.ID}), 403, rpc.CodeUserGrantDenied)
		want(t, e.userCall(t, token, "reset_password", map[string]any{"id": root.ID, "password": "taken over at last"}), 403, rpc.CodeUserGrantDenied)
		want(t, e.srv.Call(t, security.ResourceSession, "revoke_user", map[string]any{"userId": root.ID}, svctest.WithToken(token)), 403, rpc.CodeUserGrantDenied)
		// the same token still has only useradm's rights
		want(t, e.srv.Call(t, "sys/monitor", "get_overview", nil, svctest.WithToken(token)), 403, rpc.CodeAccessDenied)
		if u, _ := e.sec.Store().UserByID(context.Background(), ua.ID); !cmp.Equal(u.Roles, []string{"useradm"}) {
			t.Errorf("useradm's roles = %v", u.Roles)
		}
		if u, _ := e.sec.Store().UserByID(context.Background(), root.ID); !u.HasTOTP() || u.TOTPPending || u.TOTPEnroll {
			t.Errorf("admin's TOTP changed: %+v", u)
		}
		r = e.userCall(t, token, "list_roles", nil)
		want(t, r, 200, 0)
		var roles []security.RoleView
		r.DataAs(t, &roles)
		var grantable []string
		for _, role := range roles {
			if role.Grantable {
				grantable = append(grantable, role.Name)
			}
		}
		if !slices.Equal(grantable, []string{"helpdesk", "useradm"}) {
			t.Errorf("useradm may grant %v, want [helpdesk useradm]", grantable)
		}
		// inside its reach it works: a helpdesk account, made and changed
		v := userView(t, e.userCall(t, token, "create", map[string]any{"username": "desk", "password": alicePassword, "roles": []string{"helpdesk"}}))
		userView(t, e.userCall(t, token, "set_roles", map[string]any{"id": v.ID, "roles": []string{"useradm"}}))
	})
}
