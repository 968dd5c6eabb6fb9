package mcp

import (
	"context"
	"encoding/json"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/rpc"
)

// visibility is who sees a built-in tool in tools/list. Host tools have none: everyone who
// reaches the endpoint sees them, and their handlers decide with Principal.
type visibility struct {
	// authenticated hides the tool from the anonymous user.
	authenticated bool
	// permission, when set, hides the tool from callers without the token.
	permission string
}

// show sets the visibility of a tool.
func (s *Service) show(name string, v visibility) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.visible[name] = v
}

// visibleTo reports whether p sees the tool name.
func (s *Service) visibleTo(ctx context.Context, p *rpc.Principal, name string) bool {
	s.mu.RLock()
	v, ok := s.visible[name]
	s.mu.RUnlock()
	switch {
	case !ok:
		return true
	case v.authenticated && p.IsAnonymous():
		return false
	case v.permission != "":
		return s.perms.CheckPermission(ctx, p, v.permission) == nil
	}
	return true
}

// filterTools is the server's receiving middleware: tools/list answers only the tools the caller
// may use (an MCP client of a user without sys.schema.query does not see sys.schema.list_tables,
// one without the query permission does not see database_query).
func (s *Service) filterTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*sdk.ListToolsResult)
		if err != nil || !ok || method != "tools/list" {
			return res, err
		}
		p := Principal(req.GetExtra())
		out := *list
		out.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *sdk.Tool) bool {
			return !s.visibleTo(ctx, p, t.Name)
		})
		return &out, nil
	}
}

// toolError is a tool result that reports a failure to the model (MCP tool errors are results
// with isError set, so the model can read them and correct itself).
func toolError(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// textResult is a successful tool result with one text content.
func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// rpcError renders an *rpc.Error (or any error, as the engine's unknown error) as the envelope
// {code, message, data} an /api client would receive, in the process language.
func (s *Service) rpcError(err error) *sdk.CallToolResult {
	re, ok := rpc.AsError(err)
	if !ok {
		re = rpc.ErrUnknown
	}
	msg := re.Message
	if msg == "" {
		msg = s.msgs.T(re.Key, re.Args)
	}
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}{re.Code, msg, re.Data}) // Data of an *rpc.Error is plain JSON by contract
	return toolError(string(b))
}
