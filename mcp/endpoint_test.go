package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestEndpoint: the SDK's own client initializes over real HTTP, sees the server identity, the
// built-in tools and prompt, and calls database_query and an /api operation as a tool.
func TestEndpoint(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	cs := session(t, srv, svctest.User("ada", "querier", "schema"))

	if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-test" {
		t.Errorf("server name = %q, want svc.app.name mcp-test", got)
	}
	if v := cs.InitializeResult().ServerInfo.Version; v == "" {
		t.Error("server version is empty")
	}
	names := toolNames(t, cs)
	for _, want := range []string{mcp.QueryTool, "sys.schema.list_tables", "sys.schema.get_table_schema"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list = %v, want %s in it", names, want)
		}
	}
	for _, hidden := range []string{"security.auth.login", "security.auth.refresh", "sys.monitor.get_cpu"} {
		if slices.Contains(names, hidden) {
			t.Errorf("tools/list shows %s (public, or without permission)", hidden)
		}
	}

	rows := query(t, cs, "SELECT 1 AS one, 'x' AS s, ? AS p", 42)
	if len(rows) != 1 || rows[0]["one"] != 1.0 || rows[0]["s"] != "x" || rows[0]["p"] != 42.0 {
		t.Errorf("database_query rows = %v, want [{one:1 s:x p:42}]", rows)
	}

	text, isErr := call(t, cs, "sys.schema.list_tables", map[string]any{})
	var tables []struct{ Name string }
	if isErr || json.Unmarshal([]byte(text), &tables) != nil {
		t.Fatalf("sys.schema.list_tables = %q (error %t), want a JSON array of tables", text, isErr)
	}
	if !slices.ContainsFunc(tables, func(tb struct{ Name string }) bool { return tb.Name == "sys_security_user" }) {
		t.Errorf("sys.schema.list_tables = %s, want sys_security_user among them", text)
	}
	text, isErr = call(t, cs, "sys.schema.get_table_schema", map[string]any{})
	if !isErr || !strings.Contains(text, `"code":1400`) {
		t.Errorf("get_table_schema without name = %q (error %t), want the 400/1400 envelope as a tool error", text, isErr)
	}
}

// TestPrompts: naming-master is listed and answers one user message with the guide.
func TestPrompts(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	cs := session(t, srv, svctest.User("ada"))
	list, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != mcp.NamingMaster || len(list.Prompts[0].Arguments) != 0 {
		t.Fatalf("prompts/list = %+v, want naming-master without arguments", list.Prompts)
	}
	got, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcp.NamingMaster})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Role != "user" {
		t.Fatalf("prompts/get = %+v, want one user message", got.Messages)
	}
	text, ok := got.Messages[0].Content.(*sdk.TextContent)
	if !ok || !strings.Contains(text.Text, "Database objects") || !strings.Contains(text.Text, "Code identifiers") {
		t.Errorf("naming-master text does not cover code identifiers and database objects: %+v", got.Messages[0].Content)
	}
}

// TestPermissions: a caller without the permissions neither sees nor runs database_query and
// the sys/schema operations; the errors are the /api envelopes.
func TestPermissions(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	cs := session(t, srv, svctest.User("bob"))
	names := toolNames(t, cs)
	for _, hidden := range []string{mcp.QueryTool, "sys.schema.list_tables"} {
		if slices.Contains(names, hidden) {
			t.Errorf("tools/list = %v shows %s to a user without its permission", names, hidden)
		}
	}
	if !slices.Contains(names, "security.auth.get_user_info") {
		t.Errorf("tools/list = %v, want security.auth.get_user_info (bearer, no permission)", names)
	}
	for _, tool := range []string{mcp.QueryTool, "sys.schema.list_tables"} {
		text, isErr := call(t, cs, tool, map[string]any{"sql": "SELECT * FROM sys_security_user"})
		if !isErr || !strings.Contains(text, `"code":1100`) {
			t.Errorf("%s without permission = %q (error %t), want the 403/1100 envelope", tool, text, isErr)
		}
	}
}

// TestOperationsOff: without svc.mcp.expose_operations only the built-in tool is listed.
func TestOperationsOff(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithConfig(func(c *config.Config) { c.MCP.ExposeOperations = false }))
	cs := session(t, srv, svctest.User("root", "admin"))
	if got := toolNames(t, cs); !slices.Equal(got, []string{mcp.QueryTool}) {
		t.Errorf("tools/list = %v, want only database_query", got)
	}
}

// TestToolName: resource slashes become dots; versions other than v1 are appended.
func TestToolName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ resource, action, version, want string }{
		{"sys/schema", "list_tables", "v1", "sys.schema.list_tables"},
		{"shop", "create", "", "shop.create"},
		{"sys/cron/schedule", "find_page", "v2", "sys.cron.schedule.find_page.v2"},
	} {
		if got := mcp.ToolName(tt.resource, tt.action, tt.version); got != tt.want {
			t.Errorf("ToolName(%q, %q, %q) = %q, want %q", tt.resource, tt.action, tt.version, got, tt.want)
		}
	}
}

var _ = rpc.DefaultVersion
