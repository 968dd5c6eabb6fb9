package security_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// Plain-text messages of the gateway (English catalog).
const (
	msgTrustAuth     = "Trust login failed: the request could not be verified"
	msgTrustRedirect = "Trust login failed: the redirect address is not allowed"
	msgTrustUser     = "Trust login failed: the user could not be identified"
)

// gatewayRow is one gateway request: the query (built from a fresh signed request of app crm for
// user alice to https://crm.example.com/cb?x=1 unless changed) and the expected answer.
type gatewayRow struct {
	name string
	// req changes the request before it is signed.
	req func(e *env, r *security.TrustRequest)
	// query changes the signed query (tampering).
	query      func(q url.Values)
	wantStatus int
	wantBody   string // for refusals: the plain-text message
	// wantLocation, when set, is the exact Location of a 302, with {code} for the issued code.
	wantLocation string
}

// gatewayRows are the gateway's rules and the attack rows of issue #5.
func gatewayRows() []gatewayRow {
	redirect := func(to string) func(*env, *security.TrustRequest) {
		return func(_ *env, r *security.TrustRequest) { r.Redirect = to }
	}
	drop := func(key string) func(url.Values) { return func(q url.Values) { q.Del(key) } }
	refused := func(name string, req func(*env, *security.TrustRequest)) gatewayRow {
		return gatewayRow{name: "redirect refused: " + name, req: req, wantStatus: 400, wantBody: msgTrustRedirect}
	}
	rows := []gatewayRow{
		{name: "valid request", wantStatus: 302},
		{name: "upper-case hex signature", query: func(q url.Values) { q.Set("signature", strings.ToUpper(q.Get("signature"))) }, wantStatus: 302},
		{name: "deeper path and upper-case host", req: redirect("https://CRM.example.com/cb/deep/page?y=2"), wantStatus: 302},
		{name: "entry with a port", req: redirect("http://legacy.example.com:8080/any/path"), wantStatus: 302},
		{name: "timestamp 4m59s old", req: func(e *env, r *security.TrustRequest) { r.Timestamp -= 299 }, wantStatus: 302},
		{name: "timestamp 4m59s ahead", req: func(e *env, r *security.TrustRequest) { r.Timestamp += 299 }, wantStatus: 302},
		{name: "user id with spaces and symbols is encoded", req: func(e *env, r *security.TrustRequest) { r.UserID = " Alice " }, wantStatus: 302},
		// wire-core §5.9: app_id and code are added, the existing query is kept byte for byte
		{name: "query with ; and a fragment kept", req: redirect("https://crm.example.com/cb?a=1&b=x;y#frag"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb?a=1&b=x;y&app_id=crm&code={code}#frag"},
		{name: "bare key and + kept", req: redirect("https://crm.example.com/cb?flag&x=a+b"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb?flag&x=a+b&app_id=crm&code={code}"},
		{name: "target's app_id and code replaced", req: redirect("https://crm.example.com/cb?app_id=evil&x=1&code=old"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb?x=1&app_id=crm&code={code}"},
		{name: "escaped names app%5Fid and c%6Fde replaced", req: redirect("https://crm.example.com/cb?app%5Fid=evil&c%6Fde=old&codes=1"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb?codes=1&app_id=crm&code={code}"},
		{name: "target without a query", req: redirect("https://crm.example.com/cb/land"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb/land?app_id=crm&code={code}"},
		{name: "target with an empty query", req: redirect("https://crm.example.com/cb?"), wantStatus: 302,
			wantLocation: "https://crm.example.com/cb?app_id=crm&code={code}"},

		{name: "unknown app", req: func(_ *env, r *security.TrustRequest) { r.AppID = "hr" }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no app id", query: drop("app_id"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no user id", query: drop("user_id"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no redirect", query: drop("redirect"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no nonce", query: drop("nonce"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no timestamp", query: drop("timestamp"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "no signature", query: drop("signature"), wantStatus: 401, wantBody: msgTrustAuth},
		{name: "timestamp not a number", query: func(q url.Values) { q.Set("timestamp", "soon") }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "stale timestamp (5m1s old)", req: func(_ *env, r *security.TrustRequest) { r.Timestamp -= 301 }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "timestamp 5m1s ahead", req: func(_ *env, r *security.TrustRequest) { r.Timestamp += 301 }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "signature of another app's secret", query: func(q url.Values) {
			r := security.TrustRequest{AppID: "crm", UserID: q.Get("user_id"), Redirect: q.Get("redirect"), Nonce: q.Get("nonce")}
			r.Timestamp = mustInt(q.Get("timestamp"))
			sig, _ := r.Sign(trustPath, erpSecret)
			q.Set("signature", sig)
		}, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "tampered redirect", query: func(q url.Values) { q.Set("redirect", "https://crm.example.com/cb/other") }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "tampered user id", query: func(q url.Values) { q.Set("user_id", "bob") }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "signature not hex", query: func(q url.Values) { q.Set("signature", "zz") }, wantStatus: 401, wantBody: msgTrustAuth},
		{name: "overlong nonce", req: func(_ *env, r *security.TrustRequest) { r.Nonce = strings.Repeat("n", 129) }, wantStatus: 401, wantBody: msgTrustAuth},

		refused("other host", redirect("https://evil.example.net/cb")),
		refused("host suffix", redirect("https://crm.example.com.evil.net/cb")),
		refused("scheme change https to http", redirect("http://crm.example.com/cb")),
		refused("scheme change http to https", redirect("https://legacy.example.com:8080/")),
		refused("other port", redirect("https://crm.example.com:8443/cb")),
		refused("scheme-relative //evil", redirect("//evil.example.net/cb")),
		refused("relative path", redirect("/cb")),
		refused("opaque https:host", redirect("https:crm.example.com/cb")),
		refused("javascript", redirect("javascript:alert(1)")),
		refused("sibling path", redirect("https://crm.example.com/cbx")),
		refused("parent path", redirect("https://crm.example.com/")),
		refused("path traversal ..", redirect("https://crm.example.com/cb/../admin")),
		refused("encoded traversal %2e%2e", redirect("https://crm.example.com/cb/%2e%2e/admin")),
		refused("encoded slash traversal", redirect("https://crm.example.com/cb%2F..%2Fadmin")),
		refused("traversal with parameter ..;", redirect("https://crm.example.com/cb/..;/admin")),
		refused("userinfo @ to another host", redirect("https://crm.example.com@evil.example.net/cb")),
		refused("userinfo on the right host", redirect("https://user:pw@crm.example.com/cb")),
		refused("backslash", redirect(`https://evil.example.net\@crm.example.com/cb`)),
		refused("white space", redirect("https://crm.example.com/cb\t/x")),

		{name: "unknown user", req: func(_ *env, r *security.TrustRequest) { r.UserID = "mallory" }, wantStatus: 401, wantBody: msgTrustUser},
		{name: "disabled user", req: func(_ *env, r *security.TrustRequest) { r.UserID = "bob" }, wantStatus: 401, wantBody: msgTrustUser},
	}
	return rows
}

// TestTrustGateway runs every gateway row on each backend, then checks the success path end to
// end: redirect shape, headers, exchange once.
func TestTrustGateway(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		t.Parallel()
		e := newEnv(t, append(b.options(t), trustOn(nil))...)
		e.addUser(t, "alice", alicePassword)
		e.addUser(t, "bob", "bob-password-1")
		if err := e.sec.Store().SetDisabled(context.Background(), "bob", true); err != nil {
			t.Fatal(err)
		}
		for _, row := range gatewayRows() {
			t.Run(row.name, func(t *testing.T) {
				r := e.trustReq("crm", "alice", "https://crm.example.com/cb?x=1")
				if row.req != nil {
					row.req(e, &r)
				}
				q := signedQuery(t, r)
				if row.query != nil {
					row.query(q)
				}
				g := gateway(t, e.srv, q, browserUA)
				if g.status != row.wantStatus {
					t.Fatalf("status = %d (%q), want %d", g.status, g.body, row.wantStatus)
				}
				for k, v := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
					if got := g.header.Get(k); got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
				if row.wantStatus != 302 {
					if g.body != row.wantBody || !strings.HasPrefix(g.header.Get("Content-Type"), "text/plain") {
						t.Errorf("body = %q (%s), want plain text %q", g.body, g.header.Get("Content-Type"), row.wantBody)
					}
					return
				}
				if q := g.location.Query(); q.Get("app_id") != "crm" || !opaqueToken.MatchString(q.Get("code")) {
					t.Errorf("Location %s: want app_id=crm and a 43-character code", g.location)
				}
				if row.wantLocation != "" {
					codes := g.location.Query()["code"]
					if len(codes) == 0 {
						t.Fatalf("Location %s: no code", g.location)
					}
					wantLoc := strings.ReplaceAll(row.wantLocation, "{code}", codes[len(codes)-1])
					if got := g.header.Get("Location"); got != wantLoc {
						t.Errorf("Location = %q, want %q", got, wantLoc)
					}
				}
			})
		}
		t.Run("redirect keeps the target and its query; the code works once", func(t *testing.T) {
			g := gateway(t, e.srv, signedQuery(t, e.trustReq("crm", "alice", "https://crm.example.com/cb/land?x=1&y=a%20b")), browserUA)
			code := g.code(t)
			loc := g.location
			if loc.Scheme != "https" || loc.Host != "crm.example.com" || loc.Path != "/cb/land" ||
				loc.Query().Get("x") != "1" || loc.Query().Get("y") != "a b" {
				t.Errorf("Location = %s, want the target with its query kept", loc)
			}
			r := e.exchange(t, "crm", code, browserUA)
			want(t, r, 200, 0)
			var res security.LoginResult
			r.DataAs(t, &res)
			if res.Tokens == nil || res.Tokens.AccessToken == "" {
				t.Fatalf("exchange = %s, want tokens", r.Data)
			}
			want(t, e.call(t, "get_user_info", nil, svctest.WithToken(res.Tokens.AccessToken)), 200, 0)
			want(t, e.exchange(t, "crm", code, browserUA), 401, rpc.CodeTrustCodeInvalid)
		})
		t.Run("replayed nonce", func(t *testing.T) {
			q := signedQuery(t, e.trustReq("crm", "alice", "https://crm.example.com/cb"))
			if g := gateway(t, e.srv, q, browserUA); g.status != 302 {
				t.Fatalf("first use = %d %q, want 302", g.status, g.body)
			}
			if g := gateway(t, e.srv, q, browserUA); g.status != 401 || g.body != msgTrustAuth {
				t.Errorf("replay = %d %q, want 401 %q", g.status, g.body, msgTrustAuth)
			}
			other := e.trustReq("erp", "alice", "https://erp.example.com/")
			other.Nonce = q.Get("nonce") // nonces are per app
			if g := gateway(t, e.srv, signedQuery(t, other), browserUA); g.status != 302 {
				t.Errorf("same nonce, other app = %d %q, want 302", g.status, g.body)
			}
		})
	})
}

// TestTrustCodeExchange: the second leg's refusals (1063) and rules on each backend.
func TestTrustCodeExchange(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		t.Parallel()
		e := newEnv(t, append(b.options(t), trustOn(nil))...)
		e.addUser(t, "alice", alicePassword)
		carol := e.addUser(t, "carol", alicePassword)
		tests := []struct {
			name string
			run  func(t *testing.T)
		}{
			{"code of another app, then burned", func(t *testing.T) {
				code := e.issueCode(t, "alice")
				want(t, e.exchange(t, "erp", code, browserUA), 401, rpc.CodeTrustCodeInvalid)
				want(t, e.exchange(t, "crm", code, browserUA), 401, rpc.CodeTrustCodeInvalid)
			}},
			{"code from another User-Agent", func(t *testing.T) {
				want(t, e.exchange(t, "crm", e.issueCode(t, "alice"), "curl/8.0"), 401, rpc.CodeTrustCodeInvalid)
			}},
			{"code after code_ttl", func(t *testing.T) {
				code := e.issueCode(t, "alice")
				e.clock.Advance(60 * time.Second)
				want(t, e.exchange(t, "crm", code, browserUA), 401, rpc.CodeTrustCodeInvalid)
			}},
			{"code just before code_ttl", func(t *testing.T) {
				code := e.issueCode(t, "alice")
				e.clock.Advance(59 * time.Second)
				want(t, e.exchange(t, "crm", code, browserUA), 200, 0)
			}},
			{"unknown, malformed and non-string codes", func(t *testing.T) {
				fake, _ := security.GenerateOpaqueToken()
				for _, c := range []any{fake, "abc", map[string]any{"code": fake}, 42} {
					want(t, e.exchange(t, "crm", c, browserUA), 401, rpc.CodeTrustCodeInvalid)
				}
			}},
			{"exempt from lockout", func(t *testing.T) {
				fake, _ := security.GenerateOpaqueToken()
				for range 12 {
					want(t, e.exchange(t, "crm", fake, browserUA), 401, rpc.CodeTrustCodeInvalid)
				}
				want(t, e.exchange(t, "crm", e.issueCode(t, "alice"), browserUA), 200, 0)
			}},
			{"challenges still apply", func(t *testing.T) {
				secret := enrollTOTP(t, e, carol.Username)
				r := e.exchange(t, "crm", e.issueCode(t, "carol"), browserUA)
				want(t, r, 200, 0)
				var res security.LoginResult
				r.DataAs(t, &res)
				if res.Tokens != nil || res.Challenge == nil || res.Challenge.Type != security.ChallengeTOTP {
					t.Fatalf("exchange = %s, want the totp challenge", r.Data)
				}
				r = e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": "totp",
					"response": totpCode(t, secret, e.clock.Now())})
				want(t, r, 200, 0)
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, tt.run)
		}
	})
}

// TestTrustCodeBinding: bind_client_ip on and bind_user_agent off.
func TestTrustCodeBinding(t *testing.T) {
	e := newEnv(t, trustOn(func(tl *config.TrustLogin) { tl.BindClientIP, tl.BindUserAgent = true, false }),
		withCfg(func(c *config.Config) { c.App.TrustedProxies = []string{"127.0.0.1", "::1"} }))
	e.addUser(t, "alice", alicePassword)
	issue := func(ip string) string {
		q := signedQuery(t, e.trustReq("crm", "alice", "https://crm.example.com/cb"))
		return gateway(t, e.srv, q, browserUA, "X-Forwarded-For", ip).code(t)
	}
	from := func(ip string) svctest.CallOption { return svctest.WithHeader("X-Forwarded-For", ip) }
	want(t, e.exchange(t, "crm", issue("10.0.0.1"), browserUA, from("10.0.0.2")), 401, rpc.CodeTrustCodeInvalid)
	want(t, e.exchange(t, "crm", issue("10.0.0.1"), "another browser", from("10.0.0.1")), 200, 0)
}

// TestTrustLoginOff: with trust login disabled there is no gateway route and trust_code is
// 400/1001.
func TestTrustLoginOff(t *testing.T) {
	e := newEnv(t)
	e.addUser(t, "alice", alicePassword)
	if g := gateway(t, e.srv, signedQuery(t, e.trustReq("crm", "alice", "https://crm.example.com/cb")), browserUA); g.status != 404 {
		t.Errorf("gateway while off = %d, want 404", g.status)
	}
	fake, _ := security.GenerateOpaqueToken()
	want(t, e.exchange(t, "crm", fake, browserUA), 400, rpc.CodeUnsupportedAuthenticationType)
}
