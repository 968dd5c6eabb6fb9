package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// wireRequest is one http call of a script after its request envelope, as the worker hands it
// to the parent, which resolves the path on the system's base URL, authenticates, sends it with
// the retry policy and traces it (httplib.go).
type wireRequest struct {
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Headers   map[string]string `json:"headers"`
	Query     map[string]string `json:"query"`
	Body      []byte            `json:"body,omitempty"`
	HasBody   bool              `json:"hasBody,omitempty"`
	TimeoutMs int64             `json:"timeoutMs,omitempty"`
}

// wireResponse is the parent's answer to a wireRequest.
type wireResponse struct {
	Status  int               `json:"status"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body"`
}

// workerHTTP is the scoped http library on the worker's side (wire-integration §7): it reads
// the script's options, runs the envelope scripts in the run's runtime and builds the response
// object; the wire call itself is the parent's (host call http.send).
type workerHTTP struct {
	w           *worker
	r           *run
	wrap, parse goja.Value // envelope functions, nil when absent
}

// logicalRequest is a call as the script and the request envelope see it.
type logicalRequest struct {
	Method  string
	Path    string
	Headers map[string]string
	Query   map[string]string
	Body    goja.Value
}

// bindHTTP binds http (fetch, get, delete, post, put, patch), compiling the envelope scripts
// into this run.
func (w *worker) bindHTTP(r *run, env *wireEnvelope) error {
	h := &workerHTTP{w: w, r: r}
	if env != nil {
		var err error
		if h.wrap, err = w.envelopeFunc(r, shapeRequestEnvelope, env.Request); err != nil {
			return err
		}
		if h.parse, err = w.envelopeFunc(r, shapeResponseEnvelope, env.Response); err != nil {
			return err
		}
	}
	vm := r.vm
	o := vm.NewObject()
	o.Set("fetch", func(c goja.FunctionCall) goja.Value { return h.fetch(c.Argument(0), c.Argument(1), "") })
	for _, m := range []string{"get", "delete"} {
		method := strings.ToUpper(m)
		o.Set(m, func(c goja.FunctionCall) goja.Value { return h.fetch(c.Argument(0), c.Argument(1), method) })
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
			return h.fetch(c.Argument(0), opts, method)
		})
	}
	return vm.Set("http", o)
}

// envelopeFunc compiles an envelope script into a function of this run (nil when empty); the
// parent checked that it compiles.
func (w *worker) envelopeFunc(r *run, shape scriptShape, body string) (goja.Value, error) {
	if body == "" {
		return nil, nil
	}
	p, err := w.e.compile(shape, "envelope.js", body)
	if err != nil {
		return nil, &kindError{kind: KindConfig, err: detail(ErrInvalidEnvelope, scriptMessage(err))}
	}
	return r.vm.RunProgram(p)
}

// fetch runs one call (the parent retries it) and returns the response object (the response
// envelope's value when there is one). Transport failures throw.
func (h *workerHTTP) fetch(pathV, optsV goja.Value, method string) goja.Value {
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
	if method != "" {
		req.Method = method
	}
	req.Method = strings.ToUpper(req.Method)
	stringMap(get("headers"), req.Headers)
	stringMap(get("query"), req.Query)
	req.Body = get("body")
	if v := get("redirect"); v != nil && v.String() != "follow" {
		panic(vm.NewTypeError("http: redirect must be follow"))
	}
	var timeoutMs int64
	if v := get("timeout"); v != nil {
		timeoutMs = max(v.ToInteger(), 0)
	}
	envelope := true
	if v := get("envelope"); v != nil && !v.ToBoolean() {
		envelope = false
	}
	if envelope && h.wrap != nil {
		req = h.wrapRequest(req)
	}
	resp := h.send(req, timeoutMs)
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
func (h *workerHTTP) wrapRequest(req logicalRequest) logicalRequest {
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

// body encodes a script body: strings and bytes verbatim, anything else as JSON.
func (h *workerHTTP) body(v goja.Value, headers map[string]string) ([]byte, bool, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, false, nil
	}
	switch t := v.Export().(type) {
	case string:
		return []byte(t), true, nil
	case goja.ArrayBuffer:
		return t.Bytes(), true, nil
	case []byte:
		return t, true, nil
	}
	b, err := h.r.toJSON(v)
	if err != nil {
		return nil, false, err
	}
	if !hasHeader(headers, "content-type") {
		headers["Content-Type"] = "application/json"
	}
	return b, true, nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// send hands the call to the parent and builds the script's response object: status,
// statusText, ok, url, headers, body and text(), json(), arrayBuffer(). A non-2xx status is not
// an exception.
func (h *workerHTTP) send(req logicalRequest, timeoutMs int64) goja.Value {
	vm := h.r.vm
	payload, has, err := h.body(req.Body, req.Headers)
	if err != nil {
		panic(vm.NewTypeError(err.Error()))
	}
	raw, _ := json.Marshal(wireRequest{Method: req.Method, Path: req.Path, Headers: req.Headers, Query: req.Query,
		Body: payload, HasBody: has, TimeoutMs: timeoutMs})
	reply := h.w.roundTrip(&wireMessage{Op: "call", Object: "http", Method: "send", Args: []json.RawMessage{raw}})
	if reply.Err != nil {
		panic(h.w.thrown(h.r, reply.Err))
	}
	var res wireResponse
	if err := json.Unmarshal(reply.Value, &res); err != nil {
		panic(vm.NewTypeError("http: " + err.Error()))
	}
	o := vm.NewObject()
	o.Set("status", res.Status)
	o.Set("statusText", http.StatusText(res.Status))
	o.Set("ok", res.Status >= 200 && res.Status < 300)
	o.Set("url", res.URL)
	o.Set("headers", res.Headers)
	text := string(res.Body)
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
	o.Set("arrayBuffer", func() goja.Value { return vm.ToValue(vm.NewArrayBuffer(append([]byte(nil), res.Body...))) })
	return o
}

// callTimeout is a call's timeout: the system's, shortened by the call's own option.
func callTimeout(system time.Duration, ms int64) time.Duration {
	if ms > 0 && time.Duration(ms)*time.Millisecond < system {
		return time.Duration(ms) * time.Millisecond
	}
	return system
}
