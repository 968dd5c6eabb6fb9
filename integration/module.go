package integration

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/rpc"
)

//go:embed migrations
var migrationFiles embed.FS

//go:embed messages
var messageFiles embed.FS

// Migrations returns the module's migrations, creating the six itg_* tables (§3).
func Migrations() *db.Migrations { return db.EmbeddedMigrations("integration", migrationFiles) }

// Messages returns the module's message catalog: messages/<lang>/integration.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// pruneInterval is how often the log pruner runs when svc.integration.log.retention is set.
const pruneInterval = time.Hour

// Options are what host code plugs into the module; every field is optional.
type Options struct {
	// CodeSets is the host's canonical code catalog; nil answers supported:false.
	CodeSets CodeSetCatalog
	// ScriptLimits bound each script run (call depth; the worker's memory limit, concurrency
	// and queue wait, which default to svc.integration.script's keys) and name the worker
	// executable (default: this binary); zero fields take those (see Limits).
	ScriptLimits Limits
	// Routes replaces the default route resolver (itg_route rows).
	Routes RouteResolver
	// OutboundSchemes and InboundSchemes are host-defined authentication schemes; one with a
	// built-in name replaces the built-in.
	OutboundSchemes []OutboundScheme
	InboundSchemes  []InboundScheme
	// InboundHandlers are the host's business handlers of inbound deliveries, one per
	// contract code (NewInboundHandler); blank or duplicate codes fail the build.
	InboundHandlers []InboundHandler
	// WrapTransport, when set, wraps the HTTP transport of every outbound call; the composition
	// root passes the operations module's (ops.Transport: a client span and the W3C traceparent
	// per call when tracing is on).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Service is the integration module: its definition resources, secret codec, invocation log
// recorder and statistics.
type Service struct {
	cfg      config.Integration
	db       *db.DB
	clock    func() time.Time
	log      *slog.Logger
	secrets  *Secrets
	codeSets CodeSetCatalog
	stats    *Stats
	recorder *Recorder
	engine   *Engine
	routes   RouteResolver
	schemas  *schemas
	results  *resultCache
	clients  clientCache
	outAuth  schemeSet
	inAuth   schemeSet
	// httpClient sends every system's calls (timeouts per call through contexts).
	httpClient *http.Client
	handlers   map[string]InboundHandler
	nonces     kv.NonceStore
	limiter    *rpc.RateLimiter
	limit      rpc.Limit
	errors     app.ErrorRenderer
	bodies     app.BodyReader // reads inbound bodies under the shared body memory budget
	msgs       *i18n.Catalog
	sqlDBs     systemDBs
	sqlRowCap  int
}

// New builds the module from svc.integration and the primary database. It does no I/O. A
// malformed secret key or an unknown algorithm fails (spec §7).
func New(deps app.Platform, api app.API, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil || api.Bodies == nil {
		return nil, errors.New("integration: the configuration, the primary database and the body reader are required")
	}
	cfg := deps.Config.Integration
	secrets, err := NewSecrets(cfg.SecretKey, cfg.SecretAlgorithm)
	if err != nil {
		return nil, err
	}
	log := deps.Logger.With(slog.String("module", "integration"))
	s := &Service{cfg: cfg, db: deps.DB, clock: deps.Clock, log: log, secrets: secrets, codeSets: opts.CodeSets, stats: NewStats(deps.Clock)}
	s.recorder = NewRecorder(deps.DB, cfg.Log, deps.Clock, log)
	limits := opts.ScriptLimits
	limits.MemoryLimit = cmp.Or(limits.MemoryLimit, int64(cfg.Script.MemoryLimit))
	limits.Concurrency = cmp.Or(limits.Concurrency, cfg.Script.Concurrency)
	limits.QueueWait = cmp.Or(limits.QueueWait, cfg.Script.QueueWait)
	s.engine = NewEngine(limits, cfg.ScriptCache, log, deps.Clock)
	s.routes = opts.Routes
	if s.routes == nil {
		s.routes = dbRoutes{s}
	}
	s.schemas = newSchemas()
	s.results = &resultCache{clock: deps.Clock, m: map[string]resultEntry{}}
	s.httpClient = newOutboundClient(opts.WrapTransport)
	s.clients.m = map[[32]byte]*systemClient{}
	if s.handlers, err = handlerRegistry(opts.InboundHandlers); err != nil {
		return nil, err
	}
	if s.outAuth, s.inAuth, err = newSchemeSets(opts.OutboundSchemes, opts.InboundSchemes); err != nil {
		return nil, err
	}
	// Signature nonces live where the trust-login gateway keeps its own: Redis when the
	// key-value store is enabled (a replay is refused on every node), else this process.
	s.nonces = kv.NewMemoryNonces()
	if deps.KV != nil {
		s.nonces = kv.NewRedisNonces(deps.KV, "svc:integration:"+deps.Config.App.Name+":nonce:")
	}
	s.limiter = rpc.NewRateLimiter(deps.Clock)
	s.limit = rpc.Limit{Max: cfg.Inbound.RateLimit.Max, Period: cfg.Inbound.RateLimit.Period}
	s.errors = api.Errors
	s.bodies = api.Bodies
	s.msgs = deps.I18n
	s.sqlDBs.dbs = map[string]systemDB{}
	s.sqlRowCap = defaultSQLRowCap
	if err := registerMetrics(deps.Metrics, s.stats); err != nil {
		return nil, fmt.Errorf("integration: metrics: %w", err)
	}
	return s, nil
}

// Module lists what the module adds: the integration/* definition resources, the migrations,
// the hourly log pruner when log.retention is set, and the plaintext warning at start.
func (s *Service) Module() app.Module {
	m := app.Module{
		Name: "integration",
		Resources: []rpc.Resource{s.contractResource(), s.systemResource(), s.adapterResource(), s.routeResource(),
			s.codeMapResource(), s.codeSetResource(), s.logResource(), s.opsResource()},
		Messages:    Messages(),
		Migrations:  Migrations(),
		AutoMigrate: s.cfg.AutoMigrate,
		Start:       s.start,
		Stop:        s.stop,
		Routes:      []app.Route{{Pattern: inboundPattern, Handler: http.HandlerFunc(s.serveInbound)}},
	}
	if s.cfg.Log.Retention > 0 {
		m.Workers = []app.Worker{{Name: "integration-log-prune", Interval: pruneInterval, Run: s.recorder.Prune}}
	}
	return m
}

// stop ends the idle script workers and closes the systems' database handles.
func (s *Service) stop(ctx context.Context) error {
	s.engine.Close()
	return s.closeSystemDBs(ctx)
}

// start warns once when secrets are stored in plaintext (§9). The script workers start with the
// first run, not here: a server that runs no script starts none, and start-up does not wait for
// processes it may never use.
func (s *Service) start(ctx context.Context) error {
	if s.secrets.Plaintext() {
		s.log.WarnContext(ctx, "integration: svc.integration.secret_key is not set; secrets of systems are stored in plaintext")
	}
	return nil
}

// Stats returns the module's invocation statistics (sys/monitor reads them through the
// composition root).
func (s *Service) Stats() *Stats { return s.stats }

// Recorder returns the invocation log recorder.
func (s *Service) Recorder() *Recorder { return s.recorder }

// Secrets returns the secret codec.
func (s *Service) Secrets() *Secrets { return s.secrets }

// required answers 400/1400 "<name> is required" for the first blank of name/value pairs.
func required(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if strings.TrimSpace(kv[i+1]) == "" {
			return rpc.ErrBadRequest.WithMessage(kv[i] + " is required")
		}
	}
	return nil
}

// enabled is isEnabled with its default: absent means enabled.
func enabled(b *bool) bool { return b == nil || *b }
