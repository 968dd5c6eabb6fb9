package rpc

import (
	"context"
	"net/http"
)

// authenticate is step 4: the operation's strategy (bearer unless declared otherwise, "none" for
// public operations) turns the request into a principal.
func (e *Engine) authenticate(q *request) error {
	p, err := e.runStrategy(q.ctx, q.r, q.clientIP, q.route.strategy, q.route.op.StrategyArgs)
	if err != nil {
		return err
	}
	q.principal = p
	return nil
}

// Authenticate runs a registered strategy for a route outside /api (download proxy, /ws, /mcp),
// so every route shares one registry and one principal model. An empty strategy means the
// engine's default; an unknown one answers ErrUnauthenticated (401/1000, wire-core §3.3). The
// client IP is the one the outer middleware put in ctx (RequestInfo), else the peer address.
// Errors are *Error values to render with WriteError.
func (e *Engine) Authenticate(ctx context.Context, r *http.Request, strategy string, args ...string) (*Principal, error) {
	e.freeze()
	if strategy == "" {
		strategy = e.cfg.DefaultStrategy
	}
	ip := RequestInfoFrom(ctx).ClientIP
	if ip == "" {
		ip = peerIP(r.RemoteAddr)
	}
	return e.runStrategy(ctx, r, ip, strategy, args)
}

// runStrategy calls a strategy and holds it to its contract: a principal or an error.
func (e *Engine) runStrategy(ctx context.Context, r *http.Request, ip, strategy string, args []string) (*Principal, error) {
	s, ok := e.strategies[strategy]
	if !ok {
		return nil, ErrUnauthenticated
	}
	p, err := s.Authenticate(ctx, AuthRequest{Request: r, ClientIP: ip, Args: args})
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, ErrUnauthenticated
	}
	return p, nil
}

// noneStrategy is the built-in strategy of public operations: everyone is the anonymous user
// (wire-core §3.1).
type noneStrategy struct{}

var _ Strategy = noneStrategy{}

// Name returns StrategyNone.
func (noneStrategy) Name() string { return StrategyNone }

// Authenticate returns a fresh anonymous principal.
func (noneStrategy) Authenticate(context.Context, AuthRequest) (*Principal, error) {
	return Anonymous(), nil
}
