package integration

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// Limits bound what one script run may use so that a hostile or broken script cannot take the
// process down (issues #21, #31, #42). A run executes in a worker process (worker.go, pool.go)
// whose memory the operating system bounds (RLIMIT_DATA: every allocation of the worker's Go
// heap, whatever JavaScript construct makes it) and which the parent kills at the run's
// deadline, so no script reaches the server's memory or keeps a CPU past its deadline; the
// server holds at most one protocol message of a run at a time (workerMessageLimit).
type Limits struct {
	// MaxCallDepth is the deepest JavaScript call stack (frames); deeper is a RangeError the
	// script cannot catch. Default 1000.
	MaxCallDepth int
	// MemoryLimit is one worker's data-segment limit in bytes (svc.integration.script.
	// memory_limit): a run that needs more ends the worker and fails with kind script,
	// "memory limit exceeded". Default 512 MiB.
	MemoryLimit int64
	// Concurrency is how many scripts run at once (svc.integration.script.concurrency), one
	// worker each. Default the number of CPUs.
	Concurrency int
	// QueueWait is how long a run waits for a free worker (svc.integration.script.queue_wait)
	// before it fails with ErrScriptsBusy (2630, kind timeout). Default 5s.
	QueueWait time.Duration
	// Worker is the executable started as a script worker (with the worker's argument and
	// environment, worker.go); empty: this binary itself (os.Executable), which the package's
	// init turns into a worker. Any binary that imports this package serves; the package's
	// tests start a plain build (no race detector) so that memory and deadlines are measured
	// on what ships.
	Worker string
}

func (l Limits) withDefaults() Limits {
	if l.MaxCallDepth <= 0 {
		l.MaxCallDepth = 1000
	}
	if l.MemoryLimit <= 0 {
		l.MemoryLimit = 512 << 20
	}
	if l.Concurrency <= 0 {
		l.Concurrency = runtime.NumCPU()
	}
	if l.QueueWait <= 0 {
		l.QueueWait = 5 * time.Second
	}
	return l
}

// errMemoryLimit is a run whose worker reached its memory limit.
var errMemoryLimit = errors.New("memory limit exceeded")

// errCallDepth is a run past MaxCallDepth.
var errCallDepth = errors.New("maximum call depth exceeded")

// errNeverSettles: the script returned a promise still pending after every job ran. Host calls
// are synchronous and there are no timers, so nothing can settle it any more: the run could
// only end at its deadline, and is reported as a timeout without waiting for it.
var errNeverSettles = errors.New("the script's promise never settles")

// Script shapes (wire-integration §8): adapter and auth scripts are function bodies whose
// top-level return is the result; envelope scripts are functions of request or response.
type scriptShape int

const (
	shapeBody scriptShape = iota
	shapeRequestEnvelope
	shapeResponseEnvelope
)

// programCacheSize bounds the compile cache (entries, by content hash).
const programCacheSize = 1024

// Engine compiles scripts once per content (to answer syntax errors at once) and runs each in a
// fresh goja runtime of a worker process (pool.go) with the limits and the baseline bindings
// (console, crypto, cache, URL, URLSearchParams and, on first use, the standard bundle). It is
// safe for concurrent use; Close ends its idle workers.
type Engine struct {
	limits Limits
	log    *slog.Logger
	cache  *scriptCache
	pool   *workerPool

	mu       sync.Mutex
	programs map[[32]byte]*goja.Program
	order    [][32]byte // insertion order, for eviction
}

// NewEngine returns an engine with limits (zero fields take their defaults) and the cache
// binding's bounds (svc.integration.script_cache; zero fields: 32 MiB, 1h); log receives
// console output, clock stamps the cache binding's expiries.
func NewEngine(limits Limits, cache config.ScriptCache, log *slog.Logger, clock func() time.Time) *Engine {
	limits = limits.withDefaults()
	return &Engine{limits: limits, log: log, cache: newScriptCache(cache, clock), programs: map[[32]byte]*goja.Program{},
		pool: newWorkerPool(limits, log)}
}

// Close ends the engine's idle workers; a run in flight ends its own when it is done.
func (e *Engine) Close() { e.pool.close() }

// reserve takes a script slot and a started worker for one run, waiting at most the queue wait
// (errScriptsBusy) or until ctx ends, and answers ctx carrying them and their release. The
// caller sets the run's deadline on the answered context after it: the deadline measures the
// run, not a wait for a slot or a worker's start (which the queue wait bounds). runBody uses
// the reserved worker; a run without one reserves inside its deadline.
func (e *Engine) reserve(ctx context.Context) (context.Context, func(), error) {
	l, err := e.pool.reserve(ctx)
	if err != nil {
		return ctx, func() {}, err
	}
	return context.WithValue(ctx, leaseKey{}, l), l.release, nil
}

// Compile compiles a script of the given shape, from the cache when the same content was
// compiled before. A syntax error is ErrInvalidScript(detail).
func (e *Engine) compile(shape scriptShape, name, body string) (*goja.Program, error) {
	key := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", shape, body)))
	e.mu.Lock()
	p := e.programs[key]
	e.mu.Unlock()
	if p != nil {
		return p, nil
	}
	src, err := wrapScript(shape, body)
	if err != nil {
		return nil, detail(ErrInvalidScript, err.Error())
	}
	p, err = goja.Compile(name, src, true)
	if err != nil {
		return nil, detail(ErrInvalidScript, err.Error())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.programs[key]; !ok {
		if len(e.order) >= programCacheSize {
			delete(e.programs, e.order[0])
			e.order = e.order[1:]
		}
		e.programs[key] = p
		e.order = append(e.order, key)
	}
	return p, nil
}

// CheckScript compiles an adapter or auth script body (2616 when it does not compile).
func (e *Engine) CheckScript(body string) error {
	if strings.TrimSpace(body) == "" {
		return detail(ErrInvalidScript, "script is empty")
	}
	_, err := e.compile(shapeBody, "adapter.js", body)
	return err
}

// checkEnvelope compiles a system's envelope scripts (2625 when one does not compile).
func (e *Engine) checkEnvelope(env *EnvelopeConfig) error {
	for _, sc := range []struct {
		shape scriptShape
		body  string
	}{{shapeRequestEnvelope, env.Request}, {shapeResponseEnvelope, env.Response}} {
		if strings.TrimSpace(sc.body) == "" {
			continue
		}
		if _, err := e.compile(sc.shape, "envelope.js", sc.body); err != nil {
			return detail(ErrInvalidEnvelope, scriptMessage(err))
		}
	}
	return nil
}

// wrapScript wraps body in a strict function (wire-integration §8, §14): bodies are called at
// once and their top-level return is the result; a trailing expression statement is returned
// too (the docs' examples end in a bare expression). Envelope scripts become functions of
// request or response. The body starts on line 2.
func wrapScript(shape scriptShape, body string) (string, error) {
	const strict = "\"use strict\";"
	switch shape {
	case shapeRequestEnvelope:
		return "(function (request) {" + strict + "\n" + returnTrailing("(function (request) {"+strict+"\n", body) + "\n})", nil
	case shapeResponseEnvelope:
		return "(function (response) {" + strict + "\n" + returnTrailing("(function (response) {"+strict+"\n", body) + "\n})", nil
	}
	head := "(function () {" + strict + "\n"
	return head + returnTrailing(head, body) + "\n})()", nil
}

// returnTrailing inserts "return " before the body's last statement when it is an expression
// statement. A body that does not parse is returned unchanged (compilation reports it).
func returnTrailing(head, body string) string {
	prg, err := parser.ParseFile(nil, "", head+body+"\n})", 0)
	if err != nil || len(prg.Body) == 0 {
		return body
	}
	call, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return body
	}
	var fn *ast.FunctionLiteral
	switch x := call.Expression.(type) {
	case *ast.FunctionLiteral:
		fn = x
	default:
		return body
	}
	stmts := fn.Body.List
	if len(stmts) == 0 {
		return body
	}
	last, ok := stmts[len(stmts)-1].(*ast.ExpressionStatement)
	if !ok {
		return body
	}
	if s, ok := last.Expression.(*ast.StringLiteral); ok && len(stmts) == 1 && s.Value == "use strict" {
		return body
	}
	at := int(last.Idx0()) - 1 - len(head) // Idx is 1-based in the parsed text
	if at < 0 || at > len(body) {
		return body
	}
	// The AST keeps no parentheses: "({x})" starts at "{". Grouping parentheses right before
	// the start belong to the statement, so the return goes before the first of them.
	j := at
	for j > 0 && strings.IndexByte(" \t\r\n(", body[j-1]) >= 0 {
		j--
	}
	if k := strings.IndexByte(body[j:at], '('); k >= 0 {
		at = j + k
	}
	return body[:at] + "return " + body[at:]
}

// run is one script execution. In a worker it is the script's runtime. In the parent it is the
// run's host side: a runtime that never runs script code, in which the surfaces' setup defines
// the host bindings (Go functions of goja values) and the data globals; the worker's calls of a
// binding arrive as JSON, are converted into this runtime, served and answered as JSON
// (hostrun.go).
type run struct {
	e   *Engine
	ctx context.Context
	vm  *goja.Runtime
	// mask scrubs console output (nil: only the always-masked field names); set by the
	// surface that binds a system's secrets, before the script runs.
	mask *masker
	stop func() bool
	done func()
	host hostSide
}

// newRun creates the host side of a run bound to ctx, with the baseline host bindings (console,
// cache). Call close when done.
func (e *Engine) newRun(ctx context.Context, logAttrs ...any) *run {
	vm := goja.New()
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	r := &run{e: e, ctx: ctx, vm: vm, stop: func() bool { return true }, done: func() {}}
	r.installHostBaseline(logAttrs)
	return r
}

func (r *run) close() {
	r.stop()
	r.done()
}

// exec runs a compiled program and settles a returned promise (jobs run when the program
// returns; one still pending then never settles).
func (r *run) exec(p *goja.Program) (goja.Value, error) {
	v, err := r.vm.RunProgram(p)
	if err != nil {
		return nil, err
	}
	return r.settle(v)
}

// call calls a function value (an envelope script) with one argument. A promise it returns
// is handed back as it is: the script awaits it.
func (r *run) call(fn goja.Value, arg goja.Value) (goja.Value, error) {
	f, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, errors.New("not a function")
	}
	return f(goja.Undefined(), arg)
}

// rethrow raises err inside the script from a host function: script exceptions and the
// uncatchable interrupts as they are, any other error as a catchable Error keeping err.
func (r *run) rethrow(err error) {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		panic(ex)
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		panic(ie)
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		panic(so)
	}
	panic(r.vm.NewGoError(err))
}

func (r *run) settle(v goja.Value) (goja.Value, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		res := p.Result()
		if o, ok := res.(*goja.Object); ok {
			if gv := o.Get("value"); gv != nil {
				if ge, ok := gv.Export().(error); ok {
					return nil, &scriptError{msg: res.String(), cause: ge}
				}
			}
		}
		return nil, &scriptError{msg: "uncaught (in promise) " + res.String()}
	}
	return nil, errNeverSettles
}

// scriptError is a rejection of a returned promise, carrying the Go error a host call threw.
type scriptError struct {
	msg   string
	cause error
}

func (e *scriptError) Error() string { return e.msg }
func (e *scriptError) Unwrap() error { return e.cause }

// toJSON serializes a script value as JSON.stringify does (undefined → null); a value that
// does not serialize (a BigInt, a cycle) is an error.
func (r *run) toJSON(v goja.Value) (out []byte, err error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return []byte("null"), nil
	}
	stringify, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		return nil, fmt.Errorf("the result is not serializable: %w", err)
	}
	if goja.IsUndefined(s) {
		return []byte("null"), nil
	}
	return []byte(s.String()), nil
}

// fromJSON turns JSON into a plain script value (null for empty).
func (r *run) fromJSON(raw []byte) goja.Value {
	if len(raw) == 0 {
		return goja.Null()
	}
	parse, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("parse"))
	v, err := parse(goja.Undefined(), r.vm.ToValue(string(raw)))
	if err != nil {
		return goja.Null()
	}
	return v
}

// Run-level classification (wire-integration §7): the first match wins.
type (
	// upstreamError is errors.upstream(message).
	upstreamError struct{ msg string }
	// transportError is a wire call that never completed or a system database that could not
	// be dialed.
	transportError struct{ err error }
	// authHookError is a failure of the outbound authentication of a request.
	authHookError struct{ err error }
	// kindError carries an API error and the failure kind it counts as (codes: config).
	kindError struct {
		kind string
		err  error
	}
)

func (e *upstreamError) Error() string  { return "upstream: " + e.msg }
func (e *transportError) Error() string { return "transport: " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }
func (e *authHookError) Error() string  { return "outbound auth: " + e.err.Error() }
func (e *authHookError) Unwrap() error  { return e.err }
func (e *kindError) Error() string      { return e.err.Error() }
func (e *kindError) Unwrap() error      { return e.err }

// Failure kinds (wire-integration §1); "" is success.
const (
	KindInputInvalid  = "input_invalid"
	KindOutputInvalid = "output_invalid"
	KindUpstream      = "upstream"
	KindTransport     = "transport"
	KindTimeout       = "timeout"
	KindCanceled      = "canceled"
	KindScript        = "script"
	KindConfig        = "config"
	KindAuth          = "auth"
	KindHandler       = "handler"
)

// classify maps a run's error to its failure kind and API error in the order of §7: canceled,
// timeout, upstream, outbound auth hook (config), transport, then script. ctx is the run's
// context: only its end is a timeout or a cancellation; a single HTTP call that outlived its
// own (system or per-call) timeout is a transport failure.
func classify(ctx context.Context, err error) (string, error) {
	var (
		up *upstreamError
		ah *authHookError
		tr *transportError
		ke *kindError
	)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return KindCanceled, ErrInvocationCanceled
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, errNeverSettles):
		return KindTimeout, ErrInvocationTimeout
	case errors.Is(err, errScriptsBusy):
		return KindTimeout, ErrScriptsBusy
	case errors.As(err, &up):
		return KindUpstream, ErrUpstreamFailed.WithArgs("message", up.msg)
	case errors.As(err, &ah):
		return KindConfig, detail(ErrInvalidAuthParams, ah.err.Error())
	case errors.As(err, &tr):
		return KindTransport, ErrTransportFailed
	case errors.As(err, &ke):
		return ke.kind, ke.err
	case errors.Is(err, errMemoryLimit), errors.Is(err, errCallDepth):
		return KindScript, detail(ErrScriptFailed, err.Error())
	}
	return KindScript, detail(ErrScriptFailed, scriptMessage(err))
}

// scriptMessage is the first line of a script error, without Go-side noise (for a coded
// error, its detail).
func scriptMessage(err error) string {
	if re, ok := rpc.AsError(err); ok && re.Args["detail"] != "" {
		return re.Args["detail"]
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// abandonGrace is how long a run whose context ended may still take to stop before its answer
// goes out without it. The worker is killed when the context ends, so only a host call that is
// slow to notice its context (a business handler) can outlast it.
const abandonGrace = 50 * time.Millisecond

// runBody compiles an adapter or auth script body and runs it in a worker bound to ctx (which
// carries the run's deadline); setup binds the surface's globals on the run's host side. It
// returns the result as JSON. Errors are unclassified: classify them with ctx.
//
// The answer comes at the deadline whatever the script is doing (issue #42 item 5): the worker
// is killed (SIGKILL) when ctx ends and reaped before the answer goes out, and once
// abandonGrace passed runBody returns ctx's error even if a host call of the run is still busy. State the setup shares with the caller must
// therefore be safe to use from both (wireTrace, the inbound outcome's lock). A run started
// inside a host call of another (an outbound auth script during an http call) runs on the same
// worker, nested.
func (e *Engine) runBody(ctx context.Context, name, body string, setup func(r *run) error, logAttrs ...any) (json.RawMessage, error) {
	if _, err := e.compile(shapeBody, name, body); err != nil {
		return nil, err
	}
	r := e.newRun(ctx, logAttrs...)
	defer r.close()
	if setup != nil {
		if err := setup(r); err != nil {
			return nil, err
		}
	}
	spec, err := r.spec(name, body)
	if err != nil {
		return nil, err
	}
	if p := procOf(ctx); p != nil {
		return p.exec(ctx, r, spec)
	}
	type result struct {
		out json.RawMessage
		err error
	}
	done := make(chan result, 1)
	h := &runHandle{}
	go func() {
		out, err := e.pool.run(ctx, r, spec, h)
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		return res.out, res.err
	case <-ctx.Done():
	}
	h.kill() // here too, so the worker is gone when the answer goes out
	grace := time.NewTimer(abandonGrace)
	defer grace.Stop()
	select {
	case res := <-done:
		return res.out, res.err
	case <-grace.C:
		e.log.WarnContext(ctx, "integration: a host call of a script run outlived its deadline; answered without it", logAttrs...)
		return nil, ctx.Err()
	}
}
