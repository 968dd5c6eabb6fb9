package integration

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Invoker calls a contract on the external system that serves it (wire-integration §7).
// *Service implements it; the host reaches it through svc.Running.Integration() (what svc.Server.Start returns).
type Invoker interface {
	Invoke(ctx context.Context, contract string, input any, opts ...InvokeOption) (*Result, error)
}

var _ Invoker = (*Service)(nil)

// InvokeOption adjusts one invocation.
type InvokeOption func(*invokeOptions)

type invokeOptions struct {
	system, route string
	routeSet      bool
	timeout       time.Duration
	cacheTTL      time.Duration
}

// WithSystem targets a system by code instead of resolving a route.
func WithSystem(code string) InvokeOption { return func(o *invokeOptions) { o.system = code } }

// WithRoute resolves the system under a route key (tenant, branch, area…); without it the
// default route "" is used. Combined with WithSystem it is 2607.
func WithRoute(key string) InvokeOption {
	return func(o *invokeOptions) { o.route, o.routeSet = key, true }
}

// WithTimeout bounds the script run, overriding the adapter's timeoutMs and run_timeout.
func WithTimeout(d time.Duration) InvokeOption { return func(o *invokeOptions) { o.timeout = d } }

// WithCache answers from an in-process cache of successful results for ttl, keyed by system,
// contract and canonical input; hits are neither counted nor logged.
func WithCache(ttl time.Duration) InvokeOption { return func(o *invokeOptions) { o.cacheTTL = ttl } }

// Result is a successful invocation.
type Result struct {
	output   json.RawMessage
	system   string
	duration time.Duration
	cached   bool
}

// Output is the script's schema-checked output as JSON.
func (r *Result) Output() json.RawMessage { return r.output }

// Decode unmarshals the output into v.
func (r *Result) Decode(v any) error { return json.Unmarshal(r.output, v) }

// System is the code of the system that served the call.
func (r *Result) System() string { return r.system }

// Duration is how long the run took (zero for a cache hit).
func (r *Result) Duration() time.Duration { return r.duration }

// Cached reports whether the result came from WithCache's cache.
func (r *Result) Cached() bool { return r.cached }

// InvocationError is a failed invocation: its failure kind (wire-integration §1) and the API
// error (code 2600–2629) it unwraps to, so errors.Is(err, ErrUpstreamFailed) holds and /api
// renders its code.
type InvocationError struct {
	Kind string
	Err  error
}

// Error returns the failure kind and the API error's message.
func (e *InvocationError) Error() string { return e.Kind + ": " + e.Err.Error() }

// Unwrap returns the API error.
func (e *InvocationError) Unwrap() error { return e.Err }

// Call invokes contract and decodes the output into T.
func Call[T any](ctx context.Context, inv Invoker, contract string, input any, opts ...InvokeOption) (T, error) {
	var out T
	res, err := inv.Invoke(ctx, contract, input, opts...)
	if err != nil {
		return out, err
	}
	err = res.Decode(&out)
	return out, err
}

// Invoke runs the outbound pipeline of wire-integration §7: target, definitions, cache, run,
// stats and log. Definition errors (2600–2607) are returned before anything runs and are not
// counted; run failures are *InvocationError.
func (s *Service) Invoke(ctx context.Context, contract string, input any, opts ...InvokeOption) (*Result, error) {
	var o invokeOptions
	for _, f := range opts {
		f(&o)
	}
	if o.system != "" && o.routeSet {
		return nil, ErrTargetAmbiguous
	}
	c, err := s.loadContract(ctx, contract, false)
	if err != nil {
		return nil, err
	}
	code := o.system
	if code == "" {
		if code, err = s.routes.Resolve(ctx, c, o.route); err != nil {
			return nil, err
		}
	}
	sys, err := s.loadSystem(ctx, code, false)
	if err != nil {
		return nil, err
	}
	ad, err := s.loadAdapter(ctx, sys.ID, c.ID, DirectionOutbound, false)
	if err != nil {
		return nil, err
	}
	in, err := canonical(input)
	if err != nil {
		return nil, err
	}
	cacheKey := sys.Code + "\x00" + c.Code + "\x00" + string(in)
	if o.cacheTTL > 0 {
		if out, ok := s.results.get(cacheKey); ok {
			return &Result{output: out, system: sys.Code, cached: true}, nil
		}
	}
	timeout := s.cfg.RunTimeout
	if ad.TimeoutMs > 0 {
		timeout = time.Duration(ad.TimeoutMs) * time.Millisecond
	}
	if o.timeout > 0 {
		timeout = o.timeout
	}
	start := s.clock()
	res := s.runOutbound(ctx, c, sys, ad.Script, in, timeout)
	d := s.clock().Sub(start)
	s.stats.Record(sys.Code, c.Code, DirectionOutbound, res.kind, d, s.describe(res.err))
	s.recorder.Record(ctx, Invocation{SystemCode: sys.Code, ContractCode: c.Code, Direction: DirectionOutbound,
		FailureKind: res.kind, Duration: d, Input: in, Output: res.output, Trace: res.trace, Err: s.describe(res.err), Secrets: res.secrets})
	if res.err != nil {
		return nil, &InvocationError{Kind: res.kind, Err: res.err}
	}
	if o.cacheTTL > 0 {
		s.results.set(cacheKey, res.output, o.cacheTTL)
	}
	return &Result{output: res.output, system: sys.Code, duration: d}, nil
}

// outcome is one run's result: output or a classified failure, the wire trace and the
// system's plaintext secrets (for scrubbing).
type outcome struct {
	output  json.RawMessage
	kind    string
	err     error
	trace   []HTTPExchange
	secrets []string
}

// runOutbound runs an outbound adapter script (§7 "Run"): input schema, fresh runtime with
// input, system, errors, codes, http (with a base URL) and sql (with a data source), then the
// output's serialization and schema.
func (s *Service) runOutbound(ctx context.Context, c *Contract, sys *System, script string, in json.RawMessage, timeout time.Duration) outcome {
	var res outcome
	res.secrets, _ = s.secrets.OpenSystem(sys)
	if err := s.schemas.check(c.InputSchema, in); err != nil {
		res.kind, res.err = KindInputInvalid, detail(ErrInputInvalid, err.Error())
		return res
	}
	ctx, release, err := s.engine.reserve(ctx)
	if err != nil {
		res.kind, res.err = classify(ctx, err)
		return res
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	trace := &wireTrace{}
	out, err := s.engine.runBody(rctx, "adapter.js", script, func(r *run) error {
		return s.bindOutbound(r, sys, in, trace)
	}, slog.String("system", sys.Code), slog.String("contract", c.Code))
	res.trace = trace.list()
	if err != nil {
		res.kind, res.err = classify(rctx, err)
		return res
	}
	if err := s.schemas.check(c.OutputSchema, out); err != nil {
		res.output = out
		res.kind, res.err = KindOutputInvalid, detail(ErrOutputInvalid, err.Error())
		return res
	}
	res.output = out
	return res
}

// bindOutbound installs the outbound surface. An assembly failure is kind config (or
// transport for an undialable system database).
func (s *Service) bindOutbound(r *run, sys *System, in json.RawMessage, trace *wireTrace) error {
	vm := r.vm
	r.setData("input", in, nil)
	if err := s.bindSystem(r, sys); err != nil {
		return err
	}
	errs := vm.NewObject()
	errs.Set("upstream", func(msg string) { r.rethrow(&upstreamError{msg: msg}) })
	if err := r.set("errors", errs); err != nil {
		return err
	}
	if err := s.newCodesLib(r.ctx, r, sys.ID).install(); err != nil {
		return err
	}
	if sys.BaseURL != "" {
		h, err := s.newHTTPLib(r, sys, trace)
		if err != nil {
			return err
		}
		h.install()
	}
	return s.bindSQL(r, sys)
}

// bindSystem binds system: {code, name, params} — never credentials — and has the run's
// console output masked as the invocation log is: the system's secrets scrubbed, credential
// and log.mask_fields fields masked.
func (s *Service) bindSystem(r *run, sys *System) error {
	r.mask = s.consoleMask(sys)
	raw, err := json.Marshal(map[string]any{"code": sys.Code, "name": sys.Name, "params": orEmpty(sys.Params)})
	if err != nil {
		return err
	}
	r.setData("system", raw, nil)
	return nil
}

// consoleMask is the masker of a run's console output for sys: its secrets (those that cannot
// be opened cannot be printed either), the credential fields and log.mask_fields; nothing cut.
func (s *Service) consoleMask(sys *System) *masker {
	secrets, _ := s.secrets.OpenSystem(sys)
	return newMasker(s.cfg.Log.MaskFields, math.MaxInt, secrets)
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// systemClient is what the http library needs of one system beyond the run: base URL, call
// timeout, retry policy and the outbound authentication with its params decrypted.
type systemClient struct {
	base        *url.URL
	callTimeout time.Duration
	retry       RetryPolicy
	auth        outboundAuth
}

// clientCacheSize bounds the per-system clients (wire-integration §7: LRU of 64).
const clientCacheSize = 64

// clientCache keeps the systemClient of recently used systems, keyed by a hash of the stored
// baseUrl, timeoutMs, retry and outboundAuth (sealed params): a saved change is a new key.
type clientCache struct {
	mu    sync.Mutex
	m     map[[32]byte]*systemClient
	order [][32]byte // least recently used first
}

func (c *clientCache) get(k [32]byte) *systemClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.m[k]
	if sc != nil {
		i := slices.Index(c.order, k)
		c.order = append(append(c.order[:i:i], c.order[i+1:]...), k)
	}
	return sc
}

func (c *clientCache) put(k [32]byte, sc *systemClient) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) >= clientCacheSize {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = sc
	c.order = append(c.order, k)
}

// systemClient returns the cached client of sys, building it on a miss: an unparsable base URL
// (2619), an unknown scheme (2614) or undecryptable params (2617) are kind config.
func (s *Service) systemClient(sys *System) (*systemClient, error) {
	raw, _ := json.Marshal([]any{sys.BaseURL, sys.TimeoutMs, sys.Retry, sys.OutboundAuth})
	key := sha256.Sum256(raw)
	if sc := s.clients.get(key); sc != nil {
		return sc, nil
	}
	base, err := url.Parse(sys.BaseURL)
	if err != nil {
		return nil, &kindError{kind: KindConfig, err: ErrInvalidBaseURL}
	}
	auth, err := s.outboundAuthOf(sys.OutboundAuth)
	if err != nil {
		return nil, err
	}
	sc := &systemClient{base: base, callTimeout: defaultCallTimeout, auth: auth}
	if sys.TimeoutMs > 0 {
		sc.callTimeout = time.Duration(sys.TimeoutMs) * time.Millisecond
	}
	if sys.Retry != nil {
		sc.retry = *sys.Retry
	}
	s.clients.put(key, sc)
	return sc, nil
}

// newHTTPLib builds the scoped http library of sys for one run: the system's client, and its
// envelope scripts for the worker (one that does not compile is a broken envelope, 2625, kind
// config).
func (s *Service) newHTTPLib(r *run, sys *System, trace *wireTrace) (*httpLib, error) {
	sc, err := s.systemClient(sys)
	if err != nil {
		return nil, err
	}
	h := &httpLib{r: r, client: s.httpClient, base: sc.base, callTimeout: sc.callTimeout, retry: sc.retry, auth: sc.auth,
		maxBody: int64(s.cfg.MaxResponseBody), trace: trace, clock: s.clock}
	if env := sys.OutboundEnvelope; env != nil {
		for _, e := range []struct {
			shape scriptShape
			body  string
		}{{shapeRequestEnvelope, env.Request}, {shapeResponseEnvelope, env.Response}} {
			if e.body == "" {
				continue
			}
			if _, err := s.engine.compile(e.shape, "envelope.js", e.body); err != nil {
				return nil, &kindError{kind: KindConfig, err: detail(ErrInvalidEnvelope, scriptMessage(err))}
			}
		}
		r.host.envelope = &wireEnvelope{Request: env.Request, Response: env.Response}
	}
	return h, nil
}

// resultCache is WithCache's in-process cache of successful outputs.
type resultCache struct {
	clock func() time.Time
	mu    sync.Mutex
	m     map[string]resultEntry
}

type resultEntry struct {
	out     json.RawMessage
	expires time.Time
}

// resultCacheMax bounds the cache; a full cache drops expired entries, then everything.
const resultCacheMax = 10000

func (c *resultCache) get(key string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !c.clock().Before(e.expires) {
		return nil, false
	}
	return e.out, true
}

func (c *resultCache) set(key string, out json.RawMessage, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	if len(c.m) >= resultCacheMax {
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= resultCacheMax {
			clear(c.m)
		}
	}
	c.m[key] = resultEntry{out: out, expires: now.Add(ttl)}
}

// newOutboundClient is the HTTP client of every system's calls: per-call timeouts come from
// contexts, redirects are followed (the scoped library's only mode). wrap, when set, wraps its
// transport (Options.WrapTransport).
func newOutboundClient(wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	var rt http.RoundTripper = t
	if wrap != nil {
		rt = wrap(rt)
	}
	return &http.Client{Transport: rt}
}
