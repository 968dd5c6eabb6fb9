package mcp

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/rpc"
)

// Host providers (wire-runtime §4, provider registration): tools, resources, resource templates
// and prompts that host code adds through svc.WithMCP. Handlers learn the caller with
// Principal(req.Extra); TypedTool hands it over directly.

// Tool is a host tool, built by NewTool or TypedTool.
type Tool struct {
	name string
	add  func(*sdk.Server)
}

// Resource is a host resource, built by NewResource.
type Resource struct {
	r *sdk.Resource
	h sdk.ResourceHandler
}

// ResourceTemplate is a host resource template, built by NewResourceTemplate.
type ResourceTemplate struct {
	t *sdk.ResourceTemplate
	h sdk.ResourceHandler
}

// Prompt is a host prompt, built by NewPrompt.
type Prompt struct {
	p *sdk.Prompt
	h sdk.PromptHandler
}

// Call is what a typed tool handler knows about its call beyond the arguments.
type Call struct {
	// Principal is the caller (never nil: anonymous when svc.mcp.require_auth = false and no
	// token was sent).
	Principal *rpc.Principal
	// Request is the SDK request (arguments, session, HTTP headers in Extra).
	Request *sdk.CallToolRequest
}

// NewTool is a tool with a raw handler: t must carry its InputSchema (an object schema), and h
// decodes req.Params.Arguments itself.
func NewTool(t *sdk.Tool, h sdk.ToolHandler) Tool {
	return Tool{name: t.Name, add: func(s *sdk.Server) { s.AddTool(t, h) }}
}

// TypedTool is a tool whose arguments decode into In and whose result is Out: the input schema
// (and the output schema, unless Out is any) is derived from the Go types by the SDK, arguments
// are validated against it, and a returned error becomes a tool error result.
func TypedTool[In, Out any](t *sdk.Tool, h func(ctx context.Context, c Call, in In) (Out, error)) Tool {
	return Tool{name: t.Name, add: func(s *sdk.Server) {
		sdk.AddTool(s, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			out, err := h(ctx, Call{Principal: Principal(req.Extra), Request: req}, in)
			return nil, out, err
		})
	}}
}

// NewResource is a resource served by h.
func NewResource(r *sdk.Resource, h sdk.ResourceHandler) Resource { return Resource{r: r, h: h} }

// NewResourceTemplate is a resource template (RFC 6570 URI template) served by h.
func NewResourceTemplate(t *sdk.ResourceTemplate, h sdk.ResourceHandler) ResourceTemplate {
	return ResourceTemplate{t: t, h: h}
}

// NewPrompt is a prompt answered by h.
func NewPrompt(p *sdk.Prompt, h sdk.PromptHandler) Prompt { return Prompt{p: p, h: h} }

// SchemaFor returns the JSON Schema of T as tools use it (derived from exported fields and json
// tags; fields without omitempty are required), for hand-built tools and resources.
func SchemaFor[T any]() (*jsonschema.Schema, error) { return jsonschema.For[T](nil) }

// register adds the host's providers to s. A name used twice, or taken by a built-in, and a
// tool the SDK refuses (a schema that is not an object) are startup errors.
// It records tool names in names.
func (o Options) register(s *sdk.Server, names map[string]bool) (err error) {
	var current string
	defer func() {
		if v := recover(); v != nil { // the SDK panics on invalid tool declarations
			err = fmt.Errorf("mcp: tool %q: %v", current, v)
		}
	}()
	for _, t := range o.Tools {
		current = t.name
		if t.add == nil || names[t.name] {
			return fmt.Errorf("mcp: tool %q is declared twice, taken by a built-in or empty", t.name)
		}
		names[t.name] = true
		t.add(s)
	}
	for _, r := range o.Resources {
		s.AddResource(r.r, r.h)
	}
	for _, t := range o.ResourceTemplates {
		s.AddResourceTemplate(t.t, t.h)
	}
	prompts := map[string]bool{NamingMaster: true}
	for _, p := range o.Prompts {
		if prompts[p.p.Name] {
			return fmt.Errorf("mcp: prompt %q is declared twice or taken by a built-in", p.p.Name)
		}
		prompts[p.p.Name] = true
		s.AddPrompt(p.p, p.h)
	}
	return nil
}
