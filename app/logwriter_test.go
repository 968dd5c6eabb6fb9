package app

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLoggerFlushesWarningsAtOnceAndInfoOnClose(t *testing.T) {
	var out lockedBuffer
	lw := NewLogWriter(&out)
	log := NewLogger(lw, slog.LevelInfo).With("app", "t")
	log.Info("quiet line")
	log.Warn("loud line")
	if got := out.String(); !strings.Contains(got, "loud line") || !strings.Contains(got, "quiet line") {
		t.Errorf("after a warning the buffer holds %q, want both lines written (in order)", got)
	}
	log.Info("last line")
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "last line") {
		t.Errorf("after Close the output is %q, want the last info line flushed", got)
	}
	if strings.Count(out.String(), "\n") != 3 {
		t.Errorf("output %q, want exactly three lines", out.String())
	}
}

// TestAccessLogThroughHandler: a request served by the outer middleware leaves the same access
// record with svc's default logger as with a host's own JSON logger.
func TestAccessLogThroughHandler(t *testing.T) {
	t.Parallel()
	var defaultOut, hostOut lockedBuffer
	lw := NewLogWriter(&defaultOut)
	defer lw.Close()
	loggers := map[string]*slog.Logger{
		"default": NewLogger(lw, slog.LevelInfo),
		"host":    slog.New(slog.NewJSONHandler(&hostOut, nil)),
	}
	for name, logger := range loggers {
		h := newTestHandler(t, HandlerConfig{Logger: logger, AccessLog: true, Modules: []Module{{Name: "m", Routes: []Route{
			{Pattern: "GET /echo", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, "hello")
			})},
		}}}})
		for range 2 { // the second request reuses a pooled recorder
			req := httptest.NewRequest("GET", "/echo", nil)
			req.RemoteAddr = "192.0.2.7:1234"
			req.Header.Set("X-Request-ID", "req-"+name)
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"default": defaultOut.String(), "host": hostOut.String()} {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s logger: %d lines %q, want 2", name, len(lines), out)
		}
		for _, line := range lines {
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("%s logger: line %q is not JSON: %v", name, line, err)
			}
			if _, err := time.Parse(time.RFC3339Nano, got["time"].(string)); err != nil {
				t.Errorf("%s logger: time %q: %v", name, got["time"], err)
			}
			if d, ok := got["duration"].(float64); !ok || d < 0 {
				t.Errorf("%s logger: duration = %v, want nanoseconds", name, got["duration"])
			}
			delete(got, "time")
			delete(got, "duration")
			want := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "path": "/echo",
				"status": float64(418), "bytes": float64(5), "client_ip": "192.0.2.7", "request_id": "req-" + name}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s logger: access record (-want +got):\n%s", name, diff)
			}
		}
	}
}

// TestAccessLogBounded (issue #11 item 7): a 200 KB path and a long method leave an access line
// of bounded size with both values marked truncated, with the default logger and with any other
// logger.
func TestAccessLogBounded(t *testing.T) {
	t.Parallel()
	for _, svcLogger := range []bool{true, false} {
		var out lockedBuffer
		lw := NewLogWriter(&out)
		log := slog.New(slog.NewJSONHandler(&out, nil))
		if svcLogger {
			log = NewLogger(lw, slog.LevelInfo)
		}
		h := newTestHandler(t, HandlerConfig{Logger: log, AccessLog: true})
		req := httptest.NewRequest("GET", "/"+strings.Repeat("p", 200<<10), nil)
		req.Method = strings.Repeat("M", 1000)
		h.ServeHTTP(httptest.NewRecorder(), req)
		if err := lw.Close(); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(out.String())
		if len(line) > 1<<10 || strings.Count(line, "…(truncated)") != 2 {
			t.Errorf("svc logger %v: access line of %d bytes %.120s…; want at most 1 KiB with method and path truncated", svcLogger, len(line), line)
		}
	}
}
