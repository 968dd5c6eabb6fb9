package security_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// Trust-login apps of the tests and their hex secrets.
const (
	crmSecret = "63726d2d7365637265742d666f722d74657374732d6f6e6c792d303132333435"
	erpSecret = "6572702d7365637265742d666f722d74657374732d6f6e6c792d303132333435"
	trustPath = "/sso/trust"
	browserUA = "Mozilla/5.0 (X11; Linux x86_64) svc-test"
)

// trustOn enables trust login with the apps crm (https://crm.example.com/cb and
// http://legacy.example.com:8080/) and erp (https://erp.example.com/); set adjusts the rest.
func trustOn(set func(*config.TrustLogin)) envOption {
	return withCfg(func(c *config.Config) {
		tl := &c.Security.TrustLogin
		tl.Enabled = true
		tl.Apps = map[string]config.TrustLoginApp{
			"crm": {RedirectURLs: []string{"https://crm.example.com/cb", "http://legacy.example.com:8080/"}, Secret: crmSecret},
			"erp": {RedirectURLs: []string{"https://erp.example.com/"}, Secret: erpSecret},
		}
		tl.RateLimit.Max = 10000
		if set != nil {
			set(tl)
		}
	})
}

// nonceSeq makes nonces unique within a test binary.
var nonceSeq atomic.Int64

// trustReq is a gateway request signed now (on e's clock) with a fresh nonce.
func (e *env) trustReq(app, user, redirect string) security.TrustRequest {
	return security.TrustRequest{AppID: app, UserID: user, Redirect: redirect,
		Nonce: "n-" + strconv.FormatInt(nonceSeq.Add(1), 10), Timestamp: e.clock.Now().Unix()}
}

// signedQuery signs r with the app's test secret.
func signedQuery(t *testing.T, r security.TrustRequest) url.Values {
	t.Helper()
	secret := crmSecret
	if r.AppID == "erp" {
		secret = erpSecret
	}
	q, err := r.Query(trustPath, secret)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// gatewayReply is the gateway's answer.
type gatewayReply struct {
	status   int
	body     string
	header   http.Header
	location *url.URL
}

// gateway sends GET <trust path>?q with a User-Agent and extra headers, without following the
// redirect.
func gateway(t *testing.T, srv *svctest.Server, q url.Values, ua string, headers ...string) gatewayReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+trustPath+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := *srv.HTTP.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	g := gatewayReply{status: resp.StatusCode, body: string(body), header: resp.Header}
	if loc := resp.Header.Get("Location"); loc != "" {
		if g.location, err = url.Parse(loc); err != nil {
			t.Fatalf("Location %q: %v", loc, err)
		}
	}
	return g
}

// code returns the one-time code of a successful gateway reply.
func (g gatewayReply) code(t *testing.T) string {
	t.Helper()
	if g.status != http.StatusFound || g.location == nil {
		t.Fatalf("gateway = %d %q, want 302", g.status, g.body)
	}
	return g.location.Query().Get("code")
}

// issueCode runs the gateway for user of app crm and returns the code.
func (e *env) issueCode(t *testing.T, user string) string {
	t.Helper()
	return gateway(t, e.srv, signedQuery(t, e.trustReq("crm", user, "https://crm.example.com/cb")), browserUA).code(t)
}

// exchange logs in with type trust_code from a browser with ua.
func (e *env) exchange(t *testing.T, app string, code any, ua string, opts ...svctest.CallOption) svctest.Response {
	t.Helper()
	opts = append(opts, svctest.WithHeader("User-Agent", ua))
	return e.call(t, "login", map[string]any{"type": security.LoginTypeTrustCode, "principal": app, "credentials": code}, opts...)
}

// mustInt parses a decimal int64 (0 when it is not one).
func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
