package cron

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
)

// builtinHarness is a store with the built-in jobs under the allow-list entries, on SQLite.
func builtinHarness(t *testing.T, entries []string) *harness {
	t.Helper()
	d := testservice.OpenDB(t, testservice.DataSource(t, config.SQLite))
	if err := db.Migrate(context.Background(), d, *Migrations()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	cfg := config.Default()
	cfg.Cron.Store.Enabled = true
	cfg.Cron.Store.HTTPAllowedHosts = entries
	h := &harness{clock: testservice.NewClock(t0), db: d}
	svc, err := New(app.Platform{Config: cfg, DB: d, Clock: h.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Options{Builtins: true, Events: &h.events})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	h.svc = svc
	return h
}

// TestBuiltinParamsCheckedOnSave (issue #31 item 13): create and update refuse, with 2706, an
// http.request schedule whose URL the run-time policy refuses (scheme, missing host, internal
// IP literals, IPv4-compatible IPv6 included, a host off the allow-list) and an event.publish
// schedule of a reserved type in any letter case; before, such schedules were stored and failed
// at every run.
func TestBuiltinParamsCheckedOnSave(t *testing.T) {
	t.Parallel()
	manage := user(PermScheduleManage)
	schedule := func(name, job, params string) string {
		return `{"name":"` + name + `","jobName":"` + job + `","trigger":{"kind":"interval","everyMs":60000},"params":` + params + `}`
	}
	http := func(url string) string { return `{"url":"` + url + `"}` }
	tests := []struct {
		name     string
		entries  []string
		action   string
		params   string
		wantCode int
		wantHost bool // the reason is ErrHostNotAllowed
	}{
		{name: "public https", action: "create", params: schedule("ok", JobHTTPRequest, http("https://example.com/hook"))},
		{name: "file scheme", action: "create", params: schedule("f", JobHTTPRequest, http("file:///etc/passwd")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "gopher scheme", action: "create", params: schedule("g", JobHTTPRequest, http("gopher://example.com/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "no host", action: "create", params: schedule("n", JobHTTPRequest, http("http:///x")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "no params", action: "create", params: schedule("np", JobHTTPRequest, "null"), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "loopback literal", action: "create", params: schedule("l", JobHTTPRequest, http("http://127.0.0.1:8080/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "metadata literal", action: "create", params: schedule("m", JobHTTPRequest, http("http://169.254.169.254/latest/meta-data")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "IPv4-compatible loopback", action: "create", params: schedule("c", JobHTTPRequest, http("http://[::127.0.0.1]/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "IPv4-compatible metadata", action: "create", params: schedule("c2", JobHTTPRequest, http("http://[::a9fe:a9fe]/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "params not an object", action: "create", params: schedule("p", JobHTTPRequest, `"http://example.com"`), wantCode: ErrCodeScheduleInvalid},
		{name: "update to a refused URL", action: "update", params: schedule("ok", JobHTTPRequest, http("http://10.0.0.1/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "update to a public URL", action: "update", params: schedule("ok", JobHTTPRequest, http("https://example.org/"))},
		{name: "host off the allow-list", entries: []string{"api.example.com"}, action: "create", params: schedule("a", JobHTTPRequest, http("https://other.example.com/")), wantCode: ErrCodeScheduleInvalid, wantHost: true},
		{name: "host on the allow-list", entries: []string{"api.example.com"}, action: "create", params: schedule("a", JobHTTPRequest, http("https://api.example.com/"))},
		{name: "event type of the host", action: "create", params: schedule("e", JobEventPublish, `{"type":"app.report.due"}`)},
		{name: "reserved event type", action: "create", params: schedule("e1", JobEventPublish, `{"type":"svc.cron.run.failed"}`), wantCode: ErrCodeScheduleInvalid},
		{name: "reserved event type, upper case", action: "create", params: schedule("e2", JobEventPublish, `{"type":"SVC.cron.run.failed"}`), wantCode: ErrCodeScheduleInvalid},
		{name: "reserved event type, mixed case", action: "create", params: schedule("e3", JobEventPublish, `{"type":"Svc.security.logout"}`), wantCode: ErrCodeScheduleInvalid},
		{name: "event type missing", action: "create", params: schedule("e4", JobEventPublish, `{}`), wantCode: ErrCodeScheduleInvalid},
	}
	plain, listed := builtinHarness(t, nil), builtinHarness(t, []string{"api.example.com"})
	engines := map[bool]*rpc.Engine{false: apiEngine(t, plain), true: apiEngine(t, listed)}
	for _, tt := range tests {
		e := engines[tt.entries != nil]
		_, err := e.Call(context.Background(), manage, ScheduleResource, tt.action, "", json.RawMessage(tt.params))
		if tt.wantCode == 0 {
			if err != nil {
				t.Errorf("%s: %v, want it saved", tt.name, err)
			}
			continue
		}
		if re, ok := rpc.AsError(err); !ok || re.Code != tt.wantCode {
			t.Errorf("%s: error = %v, want code %d", tt.name, err, tt.wantCode)
		}
		if tt.wantHost && !errors.Is(err, ErrHostNotAllowed) {
			t.Errorf("%s: error %v does not wrap ErrHostNotAllowed", tt.name, err)
		}
	}
	s, err := plain.svc.Get(context.Background(), "ok")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Params); got != `{"url":"https://example.org/"}` {
		t.Errorf("params after the refused update = %s, want the accepted update's", got)
	}
}
