package rpc

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Registration patterns (wire-core §1.3). They run at startup only; requests are checked by the
// cheaper byte loops of envelope.go.
var (
	resourceRe   = regexp.MustCompile(`^[a-z][a-z0-9]*(?:_[a-z0-9]+)*(?:/[a-z][a-z0-9]*(?:_[a-z0-9]+)*)*$`)
	snakeRe      = regexp.MustCompile(`^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$`)
	versionRe    = regexp.MustCompile(`^v[1-9][0-9]*$`)
	permissionRe = regexp.MustCompile(`^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$`)
)

// route is a registered operation with everything the request path needs precomputed, so a
// request does one map lookup and no further resolution.
type route struct {
	resource, action, version string
	op                        Op
	strategy                  string
	limit                     Limit             // resolved against the engine default
	limitHeader               []string          // X-RateLimit-Limit value, shared
	timeout                   time.Duration     // resolved against DefaultTimeout
	obs                       OperationObserver // nil unless EngineConfig.Observer is set
}

// routeKey is the lookup key of (resource, action, version). NUL cannot occur in valid names, so
// the concatenation is unambiguous.
func routeKey(dst []byte, resource, action, version []byte) []byte {
	dst = append(dst, resource...)
	dst = append(dst, 0)
	dst = append(dst, action...)
	dst = append(dst, 0)
	return append(dst, version...)
}

// Register adds resources and their operations. It validates everything first and registers
// nothing when any check fails, returning every problem joined (each wraps
// ErrInvalidRegistration): resource names are lowercase snake segments joined by "/", actions are
// snake_case, versions are v1, v2, …, permission tokens are dot-separated words, a public
// operation has no permission, Invoke is set, timeouts are not negative and no (resource, action,
// version) is declared twice. Register fails with ErrEngineFrozen after Validate or the first
// request.
func (e *Engine) Register(rs ...Resource) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.frozen.Load() {
		return fmt.Errorf("%w: resources registered too late", ErrEngineFrozen)
	}
	var errs []error
	batch := make(map[string]*route)
	for _, res := range rs {
		if !resourceRe.MatchString(res.Name) {
			errs = append(errs, fmt.Errorf("%w: resource name %q is not lowercase snake segments joined by /",
				ErrInvalidRegistration, res.Name))
			continue
		}
		for i := range res.Ops {
			rt, err := e.newRoute(res.Name, res.Ops[i])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			key := string(routeKey(nil, []byte(rt.resource), []byte(rt.action), []byte(rt.version)))
			if _, dup := e.routes[key]; dup || batch[key] != nil {
				errs = append(errs, fmt.Errorf("%w: %s %s %s declared twice",
					ErrInvalidRegistration, rt.resource, rt.action, rt.version))
				continue
			}
			batch[key] = rt
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for k, rt := range batch {
		e.routes[k] = rt
	}
	return nil
}

// newRoute checks one operation and resolves its defaults.
func (e *Engine) newRoute(resource string, op Op) (*route, error) {
	where := resource + " " + op.Action
	if op.Version == "" {
		op.Version = DefaultVersion
	}
	fail := func(format string, args ...any) (*route, error) {
		return nil, fmt.Errorf("%w: %s %s: %s", ErrInvalidRegistration, where, op.Version, fmt.Sprintf(format, args...))
	}
	switch {
	case !snakeRe.MatchString(op.Action):
		return fail("action %q is not snake_case", op.Action)
	case !versionRe.MatchString(op.Version):
		return fail("version %q is not v1, v2, …", op.Version)
	case op.Invoke == nil:
		return fail("no Invoke (declare operations with Handle)")
	case op.Permission != "" && !permissionRe.MatchString(op.Permission):
		return fail("permission %q is not a dot-separated token", op.Permission)
	case op.Public && op.Permission != "":
		return fail("a public operation cannot require permission %q", op.Permission)
	case op.Public && op.Strategy != "" && op.Strategy != StrategyNone:
		return fail("a public operation cannot use strategy %q", op.Strategy)
	case op.Timeout < 0:
		return fail("negative timeout %s", op.Timeout)
	}
	rt := &route{resource: resource, action: op.Action, version: op.Version, op: op}
	switch {
	case op.Public:
		rt.strategy = StrategyNone
	case op.Strategy == "":
		rt.strategy = e.cfg.DefaultStrategy
	default:
		rt.strategy = op.Strategy
	}
	// wire-core §4: the op's Max and Period when positive, else the engine default; a
	// non-positive Max never disables limiting.
	rt.limit = e.cfg.DefaultLimit
	if op.RateLimit.Max > 0 {
		rt.limit.Max = op.RateLimit.Max
	}
	if op.RateLimit.Period > 0 {
		rt.limit.Period = op.RateLimit.Period
	}
	rt.limitHeader = intHeader(rt.limit.Max)
	rt.timeout = op.Timeout
	if rt.timeout == 0 {
		rt.timeout = DefaultTimeout
	}
	return rt, nil
}
