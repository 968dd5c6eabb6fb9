package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// Defaults of the scoped http library (wire-integration §7).
const (
	defaultCallTimeout    = 30 * time.Second
	defaultInitialBackoff = 200 * time.Millisecond
	defaultMaxBackoff     = 2 * time.Second
)

// wireTrace collects a run's HTTP exchanges, masked only when stored or answered.
type wireTrace struct {
	mu sync.Mutex
	x  []HTTPExchange
}

func (t *wireTrace) add(x HTTPExchange) {
	t.mu.Lock()
	t.x = append(t.x, x)
	t.mu.Unlock()
}

func (t *wireTrace) list() []HTTPExchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]HTTPExchange(nil), t.x...)
}

// httpLib is the scoped http library of one run: relative paths on the system's base URL, its
// authentication, envelope, call timeout and retry policy.
type httpLib struct {
	r           *run
	client      *http.Client
	base        *url.URL
	callTimeout time.Duration
	retry       RetryPolicy
	auth        outboundAuth
	maxBody     int64
	trace       *wireTrace
	clock       func() time.Time
	wrap, parse goja.Value // envelope functions, nil when absent
}

// logicalRequest is a call as the script and the request envelope see it.
type logicalRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Query   map[string]string `json:"query"`
	Body    goja.Value        `json:"-"`
}

// install binds http (fetch, get, delete, post, put, patch).
func (h *httpLib) install() error {
	vm := h.r.vm
	o := vm.NewObject()
	o.Set("fetch", func(c goja.FunctionCall) goja.Value { return h.fetch(c.Argument(0), c.Argument(1), nil) })
	for _, m := range []string{"get", "delete"} {
		method := strings.ToUpper(m)
		o.Set(m, func(c goja.FunctionCall) goja.Value { return h.fetch(c.Argument(0), c.Argument(1), &method) })
	}
	for _, m := range []string{"post", "put", "patch"} {
		method := strings.ToUpper(m)
		o.Set(m, func(c goja.FunctionCall) goja.Value {
			opts := vm.NewObject()
			if o, ok := c.Argument(2).(*goja.Object); ok {
				for _, k := range o.Keys() {
					opts.Set(k, o.Get(k))
				}
			}
			opts.Set("body", c.Argument(1))
			return h.fetch(c.Argument(0), opts, &method)
		})
	}
	return vm.Set("http", o)
}

// fetch runs one call (with its retries) and returns the response object (the response
// envelope's value when there is one). Transport failures throw.
func (h *httpLib) fetch(pathV, optsV goja.Value, method *string) goja.Value {
	vm := h.r.vm
	opts, _ := optsV.(*goja.Object)
	get := func(k string) goja.Value {
		if opts == nil {
			return nil
		}
		v := opts.Get(k)
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return nil
		}
		return v
	}
	req := logicalRequest{Method: "GET", Path: pathV.String(), Headers: map[string]string{}, Query: map[string]string{}}
	if v := get("method"); v != nil {
		req.Method = v.String()
	}
	if method != nil {
		req.Method = *method
	}
	req.Method = strings.ToUpper(req.Method)
	stringMap(get("headers"), req.Headers)
	stringMap(get("query"), req.Query)
	req.Body = get("body")
	if v := get("redirect"); v != nil && v.String() != "follow" {
		panic(vm.NewTypeError("http: redirect must be follow"))
	}
	timeout := h.callTimeout
	if v := get("timeout"); v != nil {
		if ms := v.ToInteger(); ms > 0 && time.Duration(ms)*time.Millisecond < timeout {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	envelope := true
	if v := get("envelope"); v != nil && !v.ToBoolean() {
		envelope = false
	}
	if envelope && h.wrap != nil {
		req = h.wrapRequest(req)
	}
	resp := h.do(req, timeout)
	if envelope && h.parse != nil {
		v, err := h.r.call(h.parse, resp)
		if err != nil {
			h.r.rethrow(err)
		}
		return v
	}
	return resp
}

// wrapRequest runs the request envelope: it receives the logical request and returns an
// object whose fields override it.
func (h *httpLib) wrapRequest(req logicalRequest) logicalRequest {
	vm := h.r.vm
	in := vm.NewObject()
	in.Set("method", req.Method)
	in.Set("path", req.Path)
	in.Set("headers", req.Headers)
	in.Set("query", req.Query)
	in.Set("body", req.Body)
	out, err := h.r.call(h.wrap, in)
	if err != nil {
		h.r.rethrow(err)
	}
	o, ok := out.(*goja.Object)
	if !ok || goja.IsNull(out) {
		h.r.rethrow(&kindError{kind: KindConfig, err: detail(ErrInvalidEnvelope, "the request script must return an object")})
	}
	if v := o.Get("method"); v != nil && !goja.IsUndefined(v) {
		req.Method = strings.ToUpper(v.String())
	}
	if v := o.Get("path"); v != nil && !goja.IsUndefined(v) {
		req.Path = v.String()
	}
	if v := o.Get("headers"); v != nil && !goja.IsUndefined(v) {
		req.Headers = map[string]string{}
		stringMap(v, req.Headers)
	}
	if v := o.Get("query"); v != nil && !goja.IsUndefined(v) {
		req.Query = map[string]string{}
		stringMap(v, req.Query)
	}
	if v := o.Get("body"); v != nil {
		req.Body = v
	}
	return req
}

// stringMap copies an object's properties as strings into m.
func stringMap(v goja.Value, m map[string]string) {
	o, ok := v.(*goja.Object)
	if !ok {
		return
	}
	for _, k := range o.Keys() {
		if e := o.Get(k); e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			m[k] = e.String()
		}
	}
}

// target is the absolute URL of a relative path on the base URL; absolute URLs and any host
// are refused.
func (h *httpLib) target(path string, query map[string]string) (*url.URL, error) {
	rel, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("http: invalid path %q", path)
	}
	if rel.IsAbs() || rel.Host != "" || strings.HasPrefix(path, "//") {
		return nil, fmt.Errorf("http: path must be relative to the system's base URL: %q", path)
	}
	u := *h.base
	u.Path = strings.TrimSuffix(h.base.Path, "/") + "/" + strings.TrimPrefix(rel.Path, "/")
	u.RawPath = ""
	q := h.base.Query()
	for k, v := range rel.Query() {
		q[k] = v
	}
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q.Set(k, query[k])
	}
	u.RawQuery = q.Encode()
	return &u, nil
}

// body encodes a script body: strings and bytes verbatim, anything else as JSON.
func (h *httpLib) body(v goja.Value, headers map[string]string) ([]byte, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	switch t := v.Export().(type) {
	case string:
		return []byte(t), nil
	case goja.ArrayBuffer:
		return t.Bytes(), nil
	case []byte:
		return t, nil
	}
	b, err := h.r.toJSON(v)
	if err != nil {
		return nil, err
	}
	if !hasHeader(headers, "content-type") {
		headers["Content-Type"] = "application/json"
	}
	return b, nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// idempotent methods may be retried (wire-integration §7).
var idempotent = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PUT": true, "DELETE": true, "TRACE": true}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway || code == http.StatusServiceUnavailable ||
		code == http.StatusGatewayTimeout
}

// do sends the call with the retry policy and returns the script's response object.
func (h *httpLib) do(req logicalRequest, timeout time.Duration) goja.Value {
	vm := h.r.vm
	u, err := h.target(req.Path, req.Query)
	if err != nil {
		panic(vm.NewTypeError(err.Error()))
	}
	payload, err := h.body(req.Body, req.Headers)
	if err != nil {
		panic(vm.NewTypeError(err.Error()))
	}
	attempts := max(h.retry.MaxAttempts, 1)
	if !idempotent[req.Method] {
		attempts = 1
	}
	backoff := msOr(h.retry.InitialBackoffMs, defaultInitialBackoff)
	maxBackoff := msOr(h.retry.MaxBackoffMs, defaultMaxBackoff)
	for attempt := 1; ; attempt++ {
		res, body, err := h.attempt(req.Method, u, req.Headers, payload, timeout)
		retry := attempt < attempts && (err != nil && !isAuthHook(err) || res != nil && retryableStatus(res.StatusCode))
		if !retry {
			if err != nil {
				panic(vm.NewGoError(err))
			}
			return h.response(res, u, body)
		}
		t := time.NewTimer(backoff)
		select {
		case <-h.r.ctx.Done():
			t.Stop()
			panic(vm.NewGoError(&transportError{err: h.r.ctx.Err()}))
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func msOr(ms int, def time.Duration) time.Duration {
	if ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

func isAuthHook(err error) bool {
	var ah *authHookError
	return errors.As(err, &ah)
}

// attempt sends one request and traces it. Errors are transport or auth-hook markers.
func (h *httpLib) attempt(method string, u *url.URL, headers map[string]string, payload []byte, timeout time.Duration) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(h.r.ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(payload))
	if err != nil {
		return nil, nil, &transportError{err: err}
	}
	if payload == nil {
		hreq.Body = http.NoBody
	}
	for k, v := range headers {
		hreq.Header.Set(k, v)
	}
	if h.auth != nil {
		if err := h.auth(h.r, hreq, payload); err != nil {
			return nil, nil, &authHookError{err: err}
		}
	}
	x := HTTPExchange{Method: method, URL: hreq.URL.String(), RequestHeaders: flatHeaders(hreq.Header), RequestBody: string(payload)}
	start := h.clock()
	res, err := h.client.Do(hreq)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(res.Body, h.maxBody+1))
		res.Body.Close()
		if err == nil && int64(len(body)) > h.maxBody {
			err = fmt.Errorf("the response body exceeds svc.integration.max_response_body (%d bytes)", h.maxBody)
		}
		x.Status, x.ResponseHeaders, x.ResponseBody = res.StatusCode, flatHeaders(res.Header), string(body)
	}
	x.DurationMs = h.clock().Sub(start).Milliseconds()
	if err != nil {
		x.Error = err.Error()
		h.trace.add(x)
		return nil, nil, &transportError{err: err}
	}
	h.trace.add(x)
	return res, body, nil
}

// flatHeaders lower-cases names and joins multiple values with ", ".
func flatHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}

// response is the script's view of a response: status, statusText, ok, url, headers, body and
// text(), json(), arrayBuffer(). A non-2xx status is not an exception.
func (h *httpLib) response(res *http.Response, u *url.URL, body []byte) goja.Value {
	vm := h.r.vm
	o := vm.NewObject()
	o.Set("status", res.StatusCode)
	o.Set("statusText", http.StatusText(res.StatusCode))
	o.Set("ok", res.StatusCode >= 200 && res.StatusCode < 300)
	o.Set("url", u.String())
	o.Set("headers", flatHeaders(res.Header))
	text := string(body)
	o.Set("body", text)
	o.Set("text", func() string { return text })
	o.Set("json", func() goja.Value {
		parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
		v, err := parse(goja.Undefined(), vm.ToValue(text))
		if err != nil {
			h.r.rethrow(err)
		}
		return v
	})
	o.Set("arrayBuffer", func() goja.Value { return vm.ToValue(vm.NewArrayBuffer(append([]byte(nil), body...))) })
	return o
}
