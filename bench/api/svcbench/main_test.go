package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// discardWriter is a ResponseWriter that keeps the status and drops the body, so the benchmark
// measures svc's handler stack rather than a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func (w *discardWriter) WriteHeader(s int) { w.status = s }

// rewindBody is a request body that can be read again without allocating.
type rewindBody struct {
	b []byte
	r bytes.Reader
}

func (b *rewindBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *rewindBody) Close() error               { return nil }

// BenchmarkHandler is bench/api/run.sh's request through svc's whole root handler in process:
// outer middleware with the default access log, the mux, the engine, the JWT bearer strategy and
// bench/echo — everything but net/http's connection handling. Log lines go to /dev/null.
func BenchmarkHandler(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "application.toml")
	toml := "[svc.app]\nname = \"svc-bench\"\nport = 18089\n[svc.data_sources.primary]\ntype = \"sqlite\"\npath = \"" +
		filepath.Join(dir, "bench.db") + "\"\n[svc.security]\nsecret = \"" + svctest.TestSecret + "\"\n" +
		"[svc.api.rate_limit]\nmax = 1000000000\n"
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	user := &rpc.Principal{Type: rpc.PrincipalUser, ID: "bench", Name: "bench", Roles: []string{}}
	token, err := security.MintAccessToken(cfg, user, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	stderr := os.Stderr
	os.Stderr = devNull // the default logger writes to os.Stderr as it is at svc.New
	srv, err := svc.New(cfg, svc.WithModule(func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Resources: []rpc.Resource{{Name: "bench/echo", Ops: []rpc.Op{rpc.Handle("echo", echo)}}}}, nil
	}))
	os.Stderr = stderr
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer srv.Stop(ctx)
	h := srv.Handler()

	body := &rewindBody{b: []byte(`{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}`)}
	r, err := http.NewRequest(http.MethodPost, "/api", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Body, r.ContentLength = body, int64(len(body.b))
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		body.r.Reset(body.b)
		clear(w.h)
		h.ServeHTTP(w, r)
		n++
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(n), "cpu-ns/op")
	if w.status != http.StatusOK {
		b.Fatalf("status = %d", w.status)
	}
}

// processCPU is the process's user and system CPU time in nanoseconds, garbage collection
// included. On a shared machine it moves much less than wall time per operation.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
