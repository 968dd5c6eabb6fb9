package svc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/svctest"
)

// flushers counts the running flusher goroutines of the default logger (app.LogWriter).
func flushers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "app.(*LogWriter).loop")
}

// TestDefaultLoggerLeaksNoGoroutine: New starts nothing; embedding code that uses Start and Stop
// (not Run) gets the log flusher from Start and loses it at Stop. Not parallel: it counts the
// goroutines of the whole process.
func TestDefaultLoggerLeaksNoGoroutine(t *testing.T) {
	before := flushers()
	srv, err := svc.New(svctest.Config(t, config.SQLite)) // the default logger: no WithLogger
	if err != nil {
		t.Fatal(err)
	}
	if got := flushers(); got != before {
		t.Errorf("flusher goroutines after New = %d, want %d", got, before)
	}
	ctx := context.Background()
	if _, err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := flushers(); got != before+1 {
		t.Errorf("flusher goroutines after Start = %d, want %d", got, before+1)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	svctest.Eventually(t, 5*time.Second, func() bool { return flushers() == before },
		"the log flusher still runs after Stop")
}

// TestHostMessagesClash: a host module that defines a message key a built-in module already has
// fails the build, naming the key.
func TestHostMessagesClash(t *testing.T) {
	msgs := fstest.MapFS{
		"en/shop.json":    {Data: []byte(`{"storage_claim_expired":"mine"}`)},
		"zh-CN/shop.json": {Data: []byte(`{"storage_claim_expired":"我的"}`)},
	}
	srv, err := svc.New(svctest.Config(t, config.SQLite), svc.WithLogger(svctest.Logger()),
		svc.WithModule(func(app.Deps) (app.Module, error) { return app.Module{Name: "shop", Messages: msgs}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Start(context.Background())
	if !errors.Is(err, i18n.ErrDuplicateKey) || !strings.Contains(err.Error(), "storage_claim_expired") {
		t.Errorf("Start = %v, want ErrDuplicateKey naming the key", err)
	}
}

// TestStartStopWhileChecked (issue #44 item 3): a library user may call Stop and Start while the
// handler of an earlier start still answers /readyz and /healthz. Each Running owns the data
// sources it opened, so under -race nothing is read while it is written; /readyz answers 200
// while its start runs and 503 once it is stopped, and a restart is ready again.
func TestStartStopWhileChecked(t *testing.T) {
	t.Parallel()
	srv, err := svc.New(svctest.Config(t, config.SQLite), svc.WithLogger(svctest.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	status := func(h http.Handler, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	r, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(r.Handler(), "/readyz"); got != http.StatusOK {
		t.Fatalf("GET /readyz after Start = %d, want 200", got)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, path := range []string{"/readyz", "/healthz"} {
					if got := status(r.Handler(), path); got != http.StatusOK && got != http.StatusServiceUnavailable {
						t.Errorf("GET %s during Stop/Start = %d, want 200 or 503", path, got)
					}
				}
			}
		})
	}
	if err := srv.Stop(ctx); err != nil {
		t.Error(err)
	}
	r2, err := srv.Start(ctx)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(ctx)
	if got := status(r.Handler(), "/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz on the stopped Running = %d, want 503", got)
	}
	if got := status(r2.Handler(), "/readyz"); got != http.StatusOK {
		t.Errorf("GET /readyz after the restart = %d, want 200", got)
	}
}
