package rpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
)

// Caller is who runs an in-process call: the principal its caller authenticated and the
// credential that principal was verified from.
type Caller struct {
	// Principal is the authenticated caller. Nil or the anonymous user is no caller at all: a
	// public operation runs as the anonymous user, any other answers 401/1000, exactly as /api
	// answers a request without a credential.
	Principal *Principal
	// Authorization is the credential Principal was verified from, as the value of an
	// Authorization header ("Bearer <token>"); empty when the caller presented none (cron jobs,
	// hooks, the system). The in-process request carries it in its Authorization header, so an
	// operation that reads the request's credential sees what it would see on /api: logout
	// revokes the token the caller presented. It must be the credential Principal came from.
	Authorization string
}

// LogValue keeps the credential out of log lines that print a Caller.
func (c Caller) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("principal", c.Principal), slog.Bool("authorization", c.Authorization != ""))
}

// Call runs an operation in process for a caller without a credential (cron jobs, approval
// hooks, host code acting as the system): CallAs with Caller{Principal: p}.
func (e *Engine) Call(ctx context.Context, p *Principal, resource, action, version string, params json.RawMessage) (any, error) {
	return e.CallAs(ctx, Caller{Principal: p}, resource, action, version, params)
}

// CallAs runs an operation in process, without HTTP, for callers that already know who is
// calling: the MCP endpoint (operations as tools), cron jobs and approval hooks. It runs steps 3
// and 5 to 8 of the /api path on the same code: lookup (unknown or HTTPOnly → ErrNotFound), the
// operation's access rule, the permission check, the rate limit (keyed like /api, with the
// client IP of ctx's RequestInfo, empty when absent), the decoding and validation of params and
// the handler under the operation's timeout. The audit record of an operation declared with
// Audit() is emitted as for /api.
//
// The caller has authenticated c.Principal: no strategy runs. The access rule is /api's: a
// public operation runs as c.Principal, or as the anonymous user when it is nil; any other
// answers ErrUnauthenticated (401/1000) when c.Principal is nil or anonymous, as /api answers a
// request without a credential. An empty version means DefaultVersion; nil params mean none.
// Every error is an *Error carrying the code and HTTP status /api would answer; an error that is
// not one is logged with the request id and returned as ErrUnknown (500/1900) wrapping it. The
// handler sees a Call whose Request is a bodiless POST /api whose only header is c.Authorization
// (when set) and whose Files are nil; response headers it sets are dropped; its result is
// returned as is, not rendered.
func (e *Engine) CallAs(ctx context.Context, c Caller, resource, action, version string, params json.RawMessage) (data any, err error) {
	e.freeze()
	if version == "" {
		version = DefaultVersion
	}
	q := requestPool.Get().(*request)
	info := RequestInfoFrom(ctx)
	if info.ID == "" {
		info.ID = NewID()
		ctx = WithRequestInfo(ctx, info)
	}
	q.ctx, q.id, q.clientIP = ctx, info.ID, info.ClientIP
	if e.cfg.Audit != nil {
		q.start = e.clock()
	}
	q.w = &headerSink{header: make(http.Header)}
	q.r = inProcessRequest(ctx, info.ClientIP, c.Authorization)
	q.env.params = field{val: params, state: fieldSet}
	if len(params) == 0 {
		q.env.params = field{}
	}
	defer func() {
		if e.recovered(q, recover()) {
			data, err = nil, ErrUnknown
		}
		data, err = e.settle(q, data, err)
		e.audit(q)
		*q = request{}
		requestPool.Put(q)
	}()
	return e.callSteps(q, c.Principal, resource, action, version)
}

// inProcessRequest is the request a handler sees in process: a bodiless POST /api from the
// client IP, carrying the caller's credential and nothing else.
func inProcessRequest(ctx context.Context, clientIP, authorization string) *http.Request {
	h := make(http.Header, 1)
	if authorization != "" {
		h["Authorization"] = []string{authorization}
	}
	return (&http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/api"}, Header: h, RemoteAddr: clientIP,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}).WithContext(ctx)
}

// callSteps is the in-process request path: lookup, principal, permission, rate limit, invoke.
func (e *Engine) callSteps(q *request, p *Principal, resource, action, version string) (any, error) {
	key := resource + "\x00" + action + "\x00" + version // routeKey's layout
	rt := e.routes[key]
	if rt == nil || rt.op.HTTPOnly {
		return nil, ErrNotFound
	}
	q.route = rt
	switch {
	case rt.strategy == StrategyNone && p == nil:
		q.principal = Anonymous()
	case rt.strategy == StrategyNone:
		q.principal = p
	case p.IsAnonymous():
		// /api runs the operation's strategy, which refuses a request without a credential; the
		// anonymous user has none (an MCP caller without a token under require_auth = false).
		return nil, ErrUnauthenticated
	default:
		q.principal = p
	}
	if err := e.authorize(q); err != nil {
		return nil, err
	}
	if err := e.rateLimit(q); err != nil {
		return nil, err
	}
	return e.invoke(q)
}

// settle records the outcome for the audit record and turns an error that is not an *Error
// into ErrUnknown, logging its cause as the renderer of /api does.
func (e *Engine) settle(q *request, data any, err error) (any, error) {
	q.wrote = true
	if err == nil {
		q.status, q.code, q.result = http.StatusOK, CodeOK, data
		return data, nil
	}
	re, ok := AsError(err)
	switch {
	case !ok:
		e.logInternal(q.ctx, q.id, err)
		re, err = ErrUnknown, ErrUnknown.Wrap(err)
	case re.HTTPStatus() >= http.StatusInternalServerError && re.Unwrap() != nil:
		e.logInternal(q.ctx, q.id, re.Unwrap())
	}
	q.status, q.code = re.HTTPStatus(), re.Code
	if ok {
		return nil, re // the *Error of err's chain, as the renderer answers it
	}
	return nil, err
}

// headerSink is the response of an in-process call: headers set by the rate limiter or the
// handler are kept until the call ends and then dropped; nothing is written.
type headerSink struct{ header http.Header }

var _ http.ResponseWriter = (*headerSink)(nil)

// Header returns the dropped response headers.
func (h *headerSink) Header() http.Header { return h.header }

// Write discards b.
func (h *headerSink) Write(b []byte) (int, error) { return len(b), nil }

// WriteHeader discards the status.
func (h *headerSink) WriteHeader(int) {}
