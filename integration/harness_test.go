package integration_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/svctest"
)

// create posts a create through /api as admin and returns the id.
func create(t *testing.T, srv *svctest.Server, resource string, params map[string]any) string {
	t.Helper()
	r := srv.Call(t, resource, "create", params, svctest.As(admin))
	var c struct{ ID string }
	if r.Code != 0 || json.Unmarshal(r.Data, &c) != nil || c.ID == "" {
		t.Fatalf("create %s %v: %d %s %s", resource, params, r.Code, r.Message, r.Data)
	}
	return c.ID
}

// defs are the ids of one system's definitions.
type defs struct{ system, contract, adapter string }

// define creates a system, a contract and an adapter of direction dir through /api. sys and
// contract are merged over defaults (codes from name).
func define(t *testing.T, srv *svctest.Server, name string, sys, contract map[string]any, dir, script string) defs {
	t.Helper()
	s := map[string]any{"code": name, "name": name}
	for k, v := range sys {
		s[k] = v
	}
	c := map[string]any{"code": name + ".op", "name": name}
	for k, v := range contract {
		c[k] = v
	}
	var d defs
	d.system = create(t, srv, systemR, s)
	d.contract = create(t, srv, contractR, c)
	d.adapter = create(t, srv, adapterR, map[string]any{"systemId": d.system, "contractId": d.contract, "direction": dir, "script": script})
	return d
}

// echo is the local HTTP server the outbound tests call. /echo answers the request it saw as
// JSON; /status/N answers N; /flaky answers 503 until its counter reaches fail; /slow waits
// for the caller to give up; /big answers n bytes; /envelope answers {"data": <body>}.
type echo struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []seenRequest
	flaky atomic.Int64
}

type seenRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   map[string]string `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func newEcho(t *testing.T) *echo {
	e := &echo{}
	e.Server = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.Close)
	return e
}

func (e *echo) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := seenRequest{Method: r.Method, Path: r.URL.Path, Query: map[string]string{}, Headers: map[string]string{}, Body: string(body)}
	for k, v := range r.URL.Query() {
		s.Query[k] = v[0]
	}
	for k, v := range r.Header {
		s.Headers[strings.ToLower(k)] = v[0]
	}
	e.mu.Lock()
	e.seen = append(e.seen, s)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.WriteHeader(code)
		w.Write([]byte(`{"status":` + strconv.Itoa(code) + `}`))
	case r.URL.Path == "/flaky":
		if e.flaky.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(s)
	case r.URL.Path == "/slow":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	case r.URL.Path == "/big":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("x", n)))
	case r.URL.Path == "/envelope":
		w.Write([]byte(`{"code":0,"data":` + string(body) + `}`))
	default:
		json.NewEncoder(w).Encode(s)
	}
}

func (e *echo) last() seenRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) == 0 {
		return seenRequest{}
	}
	return e.seen[len(e.seen)-1]
}

func (e *echo) count(path string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.seen {
		if s.Path == path {
			n++
		}
	}
	return n
}
