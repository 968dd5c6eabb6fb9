package rpc

import "context"

// RequestInfo is what the outer HTTP middleware (package app) learns about a request before any
// route runs: its id (echoed as X-Request-ID) and the client IP resolved through
// svc.app.trusted_proxies.
type RequestInfo struct {
	ID       string
	ClientIP string
}

type requestInfoKey struct{}

// WithRequestInfo returns ctx carrying info (context.WithValue; a custom one-allocation context
// stood here and saved about 90 ns of CPU per request, 0.3 % of an authenticated call's
// end-to-end cost, issue #12).
func WithRequestInfo(ctx context.Context, info RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

// RequestInfoFrom returns the RequestInfo of ctx (zero value when absent).
func RequestInfoFrom(ctx context.Context) RequestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(RequestInfo)
	return info
}
