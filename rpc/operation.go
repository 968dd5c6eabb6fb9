package rpc

import (
	"context"
	"encoding/json"
	"reflect"
	"time"
)

// DefaultVersion is the version of every built-in operation (spec §9).
const DefaultVersion = "v1"

// DefaultTimeout bounds an operation that declares no Timeout (wire-core §1.4: 408/1402).
const DefaultTimeout = 30 * time.Second

// Resource is a named table of operations mounted on /api (spec §1, §2.2). A resource may have no
// operations: a switched-off feature exposes no surface.
type Resource struct {
	Name string // lowercase snake segments joined by "/", e.g. "sys/storage"
	Ops  []Op
}

// Op is one typed operation of a resource, built by Handle. Its fields are read by the engine at
// registration; handlers never see it.
type Op struct {
	Action     string
	Version    string
	Public     bool
	Permission string
	RateLimit  Limit
	Timeout    time.Duration
	Audit      bool
	// HTTPOnly marks an operation that needs the HTTP request itself (file parts of a multipart
	// envelope, cookies, a streamed body): Engine.Call answers it 404 and the MCP endpoint
	// offers no tool for it.
	HTTPOnly bool
	// SuccessKey is the message key of the success envelope's message (translated in the
	// server's language); empty means the engine's "ok".
	SuccessKey   string
	Strategy     string
	StrategyArgs []string
	// Invoke decodes and validates the raw JSON params, then calls the typed handler.
	// The engine calls it after authentication, permission check and rate limiting.
	Invoke func(ctx context.Context, c Call, params json.RawMessage) (any, error)
	// Params is the Go type Invoke decodes params into (Handle's P), for callers that describe
	// operations (the MCP endpoint derives a tool's input schema from it); nil when unknown.
	Params reflect.Type
	// Result is the Go type the handler answers (Handle's R), rendered as the envelope's data;
	// the console's TypeScript operation map is generated from it. Nil when unknown.
	Result reflect.Type
}

// Limit is a rate limit: at most Max requests per Period. A zero Limit means "engine default".
type Limit struct {
	Max    int
	Period time.Duration
}

// Option configures an Op at declaration.
type Option func(*Op)

// Public marks an operation as callable without credentials (strategy "none").
func Public() Option { return func(o *Op) { o.Public = true; o.Strategy = StrategyNone } }

// RequiredPermission requires the principal to hold token (checked by the PermissionChecker).
func RequiredPermission(token string) Option { return func(o *Op) { o.Permission = token } }

// RateLimit overrides the engine default limit. A non-positive max keeps the default; a
// non-positive period inherits the engine period (wire-core §4).
func RateLimit(max int, period time.Duration) Option {
	return func(o *Op) { o.RateLimit = Limit{Max: max, Period: period} }
}

// Timeout bounds the handler; exceeding it answers 408/1402.
func Timeout(d time.Duration) Option { return func(o *Op) { o.Timeout = d } }

// Audit makes the engine emit an AuditRecord for every call of the operation.
func Audit() Option { return func(o *Op) { o.Audit = true } }

// HTTPOnly declares that the operation works only over /api, because its handler reads what an
// in-process call does not have: the file parts of a multipart envelope, cookies or other parts
// of the HTTP request beyond its credential. Engine.Call answers such an operation 404/1200 as
// if it did not exist, and OperationInfo.HTTPOnly tells listers (the MCP endpoint) not to offer
// it. Operations that read only the caller's credential (Authorization) work in process: the
// in-process request carries it (Caller.Authorization).
func HTTPOnly() Option { return func(o *Op) { o.HTTPOnly = true } }

// SuccessMessage sets the message key of the operation's success envelope, e.g. crud_created:
// the original's client shows a mutation's message to the user (its query client's success
// feedback), so a create answers "Created successfully" rather than "Success".
func SuccessMessage(key string) Option { return func(o *Op) { o.SuccessKey = key } }

// Auth selects the authentication strategy (default "bearer") and its arguments, for example
// Auth("ip", "office") or Auth("api_key").
func Auth(strategy string, args ...string) Option {
	return func(o *Op) { o.Strategy = strategy; o.StrategyArgs = args }
}

// Version sets the operation version (default "v1").
func Version(v string) Option { return func(o *Op) { o.Version = v } }

// Validator is implemented by params types that check themselves. The engine calls Validate after
// decoding and before the handler; a returned error (usually from Check) answers 400/1400.
type Validator interface {
	Validate() error
}

// NoParams is the params type of operations that take none; its JSON is never decoded.
type NoParams struct{}

// Handle declares a typed operation. P is decoded from the envelope's params (numbers keep their
// exact digits) and validated when it implements Validator; R is rendered as the envelope's data.
// Nothing is looked up by reflection per request beyond the JSON decoding of P itself.
func Handle[P, R any](action string, fn func(ctx context.Context, c Call, p P) (R, error), opts ...Option) Op {
	op := Op{Action: action, Version: DefaultVersion, Strategy: StrategyBearer, Params: reflect.TypeFor[P](),
		Result: reflect.TypeFor[R]()}
	for _, opt := range opts {
		opt(&op)
	}
	plan := planParams(reflect.TypeFor[P]())
	op.Invoke = func(ctx context.Context, c Call, raw json.RawMessage) (any, error) {
		var p P
		if err := decodeParams(raw, &p, plan); err != nil {
			return nil, err
		}
		if v, ok := any(&p).(Validator); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		return fn(ctx, c, p)
	}
	return op
}
