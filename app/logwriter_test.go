package app

import (
	"bytes"
	"context"
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

// TestAccessLineMatchesSlog holds appendAccessLine to the exact bytes slog's JSON handler writes
// for the same record, escaping included, so the fast path cannot drift from the slog path.
func TestAccessLineMatchesSlog(t *testing.T) {
	t.Parallel()
	east := time.FixedZone("east", 5*3600+30*60)
	tests := []struct {
		name string
		line accessLine
	}{
		{"typical", accessLine{
			time: time.Date(2026, 11, 22, 5, 44, 17, 123456789, time.UTC), method: "POST", path: "/api",
			status: 200, bytes: 71, duration: 123456 * time.Nanosecond, clientIP: "127.0.0.1",
			requestID: "019a9c1e-8f3a-7b2c-9d4e-5f6a7b8c9d0e"}},
		{"whole second, zone offset", accessLine{
			time: time.Date(2026, 1, 2, 3, 4, 5, 0, east), method: "GET", path: "/healthz",
			status: 503, bytes: 0, duration: 0, clientIP: "::1", requestID: "gw-1"}},
		{"trailing zeros in nanoseconds", accessLine{
			time: time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC), method: "PUT", path: "/x",
			status: 404, bytes: 1 << 40, duration: -5, clientIP: "", requestID: ""}},
		{"escapes", accessLine{
			time: time.Date(2026, 6, 30, 23, 59, 59, 999999999, time.Local), method: "GE\"T",
			path: "/a b/<script>&\\\n\r\t\x00\x1f\x7f/é/\u2028\u2029/\xff\xfe/日本", status: 418,
			bytes: 12, duration: time.Hour, clientIP: "2001:db8::1", requestID: "id\"\\"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var want bytes.Buffer
			l := tt.line
			h := slog.NewJSONHandler(&want, nil)
			r := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
			r.AddAttrs(
				slog.String("method", l.method), slog.String("path", l.path),
				slog.Int("status", l.status), slog.Int64("bytes", l.bytes),
				slog.Duration("duration", l.duration),
				slog.String("client_ip", l.clientIP), slog.String("request_id", l.requestID))
			if err := h.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if got := string(appendAccessLine(nil, l)); got != want.String() {
				t.Errorf("appendAccessLine =\n%s want (slog)\n%s", got, want.String())
			}
		})
	}
}

// TestAccessLineWriterOnlyForTheDefaultLogger: the fast path applies to NewLogger's logger as
// made, at info or below, and never to a derived, quieter or foreign logger.
func TestAccessLineWriterOnlyForTheDefaultLogger(t *testing.T) {
	t.Parallel()
	lw := NewLogWriter(io.Discard)
	defer lw.Close()
	base := NewLogger(lw, slog.LevelInfo)
	tests := []struct {
		name   string
		logger *slog.Logger
		want   *LogWriter
	}{
		{"default at info", base, lw},
		{"default at debug", NewLogger(lw, slog.LevelDebug), lw},
		{"default at warn", NewLogger(lw, slog.LevelWarn), nil},
		{"with attributes", base.With("app", "x"), nil},
		{"with group", base.WithGroup("g"), nil},
		{"host logger", slog.New(slog.NewJSONHandler(io.Discard, nil)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := accessLineWriter(tt.logger); got != tt.want {
				t.Errorf("accessLineWriter = %p, want %p", got, tt.want)
			}
		})
	}
}

// TestAccessLogThroughHandler: a request served by the outer middleware leaves the same access
// record with svc's default logger (fast path) as with a host's own JSON logger (slog).
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
		for range 2 { // the second request reuses a pooled recorder and its line buffer
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
// of bounded size with both values marked truncated, on the fast path of the default logger and
// on the slog path of any other logger.
func TestAccessLogBounded(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		var out lockedBuffer
		lw := NewLogWriter(&out)
		log := slog.New(slog.NewJSONHandler(&out, nil))
		if fast {
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
			t.Errorf("fast path %v: access line of %d bytes %.120s…; want at most 1 KiB with method and path truncated", fast, len(line), line)
		}
	}
}
