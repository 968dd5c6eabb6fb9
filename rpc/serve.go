package rpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

// request is the state of one /api call, passed from step to step. It is pooled; nothing handed
// to a handler or a strategy points into it.
type request struct {
	w        http.ResponseWriter
	r        *http.Request
	ctx      context.Context
	id       string
	clientIP string
	start    time.Time // for the audit record; set only when there is an audit sink

	kind    contentKind
	mem     bodyMemory // this request's share of the body memory budget
	body    []byte     // the decoded JSON body (step 1)
	limited *limitBody // the bounded multipart body (step 1)
	env     envelope   // step 2
	files   *multipartFiles

	route     *route
	principal *Principal

	wrote  bool // the envelope was written
	status int  // HTTP status written (audit)
	code   int  // business code written (audit)
	result any  // data of the success envelope (audit)

	observed time.Time // when the Observer's Begin ran; zero without an Observer
}

var requestPool = sync.Pool{New: func() any { return new(request) }}

// ServeHTTP answers POST /api with the request path of ARCHITECTURE.md, one step per file:
//
//  1. body.go: read the body within the limit and the memory budget and undo X-Body-Encoding;
//  2. envelope.go / multipart.go: decode the envelope;
//  3. lookup.go: find the operation (unknown → 404/1200 before any authentication);
//  4. authenticate.go: run the operation's strategy;
//  5. permission.go: check RequiredPermission;
//  6. ratelimit.go: count the call against its window;
//  7. and 8. invoke.go: decode and validate params, run the handler under its timeout;
//  9. render.go: write the envelope; every error goes through the one renderer.
//
// Mount the engine on the pattern "/api" (every method), so other methods get the 405 envelope.
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.freeze()
	q := e.begin(w, r)
	defer e.end(q)

	if r.Method != http.MethodPost {
		w.Header()["Allow"] = allowPost
		e.fail(q, ErrMethodNotAllowed)
		return
	}
	if err := e.readBody(q); err != nil {
		bodyFailed(q.w.Header(), err)
		e.fail(q, err)
		return
	}
	if err := e.decodeEnvelope(q); err != nil {
		bodyFailed(q.w.Header(), err)
		e.fail(q, err)
		return
	}
	if err := e.lookup(q); err != nil {
		e.fail(q, err)
		return
	}
	if err := e.authenticate(q); err != nil {
		e.fail(q, err)
		return
	}
	if err := e.authorize(q); err != nil {
		e.fail(q, err)
		return
	}
	if err := e.rateLimit(q); err != nil {
		e.fail(q, err)
		return
	}
	data, err := e.invoke(q)
	if err != nil {
		e.fail(q, err)
		return
	}
	e.respond(q, http.StatusOK, data)
}

var allowPost = []string{http.MethodPost}

// begin takes the request id and client IP from the outer middleware (RequestInfo) or, when the
// engine is served without it, makes them: a UUIDv7 echoed as X-Request-ID and the peer address.
func (e *Engine) begin(w http.ResponseWriter, r *http.Request) *request {
	q := requestPool.Get().(*request)
	q.w, q.r, q.ctx = w, r, r.Context()
	q.mem.budget = e.budget
	if e.cfg.Audit != nil { // a clock read is not free: only the audit record needs the start
		q.start = e.clock()
	}
	info := RequestInfoFrom(q.ctx)
	if info.ID == "" || info.ClientIP == "" {
		if info.ID == "" {
			info.ID = NewID()
			w.Header().Set("X-Request-ID", info.ID)
		}
		if info.ClientIP == "" {
			info.ClientIP = peerIP(r.RemoteAddr)
		}
		q.ctx = WithRequestInfo(q.ctx, info)
	}
	q.id, q.clientIP = info.ID, info.ClientIP
	q.mem.client = clientKey(info.ClientIP)
	if e.obs != nil {
		e.observeBegin(q)
	}
	return q
}

// end recovers a panic outside the handler (strategies, checkers), removes spooled files, emits
// the audit record, returns the request's body memory to the budget and returns the state to
// the pool.
func (e *Engine) end(q *request) {
	if e.recovered(q, recover()) && !q.wrote {
		e.fail(q, ErrUnknown)
	}
	if q.files != nil {
		q.files.cleanup()
	}
	e.audit(q)
	if e.obs != nil {
		e.observeDone(q)
	}
	q.mem.release()
	*q = request{}
	requestPool.Put(q)
}

// recovered logs v, the value of a recover() call, and reports whether there was a panic.
// http.ErrAbortHandler keeps its meaning (abort the response) and is re-raised.
func (e *Engine) recovered(q *request, v any) bool {
	if v == nil {
		return false
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	e.logPanic(q, v)
	return true
}

func (e *Engine) logPanic(q *request, v any) {
	e.log.LogAttrs(q.ctx, slog.LevelError, "rpc: panic",
		slog.String("request_id", q.id),
		slog.Any("panic", v),
		slog.String("stack", string(debug.Stack())))
}

// peerIP is the host part of a RemoteAddr ("1.2.3.4:5678", "[::1]:80"), or the address itself.
func peerIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// emptyObject is the params and meta of an envelope that omits them (wire-core §1.3). It is
// shared: handlers must not modify Call.Meta in place.
var emptyObject = json.RawMessage("{}")
