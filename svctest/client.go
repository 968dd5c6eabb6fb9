package svctest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// Response is the decoded answer of an /api call.
type Response struct {
	Status  int             // HTTP status
	Code    int             // envelope code
	Message string          // envelope message
	Data    json.RawMessage // envelope data ("null" when empty)
	Header  http.Header     // response headers
	Body    []byte          // the raw body
}

// DataAs decodes Data into v, failing the test on error.
func (r Response) DataAs(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("svctest: decode data %s: %v", r.Data, err)
	}
}

// CallOption adjusts one call.
type CallOption func(*callSetup)

type callSetup struct {
	principal *rpc.Principal
	token     string
	version   string
	header    http.Header
	meta      any
}

// As authenticates the call as p with a freshly minted access token.
func As(p *rpc.Principal) CallOption { return func(c *callSetup) { c.principal = p } }

// WithToken sends token as the Bearer credential.
func WithToken(token string) CallOption { return func(c *callSetup) { c.token = token } }

// WithVersion calls another version than v1.
func WithVersion(v string) CallOption { return func(c *callSetup) { c.version = v } }

// WithHeader adds a request header.
func WithHeader(key, value string) CallOption {
	return func(c *callSetup) {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Add(key, value)
	}
}

// WithMeta sets the envelope's meta object.
func WithMeta(meta any) CallOption { return func(c *callSetup) { c.meta = meta } }

// Call posts a JSON envelope to /api and decodes the answer. params may be nil.
func (s *Server) Call(t testing.TB, resource, action string, params any, opts ...CallOption) Response {
	t.Helper()
	cs := s.callSetup(t, opts)
	env := map[string]any{"resource": resource, "action": action, "version": cs.version}
	if params != nil {
		env["params"] = params
	}
	if cs.meta != nil {
		env["meta"] = cs.meta
	}
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatalf("svctest: encode envelope: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return s.send(t, req, cs)
}

// FilePart is one file of a multipart call.
type FilePart struct {
	Field    string
	Filename string
	Content  io.Reader
}

// CallMultipart posts a multipart envelope (fields resource, action, version, params as a JSON
// string) followed by the file parts, as the original client's upload_part does.
func (s *Server) CallMultipart(t testing.TB, resource, action string, params any, files []FilePart, opts ...CallOption) Response {
	t.Helper()
	cs := s.callSetup(t, opts)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for _, kv := range [][2]string{{"resource", resource}, {"action", action}, {"version", cs.version}} {
				if err := mw.WriteField(kv[0], kv[1]); err != nil {
					return err
				}
			}
			if params != nil {
				b, err := json.Marshal(params)
				if err != nil {
					return err
				}
				if err := mw.WriteField("params", string(b)); err != nil {
					return err
				}
			}
			for _, f := range files {
				w, err := mw.CreateFormFile(f.Field, f.Filename)
				if err != nil {
					return err
				}
				if _, err := io.Copy(w, f.Content); err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return s.send(t, req, cs)
}

// Do sends a raw request to the server (paths are relative to URL) and returns the response
// with its body read.
func (s *Server) Do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	if req.URL.Host == "" {
		u := *req.URL
		full, err := http.NewRequest(req.Method, s.URL+u.String(), req.Body)
		if err != nil {
			t.Fatal(err)
		}
		full.Header = req.Header
		req = full
	}
	resp, err := s.HTTP.Client().Do(req)
	if err != nil {
		t.Fatalf("svctest: %s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("svctest: read body: %v", err)
	}
	return resp, b
}

func (s *Server) callSetup(t testing.TB, opts []CallOption) callSetup {
	t.Helper()
	cs := callSetup{version: rpc.DefaultVersion}
	for _, o := range opts {
		o(&cs)
	}
	if cs.principal != nil && cs.token == "" {
		cs.token = s.Token(t, cs.principal)
	}
	return cs
}

func (s *Server) send(t testing.TB, req *http.Request, cs callSetup) Response {
	t.Helper()
	for k, vs := range cs.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if cs.token != "" {
		req.Header.Set("Authorization", "Bearer "+cs.token)
	}
	resp, body := s.Do(t, req)
	out := Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	var env struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Code == nil || env.Message == nil || env.Data == nil {
		t.Fatalf("svctest: %d response is not a {code, message, data} envelope: %s", resp.StatusCode, body)
	}
	out.Code, out.Message, out.Data = *env.Code, *env.Message, env.Data
	return out
}

// now is the server's current time (its fake clock, or the wall clock).
func (s *Server) now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	return time.Now()
}
