// Package app is the module contract of svc and the machinery that runs modules: HTTP server
// assembly with the outer middlewares, the lifecycle (start in order, roll back on failure, stop
// in reverse) and the worker runner.
package app

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// Module is everything one feature module adds to the server. A module's module.go returns one
// Module value; the composition root (package svc) lists modules in boot order.
//
// Building a Module must not do I/O: databases are migrated after all modules are built and
// before Start runs.
type Module struct {
	// Name identifies the module in logs and errors ("security", "storage", ...).
	Name string
	// Resources are mounted on /api.
	Resources []rpc.Resource
	// Routes are plain HTTP routes (download proxy, /ws, /mcp, /sso/trust, inbound gateway).
	Routes []Route
	// Migrations are the module's embedded migrations, or nil.
	Migrations *db.Migrations
	// AutoMigrate runs Migrations at startup (the module's auto_migrate key); `svc migrate`
	// always runs them.
	AutoMigrate bool
	// Strategies are authentication strategies the module adds to the shared registry.
	Strategies []rpc.Strategy
	// Messages is the module's message catalog: <lang>/*.json files (one per language of
	// i18n, en and zh-CN) mapping message keys to text. The composition root merges it into
	// the process catalog when the module is built; a key another module already defined is a
	// startup error. Nil means the module adds no messages.
	Messages fs.FS
	// Workers run in the background from Start until shutdown.
	Workers []Worker
	// Start runs after migrations, in boot order; nil means nothing to start.
	Start func(ctx context.Context) error
	// Stop runs at shutdown in reverse boot order, and to roll back a failed start.
	Stop func(ctx context.Context) error
	// Ready reports whether the module can serve (used by GET /readyz); nil means always ready.
	Ready func(ctx context.Context) error
}

// Route is one plain HTTP route. Pattern is a net/http ServeMux pattern such as
// "GET /storage/files/{key...}".
type Route struct {
	Pattern string
	Handler http.Handler
}

// Worker is a background job of a module. With Interval > 0 Run is called every Interval (the
// first call after one Interval); with Interval == 0 Run is called again as soon as it returns
// (a loop worker that blocks on its own source), after a short back-off when it returned an
// error. Panics are recovered and logged; ctx is cancelled at shutdown.
type Worker struct {
	Name     string
	Interval time.Duration
	Run      func(ctx context.Context) error
}

// Platform is the part of a module's dependencies that exists before any module is built:
// configuration, logging, the clock, the message catalog, the data sources, the kv store, the
// event bus and the metrics registry. Every module's constructor takes it. The composition root
// fills every field but KV (nil when the kv store is disabled) and Metrics (nil when metrics are
// off); Logger and Clock are never nil.
type Platform struct {
	Config      *config.Config
	Logger      *slog.Logger
	Clock       func() time.Time
	I18n        *i18n.Catalog     // the process catalog; modules' Messages are merged into it
	DB          *db.DB            // the primary data source
	DataSources map[string]*db.DB // every data source by name, primary included
	KV          *redis.Client     // nil when svc.kvstore.enabled is false
	// Events is the event bus of svc.event. Subscribe while building the module (the bus starts
	// before the modules start and keeps those subscriptions); publish only once started, from
	// requests, workers or Start: a publish before the bus started fails with
	// event.ErrBusNotStarted.
	Events EventBus
	// Metrics is where a module registers its own Prometheus collectors, in its metrics.go
	// (issue #19; names start with svc_<module>_, labels bounded: no ids, no user names; values
	// the module already keeps are read at scrape time with NewCollector). The composition root
	// sets the registry served on svc.metrics.path; nil (metrics off, or a Platform built by hand
	// in tests) means the module registers nothing and does no metrics work.
	Metrics prometheus.Registerer
}

// API is the part of a module's dependencies that the /api engine lends to routes outside /api
// (download proxy, /ws, /mcp, the integration gateway, backup downloads). It exists only once the
// engine is built, which is after audit and security (the engine takes security's permission
// checker), so those two modules' constructors do not take it; a module whose constructor takes
// an API gets all four fields set (*rpc.Engine implements every one).
type API struct {
	// Auth runs a strategy of the shared registry for a route outside /api.
	Auth Authenticator
	// Permissions checks a permission token with the checker installed in the engine.
	Permissions PermissionChecker
	// Errors renders any error as the {code, message, data} envelope (the engine's renderer).
	Errors ErrorRenderer
	// Bodies reads a request body into memory under the body memory budget
	// (svc.app.body_memory_budget) that /api's bodies share: the engine owns the one budget of
	// the process, and a route outside /api that holds its body in memory (the integration
	// gateway) reads it here rather than with io.ReadAll.
	Bodies BodyReader
}

// EngineAPI returns the API part served by engine: it is every one of the four.
func EngineAPI(engine *rpc.Engine) API {
	return API{Auth: engine, Permissions: engine, Errors: engine, Bodies: engine}
}

// Deps are what a host module (svc.WithModule) gets: both parts, since host modules are built
// after every built-in module, when the engine exists. Built-in modules take only the parts
// their constructor names.
type Deps struct {
	Platform
	API
}

// EventBus is the event bus as modules see it: publish and subscribe, and RequireTransactional
// for a module whose events must commit with its data (storage). *event.Bus implements it.
type EventBus interface {
	event.PubSub
	// RequireTransactional fails unless events of pattern are routed to a transactional
	// transport, naming the rule that decided.
	RequireTransactional(pattern string) error
}

var _ EventBus = (*event.Bus)(nil)

// Authenticator authenticates a request with a registered strategy; an empty strategy means
// the engine's default. *rpc.Engine implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request, strategy string, args ...string) (*rpc.Principal, error)
}

// PermissionChecker checks a permission token: nil when p holds it, rpc.ErrAccessDenied (maybe
// wrapping a checker failure) when not. *rpc.Engine implements it.
type PermissionChecker interface {
	CheckPermission(ctx context.Context, p *rpc.Principal, token string) error
}

// ErrorRenderer writes err as the {code, message, data} envelope with its HTTP status; internal
// causes are logged, never sent. *rpc.Engine implements it.
type ErrorRenderer interface {
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// BodyReader reads a request's body whole, at most limit bytes, into memory paid from the
// process's body memory budget, with copies more times its size reserved for other forms of it
// the caller will hold; release returns it all once they are no longer referenced. Refusals
// are rpc errors ready to render (413 over the limit, 503 when the budget has no room in time,
// 400 for a failed read), with their headers already set on w. *rpc.Engine implements it
// (rpc.Engine.ReadBody).
type BodyReader interface {
	ReadBody(w http.ResponseWriter, r *http.Request, limit int64, copies int) (body []byte, release func(), err error)
}

var (
	_ BodyReader        = (*rpc.Engine)(nil)
	_ Authenticator     = (*rpc.Engine)(nil)
	_ PermissionChecker = (*rpc.Engine)(nil)
	_ ErrorRenderer     = (*rpc.Engine)(nil)
)
