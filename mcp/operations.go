package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/rpc"
)

// /api operations as tools (issue #18, ours; svc.mcp.expose_operations). Every operation that
// authenticates with the engine's default strategy (bearer) becomes a tool named
// <resource>.<action> with the resource's "/" written "." (MCP tool names allow letters,
// digits, "_", "-" and "."), plus ".<version>" for versions other than v1: sys/schema
// list_tables is sys.schema.list_tables. Public operations (login, refresh, challenges) and
// operations of other strategies (api_key, http_basic, ip) are not tools: an MCP caller is
// already authenticated by its bearer token, and those operations are meant for other callers.
// Operations declared rpc.HTTPOnly are not tools either: they need the HTTP request itself
// (sys/storage upload_part reads a multipart file part, which a tool call cannot carry).
//
// A tool is listed to a caller who holds its permission, and calling it runs
// rpc.Engine.CallAs as the caller (issue #31): its principal and the bearer token it was
// verified from, which the in-process request carries as its Authorization header, so an
// operation reading the request's credential sees the caller's (security.auth.logout revokes
// exactly the token the MCP caller presented). The operation's own access rule, the permission
// check, the rate limit (keyed by the caller's IP and id as on /api), params decoding and
// validation, the handler's timeout and the audit record are the /api path's. The anonymous
// user of svc.mcp.require_auth = false has no credential: the engine answers every operation
// that is not public 401/1000, as /api does, whatever tools/list shows, and the fast path
// (fastcall.go) runs the same handler, so it cannot skip the rule.

// addOperationTools adds the operation tools, once (Start).
func (s *Service) addOperationTools() {
	if !s.cfg.ExposeOperations || s.ops == nil {
		return
	}
	s.opsOnce.Do(func() {
		schemas := map[reflect.Type]*jsonschema.Schema{}
		for _, op := range s.ops.Operations() {
			name := ToolName(op.Resource, op.Action, op.Version)
			if !offered(op, s.ops.DefaultStrategy()) || s.names[name] {
				continue
			}
			s.names[name] = true
			handler := s.operationHandler(op)
			s.server.AddTool(&sdk.Tool{
				Name:        name,
				Description: operationDescription(op),
				InputSchema: paramsSchema(op.Params, schemas),
			}, handler)
			s.show(name, visibility{authenticated: true, permission: op.Permission})
			s.mu.Lock()
			s.fast[name] = handler
			s.mu.Unlock()
		}
	})
}

// offered reports whether op is a tool: an operation of the default strategy (bearer), neither
// public nor declared rpc.HTTPOnly (it needs the HTTP request itself, such as the file part of
// sys/storage upload_part, which a tool call cannot send).
func offered(op rpc.OperationInfo, strategy string) bool {
	return !op.Public && !op.HTTPOnly && op.Strategy == strategy
}

// ToolName is the tool name of an /api operation: sys/schema list_tables v1 →
// "sys.schema.list_tables"; other versions append ".<version>".
func ToolName(resource, action, version string) string {
	name := strings.ReplaceAll(resource, "/", ".") + "." + action
	if version != "" && version != rpc.DefaultVersion {
		name += "." + version
	}
	return name
}

// operationDescription tells the model what the tool is and what it needs.
func operationDescription(op rpc.OperationInfo) string {
	d := "Runs the /api operation " + op.Resource + " " + op.Action + " (" + op.Version +
		") as the caller; the arguments are the operation's params and the result is its data as JSON."
	if op.Permission != "" {
		d += " Requires permission " + op.Permission + "."
	}
	return d
}

// operationHandler runs op through the engine as the caller (its principal and credential).
// The result is the operation's data as JSON text; a failure is a tool error holding the
// {code, message, data} envelope an /api client would receive.
func (s *Service) operationHandler(op rpc.OperationInfo) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ctx = rpc.WithRequestInfo(ctx, requestInfo(req.Extra))
		var params json.RawMessage
		if req.Params != nil {
			params = req.Params.Arguments
		}
		data, err := s.ops.CallAs(ctx, caller(req.Extra), op.Resource, op.Action, op.Version, params)
		if err != nil {
			return s.rpcError(err), nil
		}
		b, err := json.Marshal(data)
		if err != nil {
			return s.rpcError(rpc.ErrUnknown.Wrap(err)), nil
		}
		return textResult(string(b)), nil
	}
}

// paramsSchema derives a tool's input schema from an operation's params type. The schema
// describes shapes and types only: the engine ignores unknown keys and validates params itself,
// so nothing is marked required and extra properties are allowed. Types without a JSON Schema
// (and operations without params) get an open object schema. Schemas are cached per type.
func paramsSchema(t reflect.Type, cache map[reflect.Type]*jsonschema.Schema) *jsonschema.Schema {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == reflect.TypeFor[rpc.NoParams]() || t.Kind() != reflect.Struct {
		return &jsonschema.Schema{Type: "object"}
	}
	if sc, ok := cache[t]; ok {
		return sc
	}
	sc, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil || sc.Type != "object" {
		sc = &jsonschema.Schema{Type: "object"}
	}
	loosen(sc)
	cache[t] = sc
	return sc
}

// loosen drops required lists and closed objects from a derived schema, recursively.
func loosen(sc *jsonschema.Schema) {
	if sc == nil {
		return
	}
	sc.Required = nil
	if sc.AdditionalProperties != nil && sc.AdditionalProperties.Not != nil {
		sc.AdditionalProperties = nil
	}
	for _, p := range sc.Properties {
		loosen(p)
	}
	loosen(sc.Items)
	for _, d := range sc.Defs {
		loosen(d)
	}
}
