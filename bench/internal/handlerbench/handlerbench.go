// Package handlerbench runs one prepared request through an http.Handler in a benchmark loop,
// for the in-process benchmarks of bench/api and bench/real: the response is dropped, the body
// is rewound without allocating, and the process's CPU time per request is reported next to
// wall time (on a shared machine it moves much less).
package handlerbench

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
)

// Start builds and starts a server on cfg with its default logger writing to /dev/null (the
// default logger writes to os.Stderr as it is at svc.New), and stops it when the benchmark ends.
func Start(b *testing.B, cfg *config.Config, opts ...svc.Option) *svc.Running {
	b.Helper()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { devNull.Close() })
	stderr := os.Stderr
	os.Stderr = devNull
	srv, err := svc.New(cfg, opts...)
	os.Stderr = stderr
	if err != nil {
		b.Fatal(err)
	}
	running, err := srv.Start(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return running
}

// Run serves a POST /api with body and the given headers through h b.N times and reports
// allocations and the metric cpu-ns/op. It fails the benchmark unless the last answer was 200.
func Run(b *testing.B, h http.Handler, body string, header http.Header) {
	b.Helper()
	rb := &rewindBody{b: []byte(body)}
	r, err := http.NewRequest(http.MethodPost, "/api", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header = header.Clone()
	r.Body, r.ContentLength = rb, int64(len(rb.b))
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	cpu0 := ProcessCPU(b)
	n := 0
	for b.Loop() {
		rb.r.Reset(rb.b)
		clear(w.h)
		h.ServeHTTP(w, r)
		n++
	}
	b.ReportMetric(float64(ProcessCPU(b)-cpu0)/float64(n), "cpu-ns/op")
	if w.status != http.StatusOK {
		b.Fatalf("status = %d", w.status)
	}
}

// discardWriter is a ResponseWriter that keeps the status and drops the body, so a benchmark
// measures the handler stack rather than a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

// SetReadDeadline accepts the body idle timeout's deadlines as net/http's writer does (without
// it, http.ResponseController would build an error per call, which the real server never does).
func (w *discardWriter) SetReadDeadline(time.Time) error { return nil }

// rewindBody is a request body that can be read again without allocating.
type rewindBody struct {
	b []byte
	r bytes.Reader
}

func (b *rewindBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *rewindBody) Close() error               { return nil }

// ProcessCPU is the process's user and system CPU time in nanoseconds, garbage collection
// included.
func ProcessCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
