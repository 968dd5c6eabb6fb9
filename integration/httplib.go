package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
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
}

// install binds http: the worker's scripted side (workerhttp.go) calls send with each request
// after its envelope; the parent sends it.
func (h *httpLib) install() {
	h.r.bindRaw("http", "send", func(args []json.RawMessage) (json.RawMessage, error) {
		var req wireRequest
		if len(args) != 1 || json.Unmarshal(args[0], &req) != nil {
			return nil, &jsError{name: "TypeError", msg: "http: malformed request"}
		}
		if req.HasBody && req.Body == nil {
			req.Body = []byte{}
		}
		return h.do(req, callTimeout(h.callTimeout, req.TimeoutMs))
	})
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

// idempotent methods may be retried (wire-integration §7).
var idempotent = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PUT": true, "DELETE": true, "TRACE": true}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway || code == http.StatusServiceUnavailable ||
		code == http.StatusGatewayTimeout
}

// do sends the call with the retry policy and answers the response.
func (h *httpLib) do(req wireRequest, timeout time.Duration) (json.RawMessage, error) {
	u, err := h.target(req.Path, req.Query)
	if err != nil {
		return nil, &jsError{name: "TypeError", msg: err.Error()}
	}
	attempts := max(h.retry.MaxAttempts, 1)
	if !idempotent[req.Method] {
		attempts = 1
	}
	backoff := msOr(h.retry.InitialBackoffMs, defaultInitialBackoff)
	maxBackoff := msOr(h.retry.MaxBackoffMs, defaultMaxBackoff)
	for attempt := 1; ; attempt++ {
		res, body, err := h.attempt(req.Method, u, req.Headers, req.Body, timeout)
		retry := attempt < attempts && (err != nil && !isAuthHook(err) || res != nil && retryableStatus(res.StatusCode))
		if !retry {
			if err != nil {
				return nil, err
			}
			return json.Marshal(wireResponse{Status: res.StatusCode, URL: u.String(), Headers: flatHeaders(res.Header), Body: body})
		}
		t := time.NewTimer(backoff)
		select {
		case <-h.r.ctx.Done():
			t.Stop()
			return nil, &transportError{err: h.r.ctx.Err()}
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
