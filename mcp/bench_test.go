package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// echoParams and the bench/echo operation are the cheapest /api operation there is, so the
// comparison below shows the endpoint's whole overhead, not a database's time.
type echoParams struct {
	A int `json:"a"`
}

func echo(_ context.Context, _ rpc.Call, p echoParams) (echoParams, error) { return p, nil }

// benchServer is a server with bench/echo, operation tools and no effective rate limit.
func benchServer(b *testing.B) (*svctest.Server, string) {
	mod := func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Resources: []rpc.Resource{{Name: "bench", Ops: []rpc.Op{rpc.Handle("echo", echo)}}}}, nil
	}
	srv := newServer(b, config.SQLite, svctest.WithOptions(svc.WithModule(mod)),
		svctest.WithConfig(func(c *config.Config) { c.API.RateLimit.Max = 1 << 30 }))
	return srv, srv.Token(b, svctest.User("bench", "admin"))
}

// serve runs one request through the server's handler in process (no network, no client) and
// fails unless the body contains want.
func serve(b *testing.B, h http.Handler, path, token, body, want string, headers map[string]string) {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		b.Fatalf("%s: HTTP %d %s", path, rec.Code, rec.Body.String())
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCPU runs one request per iteration and reports the process CPU time per request
// (cpu-ns/op; it counts every goroutine the request starts, which ns/op of one goroutine does
// not).
func benchCPU(b *testing.B, path, body, want string, headers map[string]string, fast bool) {
	srv, token := benchServer(b)
	srv.MCP().SetFastPath(fast)
	h := srv.Handler()
	serve(b, h, path, token, body, want, headers)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for b.Loop() {
		serve(b, h, path, token, body, want, headers)
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkAPICall is bench/echo through POST /api.
func BenchmarkAPICall(b *testing.B) {
	benchCPU(b, "/api", `{"resource":"bench","action":"echo","version":"v1","params":{"a":7}}`, `"a":7`, nil, true)
}

// toolsCall is bench/echo as the MCP tool bench.echo, one stateless tools/call POST to /mcp, as
// the SDK's own client (v1.8.0) sends it: protocol 2026-07-28, the _meta triple and the
// Mcp-Method and Mcp-Name headers.
const toolsCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":` +
	`{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"v"},` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"bench.echo","arguments":{"a":7}}}`

var toolsCallHeaders = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "bench.echo"}

// legacyCall is the same call in protocol 2025-11-25 (clients that initialize).
const legacyCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench.echo","arguments":{"a":7}}}`

// BenchmarkToolsCall is toolsCall as the endpoint serves it (the fast path of fastcall.go).
// Issue #18's target: at most twice BenchmarkAPICall's cpu-ns/op.
func BenchmarkToolsCall(b *testing.B) {
	benchCPU(b, "/mcp", toolsCall, `{\"a\":7}`, toolsCallHeaders, true)
}

// BenchmarkToolsCallLegacy is legacyCall as the endpoint serves it.
func BenchmarkToolsCallLegacy(b *testing.B) {
	benchCPU(b, "/mcp", legacyCall, `{\"a\":7}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, true)
}

// BenchmarkToolsCallSDK is toolsCall through the SDK's stateless handler (the fast path off):
// what the fast path saves.
func BenchmarkToolsCallSDK(b *testing.B) {
	benchCPU(b, "/mcp", toolsCall, `{\"a\":7}`, toolsCallHeaders, false)
}
