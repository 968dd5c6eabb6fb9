package mcp_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/svctest"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// post sends a raw initialize to /mcp with the Authorization header auth ("" for none) and
// returns the status, the WWW-Authenticate header and the body.
func post(t *testing.T, url, auth string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
}

// TestAuth: missing, malformed, invalid, expired and revoked tokens, and a token in the query
// string only, answer 401 with "WWW-Authenticate: Bearer"; a valid token initializes.
func TestAuth(t *testing.T) {
	t.Parallel()
	clock := svctest.NewClock(time.Now())
	srv := newServer(t, config.SQLite, svctest.WithClock(clock), cheapHash)
	addUser(t, srv, "carol")
	revoked := login(t, srv, "carol")
	if status, _, body := post(t, srv.URL+"/mcp", "Bearer "+revoked); status != http.StatusOK {
		t.Fatalf("logged-in token before logout: %d %s", status, body)
	}
	srv.Logout(t, revoked)
	expired := srv.Token(t, svctest.User("dave", "querier"))
	clock.Advance(31 * time.Minute) // access tokens live 30 minutes (spec §5.2)

	valid := srv.Token(t, svctest.User("erin", "querier"))
	for _, tt := range []struct{ name, url, auth string }{
		{"missing", "/mcp", ""},
		{"not bearer", "/mcp", "Basic " + valid},
		{"three fields", "/mcp", "Bearer " + valid + " extra"},
		{"garbage", "/mcp", "Bearer not-a-token"},
		{"expired", "/mcp", "Bearer " + expired},
		{"revoked", "/mcp", "Bearer " + revoked},
		{"query parameter only", "/mcp?" + svctest.QueryAccessToken + "=" + valid, ""},
		{"bad header, token in the query", "/mcp?" + svctest.QueryAccessToken + "=" + valid, "Bearer\tnot-a-token"},
	} {
		status, challenge, body := post(t, srv.URL+tt.url, tt.auth)
		if status != http.StatusUnauthorized || challenge != "Bearer" {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q (%s), want 401 with Bearer", tt.name, status, challenge, body)
		}
	}
	if status, _, body := post(t, srv.URL+"/mcp", "bearer "+valid); status != http.StatusOK {
		t.Errorf("valid token (scheme in lower case): HTTP %d %s, want 200", status, body)
	}
	if _, err := connect(t, srv.URL, ""); err == nil {
		t.Error("SDK client without a token connected, want an error")
	}
}

// TestAnonymous: with require_auth = false a client without a token connects as the anonymous
// user (who sees no permissioned or bearer tool); a bad token is still refused.
func TestAnonymous(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithConfig(func(c *config.Config) { c.MCP.RequireAuth = new(false) }))
	cs, err := connect(t, srv.URL, "")
	if err != nil {
		t.Fatalf("anonymous connect: %v", err)
	}
	if names := toolNames(t, cs); slices.Contains(names, mcp.QueryTool) || slices.Contains(names, "sys.schema.list_tables") {
		t.Errorf("anonymous tools/list = %v, want neither database_query nor operations", names)
	}
	if text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": "SELECT 1"}); !isErr || !strings.Contains(text, "1100") {
		t.Errorf("anonymous database_query = %q (error %t), want access denied", text, isErr)
	}
	if status, challenge, _ := post(t, srv.URL+"/mcp", "Bearer not-a-token"); status != http.StatusUnauthorized || challenge != "Bearer" {
		t.Errorf("bad token with require_auth = false: HTTP %d %q, want 401 Bearer", status, challenge)
	}
}

// TestDisabled: without svc.mcp.enabled there is no /mcp route.
func TestDisabled(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithConfig(func(c *config.Config) { c.MCP.Enabled = false }))
	if status, _, _ := post(t, srv.URL+"/mcp", "Bearer "+srv.Token(t, svctest.User("x"))); status != http.StatusNotFound {
		t.Errorf("POST /mcp with mcp disabled: HTTP %d, want 404", status)
	}
}
