package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/svctest"
)

type whoamiArgs struct {
	Greeting string `json:"greeting" jsonschema:"how to greet"`
}

type whoamiResult struct {
	Text string `json:"text"`
}

// hostOptions are a typed tool that answers with the caller's id, a resource and a prompt.
func hostOptions() mcp.Options {
	return mcp.Options{
		Instructions: "test instructions",
		Tools: []mcp.Tool{mcp.TypedTool(&sdk.Tool{Name: "whoami", Description: "Greets the caller"},
			func(_ context.Context, c mcp.Call, in whoamiArgs) (whoamiResult, error) {
				return whoamiResult{Text: in.Greeting + " " + c.Principal.ID}, nil
			})},
		Resources: []mcp.Resource{mcp.NewResource(&sdk.Resource{URI: "svc://motd", Name: "motd", MIMEType: "text/plain"},
			func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "hello " + mcp.Principal(req.Extra).ID}}}, nil
			})},
		Prompts: []mcp.Prompt{mcp.NewPrompt(&sdk.Prompt{Name: "triage"},
			func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "triage"}}}}, nil
			})},
	}
}

// TestHostProviders: host tools (with a schema derived from Go types), resources and prompts
// added through svc.WithMCP are served and see the authenticated principal.
func TestHostProviders(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithOptions(svc.WithMCP(hostOptions())))
	cs := session(t, srv, svctest.User("ada"))
	if got := cs.InitializeResult().Instructions; got != "test instructions" {
		t.Errorf("instructions = %q", got)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema string
	for _, tool := range tools.Tools {
		if tool.Name == "whoami" {
			b, _ := json.Marshal(tool.InputSchema)
			schema = string(b)
		}
	}
	if !strings.Contains(schema, `"greeting"`) || !strings.Contains(schema, "how to greet") {
		t.Errorf("whoami input schema = %s, want the greeting property derived from the Go type", schema)
	}
	if text, isErr := call(t, cs, "whoami", map[string]any{"greeting": "hi"}); isErr || !strings.Contains(text, `hi ada`) {
		t.Errorf("whoami = %q (error %t), want the caller's id", text, isErr)
	}
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "svc://motd"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "hello ada" {
		t.Errorf("resources/read = %+v, %v; want hello ada", res, err)
	}
	prompts, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Errorf("prompts/list = %+v, %v; want naming-master and triage", prompts, err)
	}
}

// TestHostProviderNameTaken: a host tool named like a built-in fails startup.
func TestHostProviderNameTaken(t *testing.T) {
	t.Parallel()
	opts := mcp.Options{Tools: []mcp.Tool{mcp.NewTool(&sdk.Tool{Name: mcp.QueryTool, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })}}
	cfg := svctest.Config(t, config.SQLite)
	enableMCP(cfg)
	srv, err := svc.New(cfg, svc.WithMCP(opts), svc.WithLogger(svctest.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Start(context.Background()); err == nil || !strings.Contains(err.Error(), mcp.QueryTool) {
		_ = srv.Stop(context.Background())
		t.Errorf("Start with a host tool named database_query: %v, want a startup error naming it", err)
	}
}
