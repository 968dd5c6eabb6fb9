package security_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// withAudit sends the server's audit records to log.
func withAudit(log *svctest.Audits) envOption {
	return func(s *setup) { s.svcOpts = append(s.svcOpts, svc.WithAuditSink(log)) }
}

// userCall calls security/user with a bearer token.
func (e *env) userCall(t *testing.T, token, action string, params any, opts ...svctest.CallOption) svctest.Response {
	t.Helper()
	return e.srv.Call(t, security.ResourceUser, action, params, append([]svctest.CallOption{svctest.WithToken(token)}, opts...)...)
}

// userView decodes a successful answer as a UserView.
func userView(t *testing.T, r svctest.Response) security.UserView {
	t.Helper()
	want(t, r, 200, 0)
	var v security.UserView
	r.DataAs(t, &v)
	return v
}

// TestUserResourcePermissions: every action of security/user needs its own token; a user
// holding none is refused with 403/1100 before anything changes, and a token without the
// needed one too.
func TestUserResourcePermissions(t *testing.T) {
	e := newEnv(t, withCfg(func(c *config.Config) {
		c.Security.Roles["querier"] = []string{security.PermUserQuery}
	}))
	e.addUser(t, "root", "root-pw", "admin")
	target := e.addUser(t, "target", "target-pw")
	e.addUser(t, "viewer", "viewer-pw", "viewer")
	e.addUser(t, "querier", "querier-pw", "querier")
	viewer := e.login(t, "viewer", "viewer-pw").AccessToken
	querier := e.login(t, "querier", "querier-pw").AccessToken
	id := map[string]any{"id": target.ID}
	ops := []struct {
		action string
		params any
	}{
		{"find_page", map[string]any{}}, {"get", id}, {"list_roles", map[string]any{}},
		{"create", map[string]any{"username": "new", "password": "new-pw"}},
		{"update", map[string]any{"id": target.ID, "displayName": "X"}},
		{"disable", id}, {"enable", id},
		{"set_roles", map[string]any{"id": target.ID, "roles": []string{"admin"}}},
		{"reset_password", map[string]any{"id": target.ID, "password": "other-pw"}},
		{"begin_totp", id}, {"confirm_totp", map[string]any{"id": target.ID, "code": "123456"}}, {"remove_totp", id},
	}
	for _, op := range ops {
		t.Run(op.action, func(t *testing.T) {
			want(t, e.userCall(t, viewer, op.action, op.params), 403, rpc.CodeAccessDenied)
			want(t, e.srv.Call(t, security.ResourceUser, op.action, op.params), 401, rpc.CodeUnauthenticated)
			r := e.userCall(t, querier, op.action, op.params)
			switch op.action {
			case "find_page", "get", "list_roles":
				want(t, r, 200, 0)
			default:
				want(t, r, 403, rpc.CodeAccessDenied)
			}
		})
	}
	u, err := e.sec.Store().UserByID(context.Background(), target.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Disabled || len(u.Roles) != 0 || u.DisplayName != "Target" || u.TOTPPending {
		t.Errorf("refused calls changed the user: %+v", u)
	}
}

// TestUserResource runs the management operations on every database: create, search and page,
// disable and enable, roles, password reset under the policy, TOTP enrollment, with the effect
// of each on logins and issued tokens, and the audit records of the changes.
func TestUserResource(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		log := &svctest.Audits{}
		e := newEnv(t, onDB(kind), withAudit(log), withCfg(func(c *config.Config) {
			c.Security.PasswordPolicy.MinLength = 8
			c.Security.PasswordPolicy.HistoryDepth = 2
		}))
		root := e.addUser(t, "root", "root-password", "admin")
		admin := e.login(t, "root", "root-password").AccessToken
		ctx := context.Background()

		t.Run("create", func(t *testing.T) {
			v := userView(t, e.userCall(t, admin, "create", map[string]any{"username": " Alice ", "displayName": "Alice Liddell",
				"password": "alice-password", "roles": []string{"viewer"}}))
			if v.Username != "alice" || v.DisplayName != "Alice Liddell" || !cmp.Equal(v.Roles, []string{"viewer"}) || v.Disabled || v.TOTPEnabled {
				t.Errorf("created %+v", v)
			}
			e.login(t, "alice", "alice-password")
			want(t, e.userCall(t, admin, "create", map[string]any{"username": "ALICE", "password": "another-password"}), 200, rpc.CodeRecordAlreadyExists)
			want(t, e.userCall(t, admin, "create", map[string]any{"username": "with space", "password": "another-password"}), 400, rpc.CodeUserInvalidName)
			r := e.userCall(t, admin, "create", map[string]any{"username": "bob", "password": "short"})
			want(t, r, 400, rpc.CodePasswordPolicyViolation)
			want(t, e.userCall(t, admin, "create", map[string]any{"username": "bob"}), 400, rpc.CodeBadRequest)
			rec, ok := log.Last(security.ResourceUser, "create")
			if !ok {
				t.Fatal("no audit record of create")
			}
			if b, _ := json.Marshal(rec.Params); strings.Contains(string(b), "alice-password") || !strings.Contains(string(b), rpc.RedactedAuditValue) {
				t.Errorf("audit params carry the password: %s", b)
			}
		})
		for _, name := range []string{"carol", "dave", "erin"} {
			e.addUser(t, name, name+"-password", "ops")
		}

		t.Run("find_page", func(t *testing.T) {
			page := func(params any, meta any) (int64, []string) {
				t.Helper()
				r := e.userCall(t, admin, "find_page", params, svctest.WithMeta(meta))
				want(t, r, 200, 0)
				var p struct {
					Page, Size int
					Total      int64
					Items      []security.UserView
				}
				r.DataAs(t, &p)
				names := []string{}
				for _, u := range p.Items {
					names = append(names, u.Username)
				}
				return p.Total, names
			}
			if total, names := page(map[string]any{}, map[string]any{"page": 1, "size": 2}); total != 5 || !cmp.Equal(names, []string{"alice", "carol"}) {
				t.Errorf("page 1 = %d %v", total, names)
			}
			if _, names := page(map[string]any{}, map[string]any{"page": 3, "size": 2}); !cmp.Equal(names, []string{"root"}) {
				t.Errorf("page 3 = %v", names)
			}
			if _, names := page(map[string]any{"keyword": "LIDD"}, nil); !cmp.Equal(names, []string{"alice"}) {
				t.Errorf("keyword on display name = %v", names)
			}
			if _, names := page(map[string]any{"keyword": "R"}, nil); !cmp.Equal(names, []string{"carol", "erin", "root"}) {
				t.Errorf("keyword r = %v", names)
			}
			if _, names := page(map[string]any{"keyword": "%"}, nil); len(names) != 0 {
				t.Errorf("keyword %% = %v, want none (wildcards are literal)", names)
			}
			if _, names := page(map[string]any{"role": "ops"}, map[string]any{"sort": []map[string]any{{"column": "username", "direction": "desc"}}}); !cmp.Equal(names, []string{"erin", "dave", "carol"}) {
				t.Errorf("role ops, desc = %v", names)
			}
			if _, names := page(map[string]any{"role": "op"}, nil); len(names) != 0 {
				t.Errorf("role op = %v, want none (whole role names only)", names)
			}
			want(t, e.userCall(t, admin, "find_page", map[string]any{}, svctest.WithMeta(map[string]any{"sort": []map[string]any{{"column": "password_hash"}}})), 400, rpc.CodeBadRequest)
		})

		t.Run("disable and enable", func(t *testing.T) {
			u, _ := e.sec.Store().LookupUser(ctx, "carol")
			carol := e.login(t, "carol", "carol-password").AccessToken
			want(t, e.userCall(t, admin, "disable", map[string]any{"id": root.ID}), 400, rpc.CodeUserSelfDisable)
			if v := userView(t, e.userCall(t, admin, "disable", map[string]any{"id": u.ID})); !v.Disabled {
				t.Errorf("disable answered %+v", v)
			}
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(carol)), 401, rpc.CodeTokenInvalid)
			want(t, e.call(t, "login", map[string]any{"type": "password", "principal": "carol", "credentials": "carol-password"}), 401, rpc.CodeCredentialsInvalid)
			if _, names := e.disabledNames(t, admin); !cmp.Equal(names, []string{"carol"}) {
				t.Errorf("disabled users = %v", names)
			}
			if v := userView(t, e.userCall(t, admin, "enable", map[string]any{"id": u.ID})); v.Disabled {
				t.Errorf("enable answered %+v", v)
			}
			e.login(t, "carol", "carol-password")
			want(t, e.userCall(t, admin, "disable", map[string]any{"id": "no-such-id"}), 200, rpc.CodeRecordNotFound)
		})

		t.Run("set_roles", func(t *testing.T) {
			u, _ := e.sec.Store().LookupUser(ctx, "dave")
			dave := e.login(t, "dave", "dave-password").AccessToken
			v := userView(t, e.userCall(t, admin, "set_roles", map[string]any{"id": u.ID, "roles": []string{"viewer", "admin"}}))
			if !cmp.Equal(v.Roles, []string{"viewer", "admin"}) {
				t.Errorf("roles = %v", v.Roles)
			}
			// the token issued before the change carries the new roles (doc.go: current roles)
			r := e.call(t, "get_user_info", nil, svctest.WithToken(dave))
			want(t, r, 200, 0)
			var info security.UserInfo
			r.DataAs(t, &info)
			if !cmp.Equal(info.PermissionTokens, []string{"*", "sys.view"}) {
				t.Errorf("permissionTokens = %v", info.PermissionTokens)
			}
			if v := userView(t, e.userCall(t, admin, "set_roles", map[string]any{"id": u.ID, "roles": []string{}})); len(v.Roles) != 0 {
				t.Errorf("cleared roles = %v", v.Roles)
			}
			want(t, e.userCall(t, admin, "set_roles", map[string]any{"id": u.ID}), 400, rpc.CodeBadRequest)
		})

		t.Run("reset_password", func(t *testing.T) {
			u, _ := e.sec.Store().LookupUser(ctx, "erin")
			erin := e.login(t, "erin", "erin-password").AccessToken
			want(t, e.userCall(t, admin, "reset_password", map[string]any{"id": u.ID, "password": "short"}), 400, rpc.CodePasswordPolicyViolation)
			want(t, e.userCall(t, admin, "reset_password", map[string]any{"id": u.ID, "password": "erin-password"}), 400, rpc.CodePasswordPolicyViolation)
			e.clock.Advance(2 * time.Second) // tokens issued in the second of the change are refused with it
			before := u.PasswordChangedAt
			v := userView(t, e.userCall(t, admin, "reset_password", map[string]any{"id": u.ID, "password": "erin-new-password"}))
			if !v.PasswordChangedAt.After(before) {
				t.Errorf("passwordChangedAt %v not after %v", v.PasswordChangedAt, before)
			}
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(erin)), 401, rpc.CodeTokenInvalid)
			e.clock.Advance(2 * time.Second)
			e.login(t, "erin", "erin-new-password")
			rec, ok := log.Last(security.ResourceUser, "reset_password")
			if !ok {
				t.Fatal("no audit record of reset_password")
			}
			if b, _ := json.Marshal(rec.Params); strings.Contains(string(b), "erin-new-password") {
				t.Errorf("audit params carry the password: %s", b)
			}
		})

		t.Run("totp", func(t *testing.T) {
			// one's own enrollment answers the secret; root enrolls itself
			rootID := map[string]any{"id": root.ID}
			want(t, e.userCall(t, admin, "confirm_totp", map[string]any{"id": root.ID, "code": "123456"}), 400, rpc.CodeUserTOTPNotPending)
			r := e.userCall(t, admin, "begin_totp", rootID)
			want(t, r, 200, 0)
			var en security.TOTPEnrollmentView
			r.DataAs(t, &en)
			if en.Secret == "" || en.AtNextSignIn || !strings.HasPrefix(en.OTPAuthURL, "otpauth://totp/") || !strings.Contains(en.OTPAuthURL, "secret="+en.Secret) {
				t.Fatalf("enrollment = %+v", en)
			}
			if v := userView(t, e.userCall(t, admin, "get", rootID)); v.TOTPEnabled || !v.TOTPPending {
				t.Errorf("after begin: %+v", v)
			}
			if rec, ok := log.Last(security.ResourceUser, "begin_totp"); !ok {
				t.Error("no audit record of begin_totp")
			} else if b, _ := json.Marshal(rec.Result); strings.Contains(string(b), en.Secret) {
				t.Errorf("audit result carries the secret: %s", b)
			}
			wrong := totpCode(t, en.Secret, e.clock.Now().Add(-10*time.Minute))
			want(t, e.userCall(t, admin, "confirm_totp", map[string]any{"id": root.ID, "code": wrong}), 400, rpc.CodeUserTOTPCodeInvalid)
			v := userView(t, e.userCall(t, admin, "confirm_totp", map[string]any{"id": root.ID, "code": totpCode(t, en.Secret, e.clock.Now())}))
			if !v.TOTPEnabled || v.TOTPPending {
				t.Errorf("after confirm: %+v", v)
			}
			if res, _ := e.passwordLogin(t, "root", "root-password"); res.Challenge == nil || res.Challenge.Type != security.ChallengeTOTP {
				t.Errorf("login with TOTP answered %+v", res)
			}
			if v := userView(t, e.userCall(t, admin, "remove_totp", rootID)); v.TOTPEnabled || v.TOTPPending {
				t.Errorf("after remove: %+v", v)
			}
			if res, _ := e.passwordLogin(t, "root", "root-password"); res.Tokens == nil {
				t.Errorf("login after remove answered %+v", res)
			}

			// another account's enrollment is requested for its next sign-in: no secret here
			u, _ := e.sec.Store().LookupUser(ctx, "alice")
			id := map[string]any{"id": u.ID}
			r = e.userCall(t, admin, "begin_totp", id)
			want(t, r, 200, 0)
			en = security.TOTPEnrollmentView{}
			r.DataAs(t, &en)
			if en.Secret != "" || en.OTPAuthURL != "" || !en.AtNextSignIn {
				t.Fatalf("enrollment of another account = %+v", en)
			}
			if v := userView(t, e.userCall(t, admin, "get", id)); v.TOTPEnabled || v.TOTPPending || !v.TOTPEnroll {
				t.Errorf("after begin for alice: %+v", v)
			}
			secret := e.finishEnrollment(t, "alice", "alice-password")
			if v := userView(t, e.userCall(t, admin, "get", id)); !v.TOTPEnabled || v.TOTPPending || v.TOTPEnroll {
				t.Errorf("after alice enrolled: %+v", v)
			}
			if res, _ := e.passwordLogin(t, "alice", "alice-password"); res.Challenge == nil || res.Challenge.Type != security.ChallengeTOTP {
				t.Errorf("login after enrollment answered %+v (secret %d chars)", res, len(secret))
			}
			if v := userView(t, e.userCall(t, admin, "remove_totp", id)); v.TOTPEnabled || v.TOTPPending || v.TOTPEnroll {
				t.Errorf("after remove: %+v", v)
			}
		})

		t.Run("update and list_roles", func(t *testing.T) {
			v := userView(t, e.userCall(t, admin, "update", map[string]any{"id": root.ID, "displayName": " The Root "}))
			if v.DisplayName != "The Root" {
				t.Errorf("displayName = %q", v.DisplayName)
			}
			r := e.userCall(t, admin, "list_roles", nil)
			want(t, r, 200, 0)
			var roles []security.RoleView
			r.DataAs(t, &roles)
			wantRoles := []security.RoleView{{Name: "admin", Permissions: []string{"*"}, Grantable: true},
				{Name: "ops", Permissions: []string{"cron.*", "sys.monitor"}, Grantable: true},
				{Name: "viewer", Permissions: []string{"sys.view"}, Grantable: true}}
			if diff := cmp.Diff(wantRoles, roles); diff != "" {
				t.Errorf("list_roles (-want +got):\n%s", diff)
			}
		})
	})
}

// finishEnrollment signs in as user, whose enrollment someone else requested: the sign-in
// presents the totp_enrollment challenge with a new secret, and a code of that secret completes
// it with tokens. It returns the secret.
func (e *env) finishEnrollment(t *testing.T, user, password string) string {
	t.Helper()
	res, _ := e.passwordLogin(t, user, password)
	if res.Challenge == nil || res.Challenge.Type != security.ChallengeTOTPEnrollment || !res.Challenge.Required {
		t.Fatalf("sign-in with a requested enrollment answered %+v", res)
	}
	var data security.TOTPEnrollmentData
	b, _ := json.Marshal(res.Challenge.Data)
	if err := json.Unmarshal(b, &data); err != nil || data.Secret == "" || !strings.Contains(data.OTPAuthURL, "secret="+data.Secret) {
		t.Fatalf("enrollment challenge data = %s (%v)", b, err)
	}
	wrong := totpCode(t, data.Secret, e.clock.Now().Add(-10*time.Minute))
	want(t, e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": security.ChallengeTOTPEnrollment,
		"response": wrong}), 401, rpc.CodeOTPCodeInvalid)
	r := e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": security.ChallengeTOTPEnrollment,
		"response": totpCode(t, data.Secret, e.clock.Now())})
	want(t, r, 200, 0)
	var done security.LoginResult
	r.DataAs(t, &done)
	if done.Tokens == nil || done.Tokens.AccessToken == "" {
		t.Fatalf("enrollment resolved to %+v", done)
	}
	e.clock.Advance(31 * time.Second) // the confirming code is spent: the next login needs the next step's code
	return data.Secret
}

// disabledNames lists the disabled users through find_page.
func (e *env) disabledNames(t *testing.T, token string) (int64, []string) {
	t.Helper()
	r := e.userCall(t, token, "find_page", map[string]any{"disabled": true})
	want(t, r, 200, 0)
	var p struct {
		Total int64
		Items []security.UserView
	}
	r.DataAs(t, &p)
	var names []string
	for _, u := range p.Items {
		names = append(names, u.Username)
	}
	return p.Total, names
}

// TestUserResourceHostStore: with a host user store security/user has no operations.
func TestUserResourceHostStore(t *testing.T) {
	e := newEnv(t, withSec(func(o *security.Options) { o.UserStore = hostUsers{} }))
	token := e.srv.Token(t, svctest.User("u1", "admin"))
	want(t, e.userCall(t, token, "find_page", map[string]any{}), 404, rpc.CodeNotFound)
}

// hostUsers is an empty host user store.
type hostUsers struct{}

func (hostUsers) LookupUser(context.Context, string) (*security.User, error) {
	return nil, security.ErrUserNotFound
}
