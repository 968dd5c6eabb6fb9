package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
)

var quiet = slog.New(slog.DiscardHandler)

func TestStartModulesRollsBackInReverse(t *testing.T) {
	var log []string
	mod := func(name string, startErr error) Module {
		return Module{
			Name:  name,
			Start: func(context.Context) error { log = append(log, "start "+name); return startErr },
			Stop:  func(context.Context) error { log = append(log, "stop "+name); return nil },
		}
	}
	boom := errors.New("boom")
	err := StartModules(context.Background(), quiet, []Module{mod("a", nil), mod("b", nil), mod("c", boom), mod("d", nil)})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "module c") {
		t.Fatalf("StartModules error = %v, want boom naming module c", err)
	}
	want := []string{"start a", "start b", "start c", "stop b", "stop a"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("lifecycle (-want +got):\n%s", diff)
	}
}

func TestStopModulesStopsAllAndJoinsErrors(t *testing.T) {
	var stopped []string
	e1, e2 := errors.New("e1"), errors.New("e2")
	mods := []Module{
		{Name: "a", Stop: func(context.Context) error { stopped = append(stopped, "a"); return e1 }},
		{Name: "b"},
		{Name: "c", Stop: func(context.Context) error { stopped = append(stopped, "c"); return e2 }},
	}
	err := StopModules(context.Background(), quiet, mods)
	if !errors.Is(err, e1) || !errors.Is(err, e2) {
		t.Errorf("StopModules error = %v, want both e1 and e2", err)
	}
	if diff := cmp.Diff([]string{"c", "a"}, stopped); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
}

func TestWorkersRecoverPanicsAndStop(t *testing.T) {
	var loops, ticks atomic.Int64
	ws := StartWorkers(context.Background(), quiet, []Worker{
		{Name: "loop", Run: func(ctx context.Context) error {
			if loops.Add(1) == 1 {
				panic("first run panics")
			}
			<-ctx.Done()
			return nil
		}},
		{Name: "tick", Interval: time.Millisecond, Run: func(context.Context) error {
			ticks.Add(1)
			return errors.New("keeps failing")
		}},
	})
	testservice.Eventually(t, 5*time.Second, func() bool { return loops.Load() >= 2 && ticks.Load() >= 3 },
		"the loop worker restarted after its panic and the interval worker kept ticking after errors")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ws.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestCollectWorkersPrefixesModuleName(t *testing.T) {
	got := CollectWorkers([]Module{{Name: "storage", Workers: []Worker{{Name: "sweeper"}}}})
	if len(got) != 1 || got[0].Name != "storage.sweeper" {
		t.Errorf("CollectWorkers = %+v, want storage.sweeper", got)
	}
}

func newTestHandler(t *testing.T, cfg HandlerConfig) http.Handler {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHandlerHeadersAndRequestInfo(t *testing.T) {
	var seen rpc.RequestInfo
	h := newTestHandler(t, HandlerConfig{Modules: []Module{{Name: "m", Routes: []Route{
		{Pattern: "GET /echo", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = rpc.RequestInfoFrom(r.Context())
			_, _ = io.WriteString(w, "hi")
		})},
		{Pattern: "GET /cached", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "public, max-age=60")
		})},
	}}}})

	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/echo", nil)
	req.RemoteAddr = "192.0.2.7:1234"
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
	if got := rec.Header().Get("Cache-Control"); got != defaultCacheControl {
		t.Errorf("Cache-Control = %q, want the no-store default", got)
	}
	id := rec.Header().Get("X-Request-Id")
	if len(id) != 36 || seen.ID != id {
		t.Errorf("X-Request-Id = %q, handler saw %q; want one UUID", id, seen.ID)
	}
	if seen.ClientIP != "192.0.2.7" {
		t.Errorf("client IP = %q, want 192.0.2.7", seen.ClientIP)
	}

	rec = httptest.NewRecorder()
	req = httptest.NewRequest("GET", "/cached", nil)
	req.Header.Set("X-Request-ID", "gateway-abc")
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get("Cache-Control"); got != "public, max-age=60" {
		t.Errorf("Cache-Control = %q, want the handler's own", got)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "gateway-abc" {
		t.Errorf("X-Request-Id = %q, want the incoming id kept", got)
	}
}

func TestHandlerRecoversPanics(t *testing.T) {
	h := newTestHandler(t, HandlerConfig{Modules: []Module{{Name: "m", Routes: []Route{
		{Pattern: "GET /boom", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })},
	}}}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"code":1900`) {
		t.Errorf("panic answered %d %s, want 500 with code 1900", rec.Code, rec.Body)
	}
}

// TestHandlerFallback: what no route takes answers the envelope (wire-core §1.5): 404/1200 for
// an unknown path, 405/1900 with Allow for a known path and another method; /api/ reaches the
// engine like /api; a module that registers "/" keeps it.
func TestHandlerFallback(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "api") })
	h := newTestHandler(t, HandlerConfig{API: api, Modules: []Module{{Name: "m", Routes: []Route{
		{Pattern: "GET /things/{id}", Handler: http.NotFoundHandler()},
		{Pattern: "DELETE /things/{id}", Handler: http.NotFoundHandler()},
	}}}})
	for _, tt := range []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/nope", 404, `{"code":1200,"message":"not_found","data":null}`, ""},
		{"POST", "/things/7", 405, `{"code":1900,"message":"method_not_allowed","data":null}`, "GET, HEAD, DELETE"},
		{"PUT", "/healthz", 405, `{"code":1900,"message":"method_not_allowed","data":null}`, "GET, HEAD"},
		{"POST", "/api/", 200, "api", ""},
		{"POST", "/api/x", 404, `{"code":1200,"message":"not_found","data":null}`, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || rec.Body.String() != tt.body || rec.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s = %d %s (Allow %q), want %d %s (Allow %q)", tt.method, tt.path, rec.Code, rec.Body,
				rec.Header().Get("Allow"), tt.status, tt.body, tt.allow)
		}
	}

	own := newTestHandler(t, HandlerConfig{Modules: []Module{{Name: "spa", Routes: []Route{
		{Pattern: "/", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "spa") })},
	}}}})
	rec := httptest.NewRecorder()
	own.ServeHTTP(rec, httptest.NewRequest("GET", "/anything", nil))
	if rec.Body.String() != "spa" {
		t.Errorf("module's own / answered %q, want spa", rec.Body)
	}
}

func TestHandlerRejectsConflictingRoutes(t *testing.T) {
	_, err := NewHandler(HandlerConfig{Logger: quiet, Modules: []Module{
		{Name: "a", Routes: []Route{{Pattern: "GET /x", Handler: http.NotFoundHandler()}}},
		{Name: "b", Routes: []Route{{Pattern: "GET /x", Handler: http.NotFoundHandler()}}},
	}})
	if err == nil || !strings.Contains(err.Error(), "module b") {
		t.Errorf("NewHandler error = %v, want a conflict naming module b", err)
	}
}

func TestCORS(t *testing.T) {
	h := newTestHandler(t, HandlerConfig{CORSEnabled: true, CORSOrigins: []string{"https://app.example.com"}})
	tests := []struct {
		name, method, origin string
		wantStatus           int
		wantAllow            string
	}{
		{"allowed preflight", "OPTIONS", "https://app.example.com", http.StatusNoContent, "https://app.example.com"},
		{"foreign origin", "OPTIONS", "https://evil.example.com", http.StatusMethodNotAllowed, ""},
		{"allowed simple", "GET", "https://app.example.com", http.StatusOK, "https://app.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/healthz", nil)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("Allow-Origin = %q, want %q", got, tt.wantAllow)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	var down atomic.Bool
	h := newTestHandler(t, HandlerConfig{Ready: func(context.Context) error {
		if down.Load() {
			return errors.New("db down")
		}
		return nil
	}})
	for _, tt := range []struct {
		down bool
		want int
	}{{false, 200}, {true, 503}} {
		down.Store(tt.down)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		if rec.Code != tt.want {
			t.Errorf("readyz with down=%v = %d, want %d", tt.down, rec.Code, tt.want)
		}
	}
}

func TestServeDrainsInFlightRequests(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	h := newTestHandler(t, HandlerConfig{Modules: []Module{{Name: "m", Routes: []Route{
		{Pattern: "GET /slow", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-release
			_, _ = io.WriteString(w, "finished")
		})},
	}}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, 10*time.Second, quiet) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-started
	cancel() // SIGTERM arrives while the request is in flight
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) { // wait until the server stops accepting
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	r := <-got
	if r.err != nil || r.body != "finished" {
		t.Errorf("in-flight request got %q, %v; want it to finish", r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v, want a clean shutdown", err)
	}
}

// TestHandlerConnect (issue #11 item 8): CONNECT requests answer the envelope like any method no
// route takes — ServeMux would answer a CONNECT to "host:port" or "*" itself, in plain text.
func TestHandlerConnect(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "api") })
	srv := httptest.NewServer(newTestHandler(t, HandlerConfig{API: api}))
	defer srv.Close()
	notFound := `{"code":1200,"message":"not_found","data":null}`
	for _, tt := range []struct {
		target string
		status int
		body   string
		allow  string
	}{
		{"*", 404, notFound, ""},
		{"example.com:443", 404, notFound, ""},
		{"/nope", 404, notFound, ""},
		{"/healthz", 405, `{"code":1900,"message":"method_not_allowed","data":null}`, "GET, HEAD"},
		{"/api", 200, "api", ""}, // the engine's own answer (405/1900 with Allow: POST in the server)
	} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", tt.target)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			t.Fatalf("CONNECT %s: %v", tt.target, err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != tt.status || string(body) != tt.body || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("CONNECT %s = %d %s (Allow %q), want %d %s (Allow %q)", tt.target, resp.StatusCode, body,
				resp.Header.Get("Allow"), tt.status, tt.body, tt.allow)
		}
	}
}
