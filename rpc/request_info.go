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

// infoCtx carries a RequestInfo. It is context.WithValue in one allocation instead of two (the
// node and the boxed struct), on every request: Value hands out a pointer to the stored info,
// which never changes. Done, Err and Deadline are the parent's, so contexts derived from it still
// register with the parent's cancelCtx directly (the context package finds it through Value).
type infoCtx struct {
	context.Context
	info RequestInfo
}

// Value returns a *RequestInfo for requestInfoKey and asks the parent for any other key.
func (c *infoCtx) Value(key any) any {
	if _, ok := key.(requestInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// String describes the context for debugging, as the context package's types do.
func (c *infoCtx) String() string { return "rpc.WithRequestInfo(" + c.info.ID + ")" }

// WithRequestInfo returns ctx carrying info.
func WithRequestInfo(ctx context.Context, info RequestInfo) context.Context {
	return &infoCtx{Context: ctx, info: info}
}

// RequestInfoFrom returns the RequestInfo of ctx (zero value when absent).
func RequestInfoFrom(ctx context.Context) RequestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*RequestInfo); ok {
		return *info
	}
	return RequestInfo{}
}
