package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// Roles of the test servers: querier may run database_query, schema may use sys/schema,
// admin holds every permission.
var testRoles = map[string][]string{
	"querier": {config.DefaultMCPQueryPermission},
	"schema":  {"sys.schema.query"},
	"admin":   {"*"},
}

// enableMCP mounts /mcp with the operation tools and the test roles.
func enableMCP(c *config.Config) {
	c.App.Name = "mcp-test"
	c.MCP.Enabled = true
	c.MCP.ExposeOperations = true
	c.Security.Roles = testRoles
}

// newServer boots a server with /mcp on a database of kind.
func newServer(t testing.TB, kind config.DBKind, opts ...svctest.Option) *svctest.Server {
	t.Helper()
	return svctest.New(t, append([]svctest.Option{svctest.WithDB(kind), svctest.WithConfig(enableMCP)}, opts...)...)
}

// bearer adds an Authorization header to every request of the SDK client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// connect opens an SDK client session to url's /mcp with token ("" sends none).
func connect(t testing.TB, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "svc-test-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

// session connects as principal p (minted token), failing the test on error.
func session(t testing.TB, srv *svctest.Server, p *rpc.Principal) *sdk.ClientSession {
	t.Helper()
	cs, err := connect(t, srv.URL, srv.Token(t, p))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// toolNames lists the tools the session sees.
func toolNames(t testing.TB, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call runs a tool and returns its text contents joined by newlines and whether it is an error.
func call(t testing.TB, cs *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// query runs database_query and decodes its rows, failing the test on a tool error.
func query(t testing.TB, cs *sdk.ClientSession, sql string, params ...any) []map[string]any {
	t.Helper()
	args := map[string]any{"sql": sql}
	if params != nil {
		args["params"] = params
	}
	text, isErr := call(t, cs, "database_query", args)
	if isErr {
		t.Fatalf("database_query %q: tool error %s", sql, text)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(text, "\n", 2)[0]), &rows); err != nil {
		t.Fatalf("database_query %q: result %q is not a JSON array of objects: %v", sql, text, err)
	}
	return rows
}
