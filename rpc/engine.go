package rpc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/i18n"
)

// Defaults of EngineConfig (spec §8.1 and §8.3; wire-core §4).
const (
	// DefaultBodyLimit is svc.app.body_limit's default: 32 MiB.
	DefaultBodyLimit = 32 << 20
	// MinBodyMemoryBudget is the floor of BodyMemoryBudget's default (twice BodyLimit).
	MinBodyMemoryBudget = 64 << 20
	// DefaultBodyMemoryWait is BodyMemoryWait's default, svc.app.body_read_idle_timeout's.
	DefaultBodyMemoryWait = 30 * time.Second
	// DefaultRateLimitMax is svc.api.rate_limit.max's default.
	DefaultRateLimitMax = 100
	// DefaultRateLimitPeriod is svc.api.rate_limit.period's default.
	DefaultRateLimitPeriod = 5 * time.Minute
)

// Startup errors of the engine. Each is returned wrapped with the offending name, so the app can
// report exactly what is wrong and still match the kind with errors.Is.
var (
	// ErrInvalidBodyEncoding: BodyEncoding.Encoding is neither aes-gcm+base64 nor sm4-gcm+base64.
	ErrInvalidBodyEncoding = errors.New("rpc: invalid body encoding")
	// ErrMissingBodyEncodingKey: protected transport is enabled without a key.
	ErrMissingBodyEncodingKey = errors.New("rpc: missing body encoding key")
	// ErrInvalidBodyEncodingKey: the key has the wrong size for the cipher (AES 16/24/32, SM4 16).
	ErrInvalidBodyEncodingKey = errors.New("rpc: invalid body encoding key")
	// ErrInvalidRegistration: a resource, operation or strategy failed the startup checks.
	ErrInvalidRegistration = errors.New("rpc: invalid registration")
	// ErrUnknownStrategy: an operation names a strategy that was never registered.
	ErrUnknownStrategy = errors.New("rpc: unknown authentication strategy")
	// ErrEngineFrozen: Register or RegisterStrategy was called after Validate or the first request.
	ErrEngineFrozen = errors.New("rpc: engine is frozen")
)

// BodyEncoding configures the protected body transport of wire-core §6.2
// (svc.api.body_encoding). When Enabled, every non-empty JSON request must be encrypted with the
// configured cipher and every JSON response is encrypted the same way.
type BodyEncoding struct {
	// Enabled switches the protected transport on (default false).
	Enabled bool
	// Encoding is EncodingAESGCM (the default when empty) or EncodingSM4GCM.
	Encoding string
	// Key is the raw cipher key: 16, 24 or 32 bytes for AES, 16 bytes for SM4.
	Key []byte
}

// EngineConfig configures an Engine. Zero fields take the documented defaults.
type EngineConfig struct {
	// BodyLimit is the largest request body accepted, in bytes, for JSON and multipart alike
	// (svc.app.body_limit, default DefaultBodyLimit). Decoded bodies obey it too.
	BodyLimit int64
	// BodyMemoryBudget bounds the request-body bytes all requests together hold in memory
	// (svc.app.body_memory_budget, default twice BodyLimit, at least MinBodyMemoryBudget); a
	// value below BodyLimit is raised to it. See the package documentation, "Body memory".
	BodyMemoryBudget int64
	// BodyMemoryPerClient is the most one client address holds of the budget at once
	// (svc.app.body_memory_per_client, default BodyLimit; at most BodyMemoryBudget). See the
	// package documentation, "Body memory".
	BodyMemoryPerClient int64
	// BodyMemoryWait is how long a request waits for room in the budget before answering 503
	// (default DefaultBodyMemoryWait; the app passes svc.app.body_read_idle_timeout).
	BodyMemoryWait time.Duration
	// DefaultLimit is the rate limit of operations without their own (svc.api.rate_limit, default
	// 100 per 5m). A non-positive Max or Period takes the default of that field.
	DefaultLimit Limit
	// BodyEncoding configures the protected body transport (wire-core §6.2).
	BodyEncoding BodyEncoding
	// Logger receives internal errors and panics with the request id; nil discards.
	Logger *slog.Logger
	// Clock drives rate-limit windows and audit times; nil means time.Now.
	Clock func() time.Time
	// Messages renders message keys in the process-wide language; nil means English.
	Messages *i18n.Catalog
	// Permissions decides RequiredPermission for the engine's whole life (the composition root
	// builds the security module first to have it); nil denies every permissioned operation
	// (403/1100).
	Permissions PermissionChecker
	// Audit receives the records of operations declared with Audit(); nil drops them.
	Audit AuditSink
	// DefaultStrategy authenticates operations that name none (default StrategyBearer).
	DefaultStrategy string
	// Observer watches the calls served over HTTP (metrics, traces); nil observes nothing.
	Observer Observer
	// SpoolDir holds temporary files of multipart file parts that arrive before the envelope
	// fields (default os.TempDir()).
	SpoolDir string
}

// Engine serves POST /api: it owns the operation table, the strategy registry, the rate limiter
// and the one renderer of the {code, message, data} envelope. Build it with NewEngine, fill it
// with Register and RegisterStrategy, call Validate at startup, then serve it on "/api".
type Engine struct {
	cfg      EngineConfig
	log      *slog.Logger
	clock    func() time.Time
	msgs     *i18n.Catalog
	protect  *BodyCodec // nil unless the protected transport is enabled
	budget   *bodyBudget
	limiter  *RateLimiter
	okPrefix []byte // `{"code":0,"message":"<ok>","data":`

	obs        Observer          // cfg.Observer
	unresolved OperationObserver // the Observer's value for calls without an operation

	checker PermissionChecker // cfg.Permissions, fixed for the engine's life

	mu         sync.Mutex
	frozen     atomic.Bool
	routes     map[string]*route // key: routeKey(resource, action, version)
	strategies map[string]Strategy
}

// NewEngine validates cfg, applies its defaults and returns an empty engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.BodyMemoryBudget <= 0 {
		cfg.BodyMemoryBudget = max(2*cfg.BodyLimit, MinBodyMemoryBudget)
	}
	cfg.BodyMemoryBudget = max(cfg.BodyMemoryBudget, cfg.BodyLimit)
	if cfg.BodyMemoryPerClient <= 0 {
		cfg.BodyMemoryPerClient = cfg.BodyLimit
	}
	cfg.BodyMemoryPerClient = min(cfg.BodyMemoryPerClient, cfg.BodyMemoryBudget)
	if cfg.BodyMemoryWait <= 0 {
		cfg.BodyMemoryWait = DefaultBodyMemoryWait
	}
	if cfg.DefaultLimit.Max <= 0 {
		cfg.DefaultLimit.Max = DefaultRateLimitMax
	}
	if cfg.DefaultLimit.Period <= 0 {
		cfg.DefaultLimit.Period = DefaultRateLimitPeriod
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Messages == nil {
		cfg.Messages = i18n.MustNew(i18n.Default)
	}
	if cfg.DefaultStrategy == "" {
		cfg.DefaultStrategy = StrategyBearer
	}
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = os.TempDir()
	}
	e := &Engine{
		cfg:        cfg,
		log:        cfg.Logger,
		clock:      cfg.Clock,
		msgs:       cfg.Messages,
		limiter:    NewRateLimiter(cfg.Clock),
		budget:     newBodyBudget(cfg.BodyMemoryBudget, cfg.BodyMemoryPerClient),
		routes:     make(map[string]*route),
		strategies: map[string]Strategy{StrategyNone: noneStrategy{}},
		obs:        cfg.Observer,
		checker:    cfg.Permissions,
	}
	if cfg.BodyEncoding.Enabled {
		enc := cfg.BodyEncoding.Encoding
		if enc == "" {
			enc = EncodingAESGCM
		}
		codec, err := NewBodyCodec(enc, cfg.BodyEncoding.Key)
		if err != nil {
			return nil, err
		}
		e.protect = codec
		e.cfg.BodyEncoding.Encoding = enc
	}
	e.okPrefix = appendEnvelopeHead(nil, CodeOK, e.msgs.T("ok", nil))
	return e, nil
}

// RegisterStrategy adds an authentication strategy to the shared registry used by /api, the
// download proxy, /ws and /mcp. Names are snake_case and unique; "none" is built in.
func (e *Engine) RegisterStrategy(s Strategy) error {
	if s == nil {
		return fmt.Errorf("%w: nil strategy", ErrInvalidRegistration)
	}
	name := s.Name()
	if !snakeRe.MatchString(name) {
		return fmt.Errorf("%w: strategy name %q is not snake_case", ErrInvalidRegistration, name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.frozen.Load() {
		return fmt.Errorf("%w: strategy %q registered too late", ErrEngineFrozen, name)
	}
	if _, dup := e.strategies[name]; dup {
		return fmt.Errorf("%w: strategy %q registered twice", ErrInvalidRegistration, name)
	}
	e.strategies[name] = s
	return nil
}

// Validate runs the startup checks that need the whole registry (every strategy an operation
// names is registered) and freezes the engine: later Register and RegisterStrategy calls fail.
// The app calls it once after all modules are registered and before listening. On failure the
// engine stays open so the caller may fix the registry and call Validate again.
func (e *Engine) Validate() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkStrategiesLocked(); err != nil {
		return err
	}
	if !e.frozen.Load() {
		e.attachObservers()
	}
	e.frozen.Store(true)
	return nil
}

func (e *Engine) checkStrategiesLocked() error {
	var errs []error
	for _, rt := range e.routes {
		if _, ok := e.strategies[rt.strategy]; !ok {
			errs = append(errs, fmt.Errorf("%w: %q used by %s %s %s",
				ErrUnknownStrategy, rt.strategy, rt.resource, rt.action, rt.version))
		}
	}
	return errors.Join(errs...)
}

// freeze makes the registry read-only before the first request reads it without locks. A missed
// Validate call is logged, not fatal: requests for such operations answer 401/1000.
func (e *Engine) freeze() {
	if e.frozen.Load() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.frozen.Load() {
		return
	}
	if err := e.checkStrategiesLocked(); err != nil {
		e.log.Error("rpc: engine served before Validate", slog.Any("error", err))
	}
	e.attachObservers()
	e.frozen.Store(true)
}

// BodyLimit returns the effective request body limit in bytes.
func (e *Engine) BodyLimit() int64 { return e.cfg.BodyLimit }
