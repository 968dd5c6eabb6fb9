package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/rpc"
)

// inboundPattern is the gateway route, outside /api (spec §4.2, wire-integration §6).
const inboundPattern = "POST /integration/inbound/{systemCode}/{contractCode}"

// maxInboundBody bounds a delivery's body.
const maxInboundBody = 16 << 20

// dispatchError is a failed dispatch(input): its kind (input_invalid, handler, output_invalid)
// and error. The last one sticks to the delivery even when the script catches it.
type dispatchError struct {
	kind string
	err  error
}

func (e *dispatchError) Error() string { return e.kind + ": " + e.err.Error() }
func (e *dispatchError) Unwrap() error { return e.err }

// handleFunc is what dispatch calls: the registered handler, or the dry run's stub.
type handleFunc func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

// inboundOutcome is one inbound run: the script's reply (JSON, "null" for none) unless the
// script failed, the delivery's failure (sticky dispatch failure or the script's), and what was
// dispatched.
type inboundOutcome struct {
	reply        json.RawMessage
	scriptFailed bool
	kind         string
	err          error
	inputs       []json.RawMessage
	outputs      []json.RawMessage
}

// runInbound runs an inbound adapter script with request (its verified credentials withheld:
// withoutCredentials), system, dispatch, codes and the baseline bound (no http, sql or errors:
// wire-integration §8, §14).
func (s *Service) runInbound(ctx context.Context, c *Contract, sys *System, script string, req *InboundRequest, timeout time.Duration, handle handleFunc) inboundOutcome {
	var o inboundOutcome
	var last *dispatchError
	// mu guards o's lists and last: a run answered at its deadline without its goroutine
	// (runBody) must not see a dispatch it made after (ended is then set).
	var mu sync.Mutex
	ended := false
	ctx, release, err := s.engine.reserve(ctx)
	if err != nil {
		o.scriptFailed = true
		o.kind, o.err = classify(ctx, err)
		return o
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seen := s.withoutCredentials(sys, req)
	out, err := s.engine.runBody(rctx, "inbound.js", script, func(r *run) error {
		if err := seen.bindRequest(r); err != nil {
			return err
		}
		if err := s.bindSystem(r, sys); err != nil {
			return err
		}
		if err := s.newCodesLib(r.ctx, r, sys.ID).install(); err != nil {
			return err
		}
		return r.set("dispatch", func(v goja.Value) goja.Value {
			in, out, derr := s.dispatch(r, c, v, handle)
			mu.Lock()
			if !ended {
				o.inputs = append(o.inputs, in)
				if derr != nil {
					last = derr
				} else {
					o.outputs = append(o.outputs, out)
				}
			}
			mu.Unlock()
			if derr != nil {
				r.rethrow(derr)
			}
			return r.fromJSON(out)
		})
	}, slog.String("system", sys.Code), slog.String("contract", c.Code), slog.String("direction", DirectionInbound))
	mu.Lock()
	ended = true
	mu.Unlock()
	if err != nil {
		o.scriptFailed = true
		var de *dispatchError
		if errors.As(err, &de) && de == last && rctx.Err() == nil {
			o.kind, o.err = de.kind, de.err
		} else {
			o.kind, o.err = classify(rctx, err)
		}
		return o
	}
	o.reply = out
	if last != nil {
		o.kind, o.err = last.kind, last.err
	}
	return o
}

// dispatch canonicalizes the input, checks the input schema, calls the handler and checks its
// output: failures are input_invalid, handler and output_invalid.
func (s *Service) dispatch(r *run, c *Contract, v goja.Value, handle handleFunc) (json.RawMessage, json.RawMessage, *dispatchError) {
	in, err := r.toJSON(v)
	if err != nil {
		return nil, nil, &dispatchError{kind: KindInputInvalid, err: detail(ErrInputInvalid, err.Error())}
	}
	if err := s.schemas.check(c.InputSchema, in); err != nil {
		return in, nil, &dispatchError{kind: KindInputInvalid, err: detail(ErrInputInvalid, err.Error())}
	}
	out, err := handle(r.ctx, in)
	if err != nil {
		var ke *kindError
		if errors.As(err, &ke) {
			return in, nil, &dispatchError{kind: ke.kind, err: ke.err}
		}
		return in, nil, &dispatchError{kind: KindHandler, err: err}
	}
	if out, err = canonical(out); err != nil {
		return in, nil, &dispatchError{kind: KindOutputInvalid, err: detail(ErrOutputInvalid, err.Error())}
	}
	if err := s.schemas.check(c.OutputSchema, out); err != nil {
		return in, out, &dispatchError{kind: KindOutputInvalid, err: detail(ErrOutputInvalid, err.Error())}
	}
	return in, out, nil
}

// serveInbound is the inbound gateway (wire-integration §6). What the headers decide is
// decided before the body is read: the system is resolved, the rate limit counted per (system,
// client IP) — unknown codes share one bucket per client — and a scheme that needs no body
// (every built-in but script) verified; an unknown or disabled system, failed credentials and a
// missing contract, adapter or handler answer without reading it, so a caller without
// credentials never makes the server hold a body. Then the body is read under the process's
// body memory budget (app.Deps.Bodies, shared with /api) and released when the answer is
// written. Every verification failure answers the same 401/2622.
func (s *Service) serveInbound(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	req := inboundRequest(r)
	sys, err := s.loadSystem(ctx, req.SystemCode, true)
	if err != nil && !errors.Is(err, ErrSystemNotFound) {
		s.errors.WriteError(w, r, err)
		return
	}
	if d := s.limiter.Allow(limitKey(sys, req.ClientAddr), s.limit); !d.Allowed {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.RetryAfter.Seconds()))))
		s.errors.WriteError(w, r, rpc.ErrTooManyRequests)
		return
	}
	body := &inboundBody{w: w, r: r, req: req, bodies: s.bodies}
	defer body.release()
	reply, err := s.deliver(ctx, sys, req, body.read)
	if err != nil {
		s.errors.WriteError(w, r, externalStatus(err))
		return
	}
	if err := renderReply(w, reply); err != nil {
		s.errors.WriteError(w, r, externalStatus(err))
	}
}

// inboundRequest is a delivery without its body: path codes, headers, query and client IP.
func inboundRequest(r *http.Request) *InboundRequest {
	req := &InboundRequest{SystemCode: r.PathValue("systemCode"), ContractCode: r.PathValue("contractCode"), Protocol: "http",
		Method: r.Method, Path: r.URL.Path, Headers: map[string]string{}, Query: map[string]string{},
		ClientAddr: rpc.RequestInfoFrom(r.Context()).ClientIP}
	if req.ClientAddr == "" {
		req.ClientAddr = clientHost(r.RemoteAddr)
	}
	for k, v := range r.Header {
		req.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	for k, v := range r.URL.Query() {
		req.Query[k] = v[0]
	}
	return req
}

// limitKey is a delivery's rate-limit bucket: (system, client IP) for a known system, and one
// bucket per client IP for every unknown code, so guessing codes neither escapes the limit nor
// adds a bucket per guess. System ids never contain '|' and are never empty.
func limitKey(sys *System, client string) string {
	if sys == nil {
		return "|" + client
	}
	return sys.ID + "|" + client
}

// scriptCopies is what a delivery's body costs again once a script sees it (bindRequest): a
// Go string of it, and goja's form of that string, up to twice its bytes for non-ASCII text
// (UTF-16). Every delivery read reaches a script (the script scheme's or the adapter's), so the
// budget reserves them with the body.
const scriptCopies = 2

// inboundBody reads a delivery's body at most once, when the pipeline first needs it, into
// budgeted memory (at most maxInboundBody, and svc.app.body_limit).
type inboundBody struct {
	w      http.ResponseWriter
	r      *http.Request
	req    *InboundRequest
	bodies app.BodyReader
	done   bool
	free   func()
}

// read fills req.Body; a refusal (413, 503, 400) is an rpc error with its headers set.
func (b *inboundBody) read() error {
	if b.done {
		return nil
	}
	b.done = true
	body, free, err := b.bodies.ReadBody(b.w, b.r, maxInboundBody, scriptCopies)
	b.free = free
	b.req.Body = body
	return err
}

// release returns the body's memory once the answer is written.
func (b *inboundBody) release() {
	if b.free != nil {
		b.free()
	}
}

func clientHost(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i > 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

// deliver runs the pipeline after the rate limit: verification of the resolved system (nil:
// unknown; refusals counted as auth or config, never logged), contract, adapter and handler,
// then the body (readBody), the script, stats and log. The body is read before verification
// only for a scheme that looks at it (needsBody).
func (s *Service) deliver(ctx context.Context, sys *System, req *InboundRequest, readBody func() error) (json.RawMessage, error) {
	var refusal *authFailure
	switch {
	case sys == nil:
		refusal = denied("unknown system")
	case !sys.IsEnabled:
		refusal = denied("system disabled")
	default:
		if s.needsBody(sys) {
			if err := readBody(); err != nil {
				return nil, err
			}
		}
		refusal = s.verifyInbound(ctx, sys, req)
	}
	if refusal != nil {
		// Unknown codes are not counted: a stats entry per guessed code would let callers grow
		// the map without bound.
		if sys != nil {
			s.stats.Record(sys.Code, "", DirectionInbound, refusal.kind, 0, s.describe(ErrInboundAuthFailed))
		}
		s.log.WarnContext(ctx, "integration: inbound delivery refused", slog.String("system", req.SystemCode),
			slog.String("client", req.ClientAddr), slog.String("reason", refusal.reason))
		return nil, ErrInboundAuthFailed
	}
	start := s.clock()
	secrets, _ := s.secrets.OpenSystem(sys)
	record := func(o inboundOutcome) {
		d := s.clock().Sub(start)
		s.stats.Record(sys.Code, req.ContractCode, DirectionInbound, o.kind, d, s.describe(o.err))
		inv := inboundInvocation(sys.Code, req, o, d, secrets)
		inv.Err = s.describe(o.err)
		s.recorder.Record(ctx, inv)
	}
	c, err := s.loadContract(ctx, req.ContractCode, false)
	var ad *Adapter
	if err == nil {
		ad, err = s.loadAdapter(ctx, sys.ID, c.ID, DirectionInbound, false)
	}
	if err != nil {
		if _, ok := rpc.AsError(err); ok {
			record(inboundOutcome{kind: KindConfig, err: err})
		}
		return nil, err
	}
	h := s.handlers[c.Code]
	if h == nil {
		record(inboundOutcome{kind: KindConfig, err: ErrInboundHandlerMissing})
		return nil, ErrInboundHandlerMissing
	}
	if err := readBody(); err != nil {
		return nil, err
	}
	timeout := s.cfg.RunTimeout
	if ad.TimeoutMs > 0 {
		timeout = time.Duration(ad.TimeoutMs) * time.Millisecond
	}
	o := s.runInbound(ctx, c, sys, ad.Script, req, timeout, h.Handle)
	if !o.scriptFailed {
		if err := checkReply(o.reply); err != nil { // a reply that cannot be rendered fails the delivery
			o.scriptFailed, o.kind, o.err = true, KindScript, err
		}
	}
	record(o)
	if o.scriptFailed {
		return nil, o.err
	}
	return o.reply, nil
}

// inboundInvocation is the log row of an accepted delivery: the dispatched input(s) and
// output(s) and one pseudo-exchange of the caller's request with the reply. The system's
// secrets (the credentials a caller presents under every scheme but signature) are scrubbed,
// and the recorder masks the credential headers.
func inboundInvocation(system string, req *InboundRequest, o inboundOutcome, d time.Duration, secrets []string) Invocation {
	url := req.Path
	if len(req.Query) > 0 {
		q := make([]string, 0, len(req.Query))
		for k, v := range req.Query {
			q = append(q, k+"="+v)
		}
		url += "?" + strings.Join(q, "&")
	}
	reply := string(o.reply)
	if o.scriptFailed {
		reply = ""
	}
	return Invocation{SystemCode: system, ContractCode: req.ContractCode, Direction: DirectionInbound, FailureKind: o.kind,
		Duration: d, Input: oneOrMany(o.inputs), Output: oneOrMany(o.outputs), Err: o.err,
		Trace:   []HTTPExchange{{Method: req.Method, URL: url, RequestHeaders: req.Headers, RequestBody: string(req.Body), ResponseBody: reply}},
		Secrets: secrets}
}

// oneOrMany is the log capture of dispatched values: null for none, the value for one, an
// array for several.
func oneOrMany(vs []json.RawMessage) json.RawMessage {
	switch len(vs) {
	case 0:
		return nil
	case 1:
		return vs[0]
	}
	out, _ := json.Marshal(vs)
	return out
}

// checkReply: a $response key must hold an object (2613 otherwise).
func checkReply(reply json.RawMessage) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(reply, &obj) != nil {
		return nil
	}
	env, ok := obj["$response"]
	if !ok {
		return nil
	}
	var r struct {
		Status  *int              `json:"status"`
		Headers map[string]string `json:"headers"`
	}
	if t := bytes.TrimSpace(env); len(t) == 0 || t[0] != '{' || json.Unmarshal(env, &r) != nil {
		return detail(ErrScriptFailed, "$response must be an object {status, headers, body}")
	}
	return nil
}

// renderReply writes a script's reply (wire-integration §6): null → 200 empty; an object with
// $response → its status (outside 100..599: 200), headers verbatim and body (string as
// text/plain unless a content type was set, null empty, else JSON); anything else → 200 JSON.
func renderReply(w http.ResponseWriter, reply json.RawMessage) error {
	if len(bytes.TrimSpace(reply)) == 0 || bytes.Equal(reply, []byte("null")) {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(reply, &obj) == nil {
		if env, ok := obj["$response"]; ok {
			var r struct {
				Status  *int              `json:"status"`
				Headers map[string]string `json:"headers"`
				Body    json.RawMessage   `json:"body"`
			}
			if checkReply(reply) != nil || json.Unmarshal(env, &r) != nil {
				return detail(ErrScriptFailed, "$response must be an object {status, headers, body}")
			}
			status := http.StatusOK
			if r.Status != nil && *r.Status >= 100 && *r.Status <= 599 {
				status = *r.Status
			}
			for k, v := range r.Headers {
				w.Header().Set(k, v)
			}
			var body []byte
			var text string
			switch {
			case len(r.Body) == 0 || bytes.Equal(r.Body, []byte("null")):
			case json.Unmarshal(r.Body, &text) == nil:
				body = []byte(text)
				if w.Header().Get("Content-Type") == "" {
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				}
			default:
				body = r.Body
				if w.Header().Get("Content-Type") == "" {
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
				}
			}
			w.WriteHeader(status)
			w.Write(body)
			return nil
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write(reply)
	return nil
}

// externalStatus remaps pipeline errors for external callers: errors with a non-200 status
// keep it (401, 429, 501); a missing or disabled contract or adapter is 404; invalid input
// 400; every other business error 500.
func externalStatus(err error) error {
	re, ok := rpc.AsError(err)
	if !ok || re.HTTPStatus() != http.StatusOK {
		return err
	}
	c := *re
	switch {
	case errors.Is(err, ErrContractNotFound), errors.Is(err, ErrContractDisabled),
		errors.Is(err, ErrAdapterNotFound), errors.Is(err, ErrAdapterDisabled):
		c.Status = http.StatusNotFound
	case errors.Is(err, ErrInputInvalid):
		c.Status = http.StatusBadRequest
	default:
		c.Status = http.StatusInternalServerError
	}
	return &c
}
