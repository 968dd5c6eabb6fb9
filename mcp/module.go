package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/internal/bypass"
	"github.com/svc-framework/svc/rpc"
)

// Path is the route of the endpoint (spec §4.2).
const Path = "/mcp"

// DefaultName is the server name when svc.app.name is empty (wire-runtime §4).
const DefaultName = "svc-mcp-server"

// pageSize is the page size of the list methods: large enough that a client gets every tool it
// may see in one page, since tools/list is filtered per caller after paging.
const pageSize = 10000

// Operations is the /api engine as the endpoint uses it: the list of registered operations and
// the in-process call that runs one as the caller (its principal and the credential it was
// verified from). *rpc.Engine implements it.
type Operations interface {
	Operations() []rpc.OperationInfo
	CallAs(ctx context.Context, c rpc.Caller, resource, action, version string, params json.RawMessage) (any, error)
	DefaultStrategy() string
}

// Options are what host code adds to the endpoint (wire-runtime §4, provider registration).
// Every field is optional.
type Options struct {
	// Name and Version override the server identity (default svc.app.name, else DefaultName,
	// and the application's build version).
	Name, Version string
	// Instructions are sent to clients at initialization (default none).
	Instructions string
	// Tools, Resources, ResourceTemplates and Prompts are the host's providers, built with
	// NewTool, TypedTool, NewResource, NewResourceTemplate and NewPrompt.
	Tools             []Tool
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	Prompts           []Prompt
	// SDKOnly sends every request through the SDK's handler, also tools/call of operation
	// tools, which the endpoint otherwise answers itself (fastcall.go). Set it when the host
	// adds receiving middleware through Server() that must see those calls; it costs about 20×
	// the CPU per call. SVC_BYPASS_OFF=mcp.fastcall (package internal/bypass) does the same for
	// every server of the process.
	SDKOnly bool
}

// Service is the MCP endpoint: one SDK server shared by every request, served statelessly.
type Service struct {
	cfg      config.MCP
	log      *slog.Logger
	msgs     *i18n.Catalog
	auth     app.Authenticator
	perms    app.PermissionChecker
	db       *db.DB
	source   config.DataSource // the settings of svc.mcp.query.data_source
	ro       *db.ReadOnly      // database_query's runner on source, from Start
	ops      Operations
	server   *sdk.Server
	impl     *sdk.Implementation // the server identity
	implJSON []byte              // impl as the SDK encodes it
	handler  http.Handler

	mu      sync.RWMutex
	visible map[string]visibility // by tool name; absent: every caller sees the tool
	names   map[string]bool       // tool names taken by the built-in and host tools
	opsOnce sync.Once

	fast       map[string]sdk.ToolHandler // operation tools by name, for serveFast (under mu)
	versions   []string                   // protocol versions serveFast answers (fastVersions)
	noFastPath atomic.Bool                // every request through the SDK (SDKOnly, the bypass switch, tests)
	fastCalls  atomic.Int64               // requests answered by fastCall
	metaSeen   metaSeen                   // the _meta objects serveFast found to decode
}

var _ Operations = (*rpc.Engine)(nil)

// New builds the endpoint from the server's dependencies (svc.mcp, the primary database, the
// authenticator and permission checker), the /api engine ops (nil: no operation tools) and the
// host's providers. It does no I/O; the operation tools are added by Start, once every module
// has registered its resources.
func New(deps app.Platform, api app.API, ops Operations, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil || api.Auth == nil || api.Permissions == nil {
		return nil, errors.New("mcp: the configuration, the primary database, the authenticator and the permission checker are required")
	}
	s := &Service{
		cfg: deps.Config.MCP, log: deps.Logger.With(slog.String("module", "mcp")), msgs: deps.I18n,
		auth: api.Auth, perms: api.Permissions, db: deps.DB, ops: ops, source: deps.Config.DataSources[deps.Config.MCP.Query.DataSource], visible: map[string]visibility{}, names: map[string]bool{}, fast: map[string]sdk.ToolHandler{}, versions: fastVersions(),
	}
	if s.msgs == nil {
		s.msgs = i18n.MustNew(i18n.Default, Messages())
	}
	s.noFastPath.Store(opts.SDKOnly || !bypass.On(bypass.MCPFastCall))
	s.impl = identity(deps.Config.App.Name, opts)
	s.implJSON, _ = json.Marshal(s.impl) // strings only: cannot fail
	s.server = sdk.NewServer(s.impl, &sdk.ServerOptions{
		Instructions: opts.Instructions,
		PageSize:     pageSize,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	s.server.AddReceivingMiddleware(s.filterTools)
	s.addQueryTool()
	s.server.AddPrompt(namingMasterPrompt(), namingMaster)
	s.names[QueryTool] = true
	if err := opts.register(s.server, s.names); err != nil {
		return nil, err
	}
	s.handler = s.authenticate(sdk.NewStreamableHTTPHandler(
		func(*http.Request) *sdk.Server { return s.server },
		&sdk.StreamableHTTPOptions{Stateless: true, Logger: s.log},
	))
	return s, nil
}

// Module lists what the module adds to the server: the /mcp route (all methods) when
// svc.mcp.enabled, its messages, a Start that adds the operation tools when
// svc.mcp.expose_operations and opens database_query's read-only runner, and a Stop that closes
// it.
func (s *Service) Module() app.Module {
	m := app.Module{Name: "mcp", Messages: Messages()}
	if !s.cfg.Enabled {
		return m
	}
	m.Routes = []app.Route{{Pattern: Path, Handler: s.handler}}
	m.Start = func(ctx context.Context) error {
		s.addOperationTools()
		return s.openReadOnly(ctx)
	}
	m.Stop = s.closeReadOnly
	return m
}

// Handler is the /mcp handler: bearer authentication in front of the SDK's Streamable HTTP
// handler, the tools/call fast path of operation tools (fastcall.go) between them.
func (s *Service) Handler() http.Handler { return s.handler }

// Server is the SDK server behind the endpoint, for hosts that add features at run time. Calls
// of the operation tools are answered by the endpoint's fast path (fastcall.go), which neither
// runs receiving middleware added here nor sees an operation tool removed or replaced here: set
// Options.SDKOnly for such a host.
func (s *Service) Server() *sdk.Server { return s.server }

// identity is the server's implementation info (wire-runtime §4): the host's name and version
// first, then svc.app.name (else DefaultName) and the application's build version (else the
// framework's).
func identity(appName string, opts Options) *sdk.Implementation {
	name := opts.Name
	if name == "" {
		name = appName
	}
	if name == "" {
		name = DefaultName
	}
	version := opts.Version
	if version == "" {
		b := app.BuildInfo()
		version = b.AppVersion
		if version == "" || version == app.Unknown {
			version = b.FrameworkVersion
		}
	}
	return &sdk.Implementation{Name: name, Version: version}
}
