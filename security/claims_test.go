package security_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// The claim names of issued tokens: the wire-core §5.4 table plus svc's documented extras uid,
// pnm (id and name, as ids may contain "@") and fid (token family). rls and det are on the
// access token only.
var (
	accessClaimNames  = []string{"aud", "det", "exp", "fid", "iat", "iss", "jti", "lat", "nbf", "pnm", "rls", "sub", "typ", "uid"}
	refreshClaimNames = []string{"aud", "exp", "fid", "iat", "iss", "jti", "lat", "nbf", "pnm", "sub", "typ", "uid"}
)

// claimsApp is the app name of the claims tests: aud must be svc.app.name, not a constant.
const claimsApp = "claims-app"

// jwtParts decodes the header and the claims of a compact JWT (no verification: this is what
// a client or a gateway would read).
func jwtParts(t *testing.T, token string) (header, claims map[string]json.RawMessage) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	decode := func(what, seg string) map[string]json.RawMessage {
		raw, err := base64.RawURLEncoding.DecodeString(seg)
		if err != nil {
			t.Fatalf("%s: not base64url without padding: %v", what, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %v", what, raw, err)
		}
		return m
	}
	return decode("header", parts[0]), decode("claims", parts[1])
}

// claimString returns a claim that must be a JSON string.
func claimString(t *testing.T, c map[string]json.RawMessage, name string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(c[name], &s); err != nil {
		t.Errorf("%s = %s, want a string", name, c[name])
	}
	return s
}

// claimTime returns a claim that must be a JSON integer (NumericDate in whole seconds).
func claimTime(t *testing.T, c map[string]json.RawMessage, name string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal(c[name], &n); err != nil {
		t.Errorf("%s = %s, want whole seconds", name, c[name])
	}
	return n
}

// claimJSON returns a claim re-encoded compactly, for comparison with a JSON literal.
func claimJSON(t *testing.T, c map[string]json.RawMessage, name string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, c[name]); err != nil {
		t.Errorf("%s = %s: %v", name, c[name], err)
	}
	return b.String()
}

// wantClaims is what one issued pair must carry besides the fixed values of §5.4.
type wantClaims struct {
	id, name string // sub = id@name, uid, pnm
	rls, det string // compact JSON of the access token's rls and det
}

// checkPair checks every claim of the §5.4 table on a pair issued at now and returns the
// shared jti.
func checkPair(t *testing.T, pair security.AuthTokens, now time.Time, w wantClaims) string {
	t.Helper()
	if pair.RefreshToken == "" {
		t.Fatal("no refresh token")
	}
	ah, ac := jwtParts(t, pair.AccessToken)
	rh, rc := jwtParts(t, pair.RefreshToken)
	for _, h := range []map[string]json.RawMessage{ah, rh} {
		if alg := claimString(t, h, "alg"); alg != "HS256" {
			t.Errorf("header alg = %q, want HS256", alg)
		}
	}
	if diff := cmp.Diff(accessClaimNames, keys(t, mustJSON(t, ac))); diff != "" {
		t.Errorf("access claim names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(refreshClaimNames, keys(t, mustJSON(t, rc))); diff != "" {
		t.Errorf("refresh claim names (-want +got):\n%s", diff)
	}
	for typ, c := range map[string]map[string]json.RawMessage{"access": ac, "refresh": rc} {
		strs := map[string]string{"iss": security.Issuer, "aud": claimsApp, "sub": w.id + "@" + w.name,
			"typ": typ, "uid": w.id, "pnm": w.name}
		for name, want := range strs {
			if got := claimString(t, c, name); got != want {
				t.Errorf("%s %s = %q, want %q", typ, name, got, want)
			}
		}
		if _, err := uuid.Parse(claimString(t, c, "jti")); err != nil {
			t.Errorf("%s jti = %s, want a UUID", typ, c["jti"])
		}
		if fid := claimString(t, c, "fid"); fid == "" {
			t.Errorf("%s fid empty", typ)
		}
	}
	jti := claimString(t, ac, "jti")
	if got := claimString(t, rc, "jti"); got != jti {
		t.Errorf("refresh jti = %q, want the access token's %q", got, jti)
	}
	iat := now.Unix()
	times := []struct {
		typ, name string
		c         map[string]json.RawMessage
		want      int64
	}{
		{"access", "iat", ac, iat},
		{"access", "nbf", ac, iat},
		{"access", "exp", ac, iat + int64(30*time.Minute/time.Second)},
		{"refresh", "iat", rc, iat},
		{"refresh", "nbf", rc, iat + int64(15*time.Minute/time.Second)}, // refresh_not_before
		{"refresh", "exp", rc, iat + int64(168*time.Hour/time.Second)},  // token_expires
	}
	for _, tt := range times {
		if got := claimTime(t, tt.c, tt.name); got != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.typ, tt.name, got, tt.want)
		}
	}
	if got := claimJSON(t, ac, "rls"); got != w.rls {
		t.Errorf("access rls = %s, want %s", got, w.rls)
	}
	if got := claimJSON(t, ac, "det"); got != w.det {
		t.Errorf("access det = %s, want %s", got, w.det)
	}
	return jti
}

// TestIssuedTokenClaims: the tokens the server issues at login and at refresh carry exactly the
// claims of wire-core §5.4 (plus uid, pnm, fid): rls is present as [] for a user without roles,
// det as null without details, aud is svc.app.name, sub is "<id>@<name>", the pair shares its
// jti, and iat/nbf/exp follow the table.
func TestIssuedTokenClaims(t *testing.T) {
	host := &rpc.Principal{Type: rpc.PrincipalUser, ID: "ext-7", Name: "Erin", Roles: []string{"viewer"},
		Details: map[string]any{"dept": "ops", "level": 3}}
	e := newEnv(t, withCfg(func(c *config.Config) { c.App.Name = claimsApp }),
		withSec(func(o *security.Options) {
			o.Authenticators = map[string]security.Authenticator{"sso": security.AuthenticatorFunc(
				func(context.Context, security.LoginRequest) (*rpc.Principal, error) { return host, nil })}
		}))
	alice := e.addUser(t, "alice", alicePassword)
	bob := e.addUser(t, "bob", alicePassword, "ops", "viewer")

	tests := []struct {
		name  string
		login func(t *testing.T) security.AuthTokens
		want  wantClaims
	}{
		{"user without roles", func(t *testing.T) security.AuthTokens { return e.login(t, "alice", alicePassword) },
			wantClaims{id: alice.ID, name: "Alice", rls: `[]`, det: `null`}},
		{"user with roles", func(t *testing.T) security.AuthTokens { return e.login(t, "bob", alicePassword) },
			wantClaims{id: bob.ID, name: "Bob", rls: `["ops","viewer"]`, det: `null`}},
		{"host principal with details", func(t *testing.T) security.AuthTokens {
			r := e.call(t, "login", map[string]any{"type": "sso", "principal": "erin", "credentials": "x"})
			want(t, r, 200, 0)
			var res security.LoginResult
			r.DataAs(t, &res)
			if res.Tokens == nil {
				t.Fatalf("login = %s, want tokens", r.Data)
			}
			return *res.Tokens
		}, wantClaims{id: "ext-7", name: "Erin", rls: `["viewer"]`, det: `{"dept":"ops","level":3}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pair := tt.login(t)
			loginAt := e.clock.Now().UnixMicro()
			first := checkPair(t, pair, e.clock.Now(), tt.want)
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(pair.AccessToken)), 200, 0)

			e.clock.Advance(15 * time.Minute) // the refresh token's nbf
			r := e.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken})
			want(t, r, 200, 0)
			var next security.AuthTokens
			r.DataAs(t, &next)
			if jti := checkPair(t, next, e.clock.Now(), tt.want); jti == first {
				t.Errorf("refreshed jti = %q, want a new one", jti)
			}
			// lat is the login's instant in µs, kept by the refresh (issue #42 item 6)
			for _, tok := range []string{pair.AccessToken, pair.RefreshToken, next.AccessToken, next.RefreshToken} {
				_, c := jwtParts(t, tok)
				if got := claimTime(t, c, "lat"); got != loginAt {
					t.Errorf("lat = %d, want the login's %d", got, loginAt)
				}
			}
		})
	}
}

// TestTokensWithoutOptionalClaims: tokens without rls or det (older tokens, other issuers of the
// same key) still verify; a missing or null rls means no roles.
func TestTokensWithoutOptionalClaims(t *testing.T) {
	e := newEnv(t)
	key, _ := hex.DecodeString(svctest.TestSecret)
	tests := []struct {
		name      string
		mutate    func(jwt.MapClaims)
		wantPerms []string
	}{
		{"rls admin (control)", nil, []string{"*"}},
		{"no rls", func(c jwt.MapClaims) { delete(c, "rls") }, []string{}},
		{"rls null", func(c jwt.MapClaims) { c["rls"] = nil }, []string{}},
		{"no rls and no det", func(c jwt.MapClaims) { delete(c, "rls"); delete(c, "det") }, []string{}},
		{"det null", func(c jwt.MapClaims) { c["det"] = nil }, []string{"*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, "get_user_info", nil, svctest.WithToken(forge(t, jwt.SigningMethodHS256, key, tt.mutate)))
			want(t, r, 200, 0)
			var info struct {
				PermissionTokens []string `json:"permissionTokens"`
			}
			r.DataAs(t, &info)
			if diff := cmp.Diff(tt.wantPerms, info.PermissionTokens); diff != "" {
				t.Errorf("permissionTokens (-want +got):\n%s", diff)
			}
		})
	}
}
