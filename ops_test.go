package svc_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/svctest"
)

// probeEvent is published by the probe module's operation.
type probeEvent struct{ N int }

func (probeEvent) EventType() string { return "ops.probe.touched" }

// probeModule adds ops/probe: "touch" reads the database and publishes probeEvent, "limited"
// allows one call a minute. A subscriber of probeEvent reads the database too.
func probeModule(d app.Deps) (app.Module, error) {
	touch := func(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (int, error) {
		var n int
		if err := d.DB.NewSelect().ColumnExpr("1").Scan(ctx, &n); err != nil {
			return 0, err
		}
		return n, d.Events.Publish(ctx, probeEvent{N: n})
	}
	limited := func(context.Context, rpc.Call, rpc.NoParams) (bool, error) { return true, nil }
	_, err := event.SubscribeTyped(d.Events, func(ctx context.Context, _ *event.Envelope, _ probeEvent) error {
		var n int
		return d.DB.NewSelect().ColumnExpr("2").Scan(ctx, &n)
	})
	if err != nil {
		return app.Module{}, err
	}
	return app.Module{Name: "probe", Resources: []rpc.Resource{{Name: "ops/probe", Ops: []rpc.Op{
		rpc.Handle("touch", touch, rpc.Public()),
		rpc.Handle("limited", limited, rpc.Public(), rpc.RateLimit(1, time.Minute)),
	}}}}, nil
}

// adminListener opens the test's admin listener on a free loopback port.
func adminListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// scrape reads the admin address's metrics path and parses the exposition.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d: %s", resp.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return fams
}

// value returns the value of the series name{labels} (counter, gauge, or a histogram's count),
// and whether it exists.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// wantSeries fails unless name{labels} exists with a value of at least min.
func wantSeries(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, min float64) {
	t.Helper()
	v, ok := value(fams, name, labels)
	if !ok {
		t.Errorf("series %s%v missing", name, labels)
		return
	}
	if v < min {
		t.Errorf("%s%v = %g, want at least %g", name, labels, v, min)
	}
}

// wantValue fails unless name{labels} exists with exactly want.
func wantValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	if v, ok := value(fams, name, labels); !ok || v != want {
		t.Errorf("%s%v = %g (present %v), want %g", name, labels, v, ok, want)
	}
}

// TestMetricsAfterDrivingModules drives /api, security, storage, cron and the event bus and
// scrapes the admin address: each module's series moved. The public handler serves neither
// /metrics nor pprof.
func TestMetricsAfterDrivingModules(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		ln := adminListener(t)
		ran := make(chan struct{}, 1)
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			enableCron(c)
			c.Push.Enabled = true
			c.Metrics.Enabled, c.Pprof.Enabled = true, true
			c.Event.Middleware.Metrics = true
		}), svctest.WithOptions(svc.WithModule(probeModule), svc.WithTelemetry(ops.Options{Listener: ln}), svc.WithApproval(approval.Options{}),
			svc.WithCron(cron.Options{Jobs: []cron.JobHandler{cron.Job("ping", func(context.Context, cron.Execution) error {
				ran <- struct{}{}
				return nil
			})}})))
		addr := ln.Addr().String()

		driveAPI(t, srv)
		failThenLogin(t, srv, "olga")
		driveUpload(t, srv)
		createAndTrigger(t, srv, "metrics-ping", "ping")
		finishedRun(t, srv, "metrics-ping")
		pushOnce(t, srv)

		var uploads, handled float64
		svctest.Eventually(t, 10*time.Second, func() bool {
			fams := scrape(t, addr)
			uploads, _ = value(fams, "svc_storage_uploads_total", nil)
			handled, _ = value(fams, "svc_event_handled_total", map[string]string{"type": "ops.probe.touched"})
			return uploads == 1 && handled == 2
		}, "the upload and the two probe events counted by their subscribers")
		fams := scrape(t, addr)
		op := map[string]string{"resource": "ops/probe", "action": "touch", "version": "v1"}
		wantSeries(t, fams, "svc_api_requests_total", map[string]string{"resource": "ops/probe", "action": "touch", "code": "0", "status": "200"}, 2)
		wantSeries(t, fams, "svc_api_request_duration_seconds", op, 2)
		wantSeries(t, fams, "svc_api_requests_in_flight", op, 0)
		if v, _ := value(fams, "svc_api_requests_in_flight", op); v != 0 {
			t.Errorf("in flight after the calls = %g, want 0", v)
		}
		wantSeries(t, fams, "svc_api_requests_total", map[string]string{"resource": "", "code": "1200", "status": "404"}, 1)
		wantSeries(t, fams, "svc_api_rate_limited_total", map[string]string{"resource": "ops/probe", "action": "limited"}, 1)
		wantSeries(t, fams, "svc_security_logins_total", map[string]string{"result": "success"}, 1)
		wantSeries(t, fams, "svc_security_logins_total", map[string]string{"result": "failure"}, 1)
		wantSeries(t, fams, "svc_security_lockouts_total", nil, 0)
		wantSeries(t, fams, "svc_storage_upload_bytes_total", nil, 5)
		wantSeries(t, fams, "svc_storage_active_claims", nil, 1)
		wantSeries(t, fams, "svc_storage_delete_queue_depth", nil, 0)
		wantSeries(t, fams, "svc_storage_delete_dead_letters_total", nil, 0)
		wantSeries(t, fams, "svc_event_published_total", map[string]string{"type": "ops.probe.touched"}, 2)
		// The storage events go through the outbox (config.Event.Effective): the upload's row was
		// relayed before its subscriber counted it.
		wantSeries(t, fams, "svc_event_outbox_rows", map[string]string{"status": "completed"}, 1)
		wantSeries(t, fams, "svc_event_outbox_rows", map[string]string{"status": "dead"}, 0)
		wantSeries(t, fams, "svc_event_outbox_relayed_total", nil, 1)
		wantSeries(t, fams, "svc_cron_runs_total", map[string]string{"job": "ping", "status": "succeeded"}, 1)
		wantSeries(t, fams, "svc_cron_fire_lag_seconds", nil, 1)
		wantSeries(t, fams, "svc_push_connections", nil, 1)
		wantSeries(t, fams, "svc_push_messages_total", map[string]string{"result": "sent"}, 1)
		wantSeries(t, fams, "svc_push_messages_total", map[string]string{"result": "dropped"}, 0)
		wantSeries(t, fams, "svc_push_dropped_slow_clients_total", nil, 0)
		for _, status := range approval.LiveTaskStatuses { // no instance started: the series are there, at zero
			wantValue(t, fams, "svc_approval_tasks", map[string]string{"status": status}, 0)
		}
		for _, status := range approval.OpenInstanceStatuses {
			wantValue(t, fams, "svc_approval_instances", map[string]string{"status": status}, 0)
		}
		for _, status := range approval.UnappliedProjectionStatuses {
			wantValue(t, fams, "svc_approval_business_projections", map[string]string{"status": status}, 0)
		}
		wantSeries(t, fams, "go_goroutines", nil, 1)
		wantSeries(t, fams, "process_start_time_seconds", nil, 1)

		wantStatus(t, "http://"+addr+"/debug/pprof/", http.StatusOK)
		wantStatus(t, srv.URL+"/metrics", http.StatusNotFound)
		wantStatus(t, srv.URL+"/debug/pprof/", http.StatusNotFound)
	})
}

// pushOnce opens a WebSocket connection as alice, pushes one message to her and reads it; the
// connection stays open until the test ends.
func pushOnce(t *testing.T, srv *svctest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws?__accessToken=" + srv.Token(t, svctest.User("alice"))
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	svctest.Eventually(t, 5*time.Second, func() bool { return srv.Push().Connections() == 1 }, "connected")
	if err := srv.Push().Push(ctx, push.Message{Type: "ops.probe"}, push.ToUsers("alice")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil {
		t.Fatalf("reading the push: %v", err)
	}
}

// driveAPI calls ops/probe touch twice, an unknown operation once and the limited operation
// twice (the second is rejected).
func driveAPI(t *testing.T, srv *svctest.Server) {
	t.Helper()
	for range 2 {
		if r := srv.Call(t, "ops/probe", "touch", nil); r.Code != 0 {
			t.Fatalf("touch: code %d (%s)", r.Code, r.Message)
		}
	}
	if r := srv.Call(t, "ops/nothing", "here", nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown operation: HTTP %d", r.Status)
	}
	srv.Call(t, "ops/probe", "limited", nil)
	if r := srv.Call(t, "ops/probe", "limited", nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("second limited call: HTTP %d, want 429", r.Status)
	}
}

// failThenLogin creates user username in the built-in store, then makes one failed and one
// successful password login as that user.
func failThenLogin(t *testing.T, srv *svctest.Server, username string) *security.User {
	t.Helper()
	user, err := srv.Security().Store().Create(context.Background(), username, username, "Correct-Horse-42", nil)
	if err != nil {
		t.Fatal(err)
	}
	login := func(password string) svctest.Response {
		return srv.Call(t, security.ResourceAuth, "login", map[string]any{"type": "password", "principal": username, "credentials": password})
	}
	if r := login("wrong-password"); r.Code == 0 {
		t.Fatal("login with a wrong password succeeded")
	}
	if r := login("Correct-Horse-42"); r.Code != 0 {
		t.Fatalf("login: code %d (%s)", r.Code, r.Message)
	}
	return user
}

// driveUpload uploads one 5-byte file and leaves a second claim pending.
func driveUpload(t *testing.T, srv *svctest.Server) {
	t.Helper()
	as := svctest.As(svctest.User("uploader"))
	var init storage.InitUploadResult
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.txt", "size": 5, "contentType": "text/plain"}, as)
	if r.Code != 0 {
		t.Fatalf("init_upload: code %d (%s)", r.Code, r.Message)
	}
	r.DataAs(t, &init)
	r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": init.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "a.txt", Content: strings.NewReader("hello")}}, as)
	if r.Code != 0 {
		t.Fatalf("upload_part: code %d (%s)", r.Code, r.Message)
	}
	if r := srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": init.ClaimID}, as); r.Code != 0 {
		t.Fatalf("complete_upload: code %d (%s)", r.Code, r.Message)
	}
	if r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "b.txt", "size": 3}, as); r.Code != 0 {
		t.Fatalf("second init_upload: code %d (%s)", r.Code, r.Message)
	}
}

// wantStatus fails unless GET url answers status.
func wantStatus(t *testing.T, url string, status int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Errorf("GET %s: HTTP %d, want %d", url, resp.StatusCode, status)
	}
}
