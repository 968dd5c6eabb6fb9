package security_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestTrustRequestPayload pins the canonical payload of wire-core §3.1/§5.9: sorted keys, fixed
// values as they are, bound values RFC 3986-encoded with upper-case hex and %20 for a space.
func TestTrustRequestPayload(t *testing.T) {
	r := security.TrustRequest{AppID: "crm", UserID: "alice smith+1", Redirect: "https://crm.example.com/cb?a=1&b=~x_y.z-",
		Nonce: "n1", Timestamp: 1700000000}
	const want = "app_id=crm&method=GET&nonce=n1&path=/sso/trust&redirect=https%3A%2F%2Fcrm.example.com%2Fcb%3Fa%3D1%26b%3D~x_y.z-" +
		"&timestamp=1700000000&user_id=alice%20smith%2B1"
	if got := r.Payload("/sso/trust"); got != want {
		t.Fatalf("payload =\n%s\nwant\n%s", got, want)
	}
	key, _ := hex.DecodeString(crmSecret)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(want))
	sig, err := r.Sign("/sso/trust", crmSecret)
	if err != nil || sig != hex.EncodeToString(m.Sum(nil)) {
		t.Errorf("Sign = %s, %v; want the hex HMAC-SHA256 of the payload", sig, err)
	}
	if _, err := r.Sign("/sso/trust", "not hex"); err == nil {
		t.Error("Sign with a non-hex secret: want an error")
	}
}

// TestTrustGatewayRateLimit: rate_limit.max per period per app and client IP, answered 429 in
// plain text with Retry-After.
func TestTrustGatewayRateLimit(t *testing.T) {
	e := newEnv(t, trustOn(func(tl *config.TrustLogin) { tl.RateLimit = config.RateLimit{Max: 3, Period: time.Minute} }),
		withCfg(func(c *config.Config) { c.App.TrustedProxies = []string{"127.0.0.1", "::1"} }))
	e.addUser(t, "alice", alicePassword)
	hit := func(app, ip string) gatewayReply {
		to := "https://crm.example.com/cb"
		if app == "erp" {
			to = "https://erp.example.com/"
		}
		return gateway(t, e.srv, signedQuery(t, e.trustReq(app, "alice", to)), browserUA, "X-Forwarded-For", ip)
	}
	for range 3 {
		if g := hit("crm", "10.0.0.1"); g.status != 302 {
			t.Fatalf("within the limit = %d %q, want 302", g.status, g.body)
		}
	}
	g := hit("crm", "10.0.0.1")
	if g.status != 429 || g.body != "Too many requests" || g.header.Get("Retry-After") == "" {
		t.Errorf("over the limit = %d %q Retry-After %q, want 429 plain text with Retry-After", g.status, g.body, g.header.Get("Retry-After"))
	}
	if g := hit("crm", "10.0.0.2"); g.status != 302 {
		t.Errorf("other client IP = %d, want 302", g.status)
	}
	if g := hit("erp", "10.0.0.1"); g.status != 302 {
		t.Errorf("other app = %d, want 302", g.status)
	}
	e.clock.Advance(2 * time.Minute)
	if g := hit("crm", "10.0.0.1"); g.status != 302 {
		t.Errorf("after the period = %d, want 302", g.status)
	}
}

// TestTrustLoginStartupErrors: the named startup errors of spec §7 come out of svc.New; the
// module's own requirements fail Start.
func TestTrustLoginStartupErrors(t *testing.T) {
	enabled := func(c *config.Config) *config.TrustLogin {
		c.Security.TrustLogin.Enabled = true
		c.Security.TrustLogin.Apps = map[string]config.TrustLoginApp{"crm": {RedirectURLs: []string{"https://crm.example.com/cb"}, Secret: crmSecret}}
		return &c.Security.TrustLogin
	}
	tests := []struct {
		name string
		set  func(c *config.Config)
		want error
	}{
		{"no apps", func(c *config.Config) { enabled(c).Apps = nil }, config.ErrTrustLoginAppsRequired},
		{"path under /api", func(c *config.Config) { enabled(c).Path = "/api/sso" }, config.ErrTrustLoginPathInvalid},
		{"path not clean", func(c *config.Config) { enabled(c).Path = "/sso/../x" }, config.ErrTrustLoginPathInvalid},
		{"redirect not absolute", func(c *config.Config) {
			enabled(c).Apps["crm"] = config.TrustLoginApp{RedirectURLs: []string{"//crm.example.com/cb"}, Secret: crmSecret}
		}, config.ErrTrustLoginRedirectInvalid},
		{"redirect with user info", func(c *config.Config) {
			enabled(c).Apps["crm"] = config.TrustLoginApp{RedirectURLs: []string{"https://u@crm.example.com/"}, Secret: crmSecret}
		}, config.ErrTrustLoginRedirectInvalid},
		{"no redirects", func(c *config.Config) {
			enabled(c).Apps["crm"] = config.TrustLoginApp{Secret: crmSecret}
		}, config.ErrTrustLoginRedirectsEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := svctest.Config(t, config.SQLite)
			tt.set(cfg)
			_, err := svc.New(cfg, svc.WithLogger(svctest.Logger()))
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), "svc.security.trust_login") {
				t.Errorf("svc.New = %v, want %v naming the key", err, tt.want)
			}
		})
	}
	start := func(t *testing.T, set func(*config.Config), opts ...svc.Option) error {
		cfg := svctest.Config(t, config.SQLite)
		set(cfg)
		srv, err := svc.New(cfg, append(opts, svc.WithLogger(svctest.Logger()))...)
		if err != nil {
			return err
		}
		if _, err := srv.Start(context.Background()); err != nil {
			return err
		}
		return srv.Stop(context.Background())
	}
	t.Run("app without secret and no loader", func(t *testing.T) {
		err := start(t, func(c *config.Config) {
			enabled(c).Apps["crm"] = config.TrustLoginApp{RedirectURLs: []string{"https://crm.example.com/"}}
		})
		if err == nil || !strings.Contains(err.Error(), "TrustSecrets") {
			t.Errorf("Start = %v, want an error naming Options.TrustSecrets", err)
		}
	})
	t.Run("host password login without a user resolver", func(t *testing.T) {
		auth := security.AuthenticatorFunc(func(context.Context, security.LoginRequest) (*rpc.Principal, error) {
			return nil, security.ErrCredentialsInvalid
		})
		err := start(t, func(c *config.Config) { enabled(c) },
			svc.WithSecurity(security.Options{Authenticators: map[string]security.Authenticator{"password": auth}}))
		if err == nil || !strings.Contains(err.Error(), "TrustUsers") {
			t.Errorf("Start = %v, want an error naming Options.TrustUsers", err)
		}
	})
}

// TestTrustLoginHostExtensions: a host resolver maps user_id to its own principal (errors are
// 1062) and a host loader supplies the secret of an app configured without one.
func TestTrustLoginHostExtensions(t *testing.T) {
	whoami := rpc.Resource{Name: "test/who", Ops: []rpc.Op{rpc.Handle("am_i", func(_ context.Context, c rpc.Call, _ rpc.NoParams) (*rpc.Principal, error) {
		return c.Principal, nil
	})}}
	resolver := security.TrustUserResolverFunc(func(_ context.Context, app, user string) (*rpc.Principal, error) {
		if app != "portal" || !strings.HasPrefix(user, "emp-") {
			return nil, errors.New("no such employee")
		}
		return &rpc.Principal{Type: rpc.PrincipalUser, ID: "employee:" + strings.TrimPrefix(user, "emp-"), Name: user}, nil
	})
	secrets := trustSecrets{"portal": crmSecret}
	e := newEnv(t, withResources(whoami), withSec(func(o *security.Options) { o.TrustUsers, o.TrustSecrets = resolver, secrets }),
		trustOn(func(tl *config.TrustLogin) {
			tl.Apps["portal"] = config.TrustLoginApp{RedirectURLs: []string{"https://portal.example.com/sso"}}
		}))
	req := e.trustReq("portal", "emp-42", "https://portal.example.com/sso/done")
	g := gateway(t, e.srv, signedQuery(t, req), browserUA) // signed with crmSecret, which the loader returns
	r := e.exchange(t, "portal", g.code(t), browserUA)
	want(t, r, 200, 0)
	var res security.LoginResult
	r.DataAs(t, &res)
	who := e.srv.Call(t, "test/who", "am_i", nil, svctest.WithToken(res.Tokens.AccessToken))
	var p rpc.Principal
	who.DataAs(t, &p)
	if p.ID != "employee:42" {
		t.Errorf("principal = %+v, want employee:42 from the resolver", p)
	}
	if g := gateway(t, e.srv, signedQuery(t, e.trustReq("portal", "contractor-1", "https://portal.example.com/sso")), browserUA); g.status != 401 || g.body != msgTrustUser {
		t.Errorf("resolver error = %d %q, want 401 %q", g.status, g.body, msgTrustUser)
	}
}

// trustSecrets is a TrustSecretLoader over a map.
type trustSecrets map[string]string

func (s trustSecrets) TrustSecret(_ context.Context, app string) (string, error) {
	if v, ok := s[app]; ok {
		return v, nil
	}
	return "", errors.New("unknown app")
}

// TestTrustGatewayLanguage: plain-text refusals are rendered in the configured language.
func TestTrustGatewayLanguage(t *testing.T) {
	e := newEnv(t, trustOn(nil), withCfg(func(c *config.Config) { c.I18n.Language = "zh-CN" }))
	g := gateway(t, e.srv, signedQuery(t, e.trustReq("hr", "alice", "https://crm.example.com/cb")), browserUA)
	if g.status != 401 || g.body != "信任登录失败：请求校验未通过" {
		t.Errorf("gateway = %d %q, want 401 with the zh-CN message", g.status, g.body)
	}
}
