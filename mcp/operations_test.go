package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/svctest"
)

// cheapHash keeps password hashing fast in tests that log in.
var cheapHash = svctest.WithCheapHashing()

// password is the password of the users created by addUser.
const password = "Correct-Horse-9-Battery"

// addUser creates a user with role querier in srv's user store.
func addUser(t *testing.T, srv *svctest.Server, user string) {
	t.Helper()
	if _, err := srv.Security().Store().Create(context.Background(), user, user, password, []string{"querier"}); err != nil {
		t.Fatalf("create %s: %v", user, err)
	}
}

// login logs user in over /api and returns its access token.
func login(t *testing.T, srv *svctest.Server, user string) string {
	t.Helper()
	return srv.Login(t, user, password)
}

// fastCalls counts the tool calls served by the fast path during fn.
func fastCalls(srv *svctest.Server, fn func()) int64 {
	before := srv.MCP().FastCalls()
	fn()
	return srv.MCP().FastCalls() - before
}

// paths are the two ways a tools/call of an operation tool is answered: the fast path and the
// SDK's handler; every rule must hold on both.
var paths = []struct {
	name  string
	fast  bool
	calls int64 // fast-path calls per tools/call
}{{"fast path", true, 1}, {"SDK", false, 0}}

// TestLogoutTool (issue #31 item 3): security.auth.logout called as a tool revokes exactly the
// token the MCP caller presented, as /api's logout does: that token is then refused on /api and
// /mcp, while another login of the same user keeps working. Before the fix the in-process
// request carried no Authorization header, so logout "succeeded" and revoked nothing.
func TestLogoutTool(t *testing.T) {
	t.Parallel()
	for _, tokenType := range []config.TokenType{config.TokenTypeJWT, config.TokenTypeOpaque} {
		t.Run(string(tokenType), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, config.SQLite, cheapHash,
				svctest.WithConfig(func(c *config.Config) { c.Security.TokenType = tokenType }))
			for _, path := range paths {
				t.Run(path.name, func(t *testing.T) {
					user := "carol_" + strings.ReplaceAll(path.name, " ", "_")
					addUser(t, srv, user)
					token, other := login(t, srv, user), login(t, srv, user)
					cs, err := connect(t, srv.URL, token)
					if err != nil {
						t.Fatalf("connect: %v", err)
					}
					srv.MCP().SetFastPath(path.fast)
					var text string
					var isErr bool
					if n := fastCalls(srv, func() { text, isErr = call(t, cs, "security.auth.logout", nil) }); n != path.calls {
						t.Errorf("fast path served %d calls, want %d", n, path.calls)
					}
					if isErr {
						t.Fatalf("logout tool: %s", text)
					}
					assertRefused(t, srv, token)
					if r := srv.Call(t, svctest.ResourceAuth, "get_user_info", nil, svctest.WithToken(other)); r.Code != 0 {
						t.Errorf("/api with the user's other token: %d %s, want 0 (logout revokes only the presented token)", r.Code, r.Message)
					}
					if status, _, body := post(t, srv.URL+"/mcp", "Bearer "+other); status != http.StatusOK {
						t.Errorf("/mcp with the user's other token: HTTP %d %s, want 200", status, body)
					}
				})
			}
		})
	}
}

// assertRefused checks that a revoked token is refused on /api (401) and /mcp (401).
func assertRefused(t *testing.T, srv *svctest.Server, token string) {
	t.Helper()
	if r := srv.Call(t, svctest.ResourceAuth, "get_user_info", nil, svctest.WithToken(token)); r.Status != http.StatusUnauthorized {
		t.Errorf("/api with the logged-out token: HTTP %d %d %s, want 401", r.Status, r.Code, r.Message)
	}
	if status, _, body := post(t, srv.URL+"/mcp", "Bearer "+token); status != http.StatusUnauthorized {
		t.Errorf("/mcp with the logged-out token: HTTP %d %s, want 401", status, body)
	}
}

// TestHTTPOnlyNotOffered (issue #31 item 3): an operation declared rpc.HTTPOnly (sys/storage
// upload_part, whose file part a tool call cannot carry) is not a tool: absent from tools/list
// and refused by tools/call on both paths, while /api still serves it.
func TestHTTPOnlyNotOffered(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	cs := session(t, srv, svctest.User("ada", "admin"))
	names := toolNames(t, cs)
	if slices.Contains(names, "sys.storage.upload_part") || !slices.Contains(names, "sys.storage.init_upload") {
		t.Errorf("tools/list = %v, want sys.storage.init_upload and not sys.storage.upload_part", names)
	}
	for _, path := range paths {
		srv.MCP().SetFastPath(path.fast)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "sys.storage.upload_part",
			Arguments: map[string]any{"claimId": "c", "partNumber": 1}})
		cancel()
		if err == nil && !res.IsError {
			t.Errorf("%s: tools/call sys.storage.upload_part succeeded, want an unknown tool", path.name)
		}
	}
	r := srv.Call(t, "sys/storage", "upload_part", map[string]any{"claimId": "c", "partNumber": 1}, svctest.As(svctest.User("ada")))
	if r.Code != storage.ErrCodeUploadRequiresMultipart {
		t.Errorf("/api upload_part as JSON = %d %s, want %d (served, asking for multipart)", r.Code, r.Message, storage.ErrCodeUploadRequiresMultipart)
	}
}

// anonymousCases are operations that need a bearer token but no permission, with params, as
// the attack of issue #31 item 4 called them.
var anonymousCases = []struct {
	resource, action string
	params           map[string]any
}{
	{"approval/my", "find_available_flows", map[string]any{}},
	{svctest.ResourceAuth, "get_user_info", map[string]any{}},
	{"sys/storage/file", "resolve", map[string]any{"keys": []string{"x"}}},
	{svctest.ResourceAuth, "logout", map[string]any{}},
}

// TestAnonymousOperationTools (issue #31 item 4): with svc.mcp.require_auth = false an anonymous
// caller's tools/call of an operation that is not public answers the 401/1000 /api answers
// without a credential, as a tool error, on the fast path and the SDK path alike; /api's answers
// are unchanged, and an authenticated caller still runs the operations. Before the fix each
// call ran as the anonymous user.
func TestAnonymousOperationTools(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithConfig(func(c *config.Config) { c.MCP.RequireAuth = new(false) }),
		svctest.WithOptions(svc.WithApproval(approval.Options{})))
	anon, err := connect(t, srv.URL, "")
	if err != nil {
		t.Fatalf("anonymous connect: %v", err)
	}
	ada := session(t, srv, svctest.User("ada", "querier"))
	for _, path := range paths {
		srv.MCP().SetFastPath(path.fast)
		for _, tt := range anonymousCases {
			name := mcp.ToolName(tt.resource, tt.action, "")
			var text string
			var isErr bool
			if n := fastCalls(srv, func() { text, isErr = call(t, anon, name, tt.params) }); n != path.calls {
				t.Errorf("%s %s: fast path served %d calls, want %d", path.name, name, n, path.calls)
			}
			if !isErr || !strings.Contains(text, `"code":1000`) {
				t.Errorf("%s: anonymous %s = %s (error %t), want the 401/1000 envelope", path.name, name, text, isErr)
			}
		}
		if text, isErr := call(t, ada, "approval.my.find_available_flows", map[string]any{}); isErr {
			t.Errorf("%s: authenticated approval.my.find_available_flows = %s, want success", path.name, text)
		}
		if text, _ := call(t, ada, "sys.storage.file.resolve", map[string]any{"keys": []string{"x"}}); strings.Contains(text, `"code":1000`) {
			t.Errorf("%s: authenticated sys.storage.file.resolve = %s, want the operation's own answer", path.name, text)
		}
	}
	for _, tt := range anonymousCases {
		if r := srv.Call(t, tt.resource, tt.action, tt.params); r.Status != http.StatusUnauthorized || r.Code != rpc.CodeUnauthenticated {
			t.Errorf("/api %s %s without a token = HTTP %d %d, want 401/1000", tt.resource, tt.action, r.Status, r.Code)
		}
	}
}
