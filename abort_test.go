package svc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// logCapture is a slog.Handler that keeps every record's level, message and attributes.
type logCapture struct {
	mu   sync.Mutex
	recs []capturedRecord
}

type capturedRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := capturedRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	return nil
}

func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

// records returns a copy of what was logged so far.
func (c *logCapture) records() []capturedRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]capturedRecord(nil), c.recs...)
}

// accessStatus returns the status of the access line of request id, or "" while it is not
// logged.
func (c *logCapture) accessStatus(id string) string {
	for _, r := range c.records() {
		if r.msg == "request" && r.attrs["request_id"] == id {
			return r.attrs["status"]
		}
	}
	return ""
}

// abortModule adds test/abort: each action waits until the request's context ends and then
// fails the way a handler whose work the client's departure cut short fails — a wrapped context
// error like storage's "storage: write part: context canceled", an *rpc.Error with a 5xx status
// wrapping it, the bare context error. started receives the request id once the handler waits.
func abortModule(started chan<- string) svc.ModuleFunc {
	wait := func(wrap func(error) error) func(context.Context, rpc.Call, rpc.NoParams) (bool, error) {
		return func(ctx context.Context, c rpc.Call, _ rpc.NoParams) (bool, error) {
			started <- c.RequestID
			<-ctx.Done()
			return false, wrap(ctx.Err())
		}
	}
	return func(app.Deps) (app.Module, error) {
		return app.Module{Name: "abort", Resources: []rpc.Resource{{Name: "test/abort", Ops: []rpc.Op{
			rpc.Handle("wrapped", wait(func(err error) error { return fmt.Errorf("storage: write part: %w", err) }), rpc.Public()),
			rpc.Handle("internal", wait(func(err error) error { return rpc.ErrUnknown.Wrap(err) }), rpc.Public()),
			rpc.Handle("busy", wait(func(err error) error { return rpc.ErrServiceBusy.Wrap(err) }), rpc.Public()),
			rpc.Handle("bare", wait(func(err error) error { return err }), rpc.Public()),
		}}}}, nil
	}
}

// TestClientAbortIsNot5xx is the attack test of issue #42 item 8 through the real boot chain:
// a client that goes away while its call is being served — whatever error the handler then
// returns, as long as it is or wraps context.Canceled — is logged (access line) and counted
// (svc_api_requests_total) as 499, never as a 5xx, and nothing is logged at error level. A
// multipart upload_part cut in the middle of its file part, the real-client case, is
// never a 5xx either.
func TestClientAbortIsNot5xx(t *testing.T) {
	t.Parallel()
	logs := &logCapture{}
	started := make(chan string, 1)
	ln := adminListener(t)
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Metrics.Enabled = true
	}), svctest.WithOptions(svc.WithLogger(slog.New(logs)), svc.WithModule(abortModule(started)),
		svc.WithTelemetry(ops.Options{Listener: ln})))

	for _, action := range []string{"wrapped", "internal", "busy", "bare"} {
		t.Run(action, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			body := fmt.Sprintf(`{"resource":"test/abort","action":%q,"version":"v1"}`, action)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			done := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
				}
				done <- err
			}()
			var id string
			select {
			case id = <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler never started")
			}
			cancel() // the client goes away mid-call
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("client error = %v, want context.Canceled", err)
			}
			svctest.Eventually(t, 10*time.Second, func() bool { return logs.accessStatus(id) != "" }, "access line of the aborted call")
			if got := logs.accessStatus(id); got != "499" {
				t.Errorf("access log status = %s, want 499", got)
			}
		})
	}

	t.Run("cut upload_part", func(t *testing.T) {
		admin := svctest.User("root", "admin")
		var plan struct{ ClaimID string }
		r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": 100000}, svctest.As(admin))
		if r.Code != 0 {
			t.Fatalf("init_upload: %d %s", r.Code, r.Message)
		}
		r.DataAs(t, &plan)
		for i := 0; i < 5; i++ {
			conn, err := net.Dial("tcp", srv.HTTP.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			head := uploadPartHead(t, srv.Token(t, admin), plan.ClaimID, 100000)
			if _, err := io.WriteString(conn, head+strings.Repeat("x", 30000)); err != nil {
				t.Fatal(err)
			}
			conn.Close() // gone with 70000 bytes of the part still to send
		}
		svctest.Eventually(t, 10*time.Second, func() bool {
			n := 0
			for _, r := range logs.records() {
				if r.msg == "request" && r.attrs["method"] == http.MethodPost && r.attrs["path"] == "/api" &&
					r.attrs["status"] != "200" {
					n++
				}
			}
			return n >= 5+4 // the four aborted calls above and the five cut parts
		}, "access lines of the five cut parts")
	})

	for _, r := range logs.records() {
		if r.msg == "request" && strings.HasPrefix(r.attrs["status"], "5") {
			t.Errorf("access line with a server error: %v", r.attrs)
		}
		if r.level >= slog.LevelError {
			t.Errorf("logged at error level: %s %v", r.msg, r.attrs)
		}
	}
	fams := scrape(t, ln.Addr().String())
	for _, action := range []string{"wrapped", "internal", "busy", "bare"} {
		wantValue(t, fams, "svc_api_requests_total", map[string]string{"resource": "test/abort", "action": action, "status": "499"}, 1)
	}
	for _, m := range fams["svc_api_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "status" && strings.HasPrefix(l.GetValue(), "5") {
				t.Errorf("svc_api_requests_total counts a server error: %v", m.GetLabel())
			}
		}
	}
}
