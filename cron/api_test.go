package cron

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// grants is a permission checker over the principal's roles, used as permission tokens.
type grants struct{}

func (grants) HasPermission(_ context.Context, p *rpc.Principal, token string) (bool, error) {
	return slices.Contains(p.Roles, token), nil
}

// apiEngine mounts the module's resources on an rpc engine.
func apiEngine(t *testing.T, h *harness) *rpc.Engine {
	t.Helper()
	h.svc.wire = wireTimes{loc: time.UTC} // the date-time shape in a fixed zone for the test
	e, err := rpc.NewEngine(rpc.EngineConfig{Permissions: grants{}, Messages: i18n.MustNew(i18n.English, Messages()), Clock: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Register(h.svc.Module().Resources...); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return e
}

func user(perms ...string) *rpc.Principal {
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: "u-1", Name: "u", Roles: perms}
}

// TestAPI drives sys/cron/* through rpc.Engine.Call: permissions, validation codes and both wire
// shapes of params and results.
func TestAPI(t *testing.T) {
	t.Parallel()
	manage, query, runs := user(PermScheduleManage), user(PermScheduleQuery), user(PermRunQuery)
	tests := []struct {
		name             string
		resource, action string
		params           string
		as               *rpc.Principal
		wantCode         int
		want             map[string]any // top-level fields of the JSON data that must match
	}{
		{name: "create without permission", resource: ScheduleResource, action: "create", as: query,
			params: `{"name":"x","jobName":"ok","trigger":{"kind":"interval","everyMs":60000}}`, wantCode: rpc.CodeAccessDenied},
		{name: "create date-time shape", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"dt","jobName":"ok","trigger":{"kind":"cron","expr":"0 3 * * *"},"startsAt":"2026-03-02 00:00:00","params":{"a":1},"enabled":true}`,
			want: map[string]any{"name": "dt", "timezone": "UTC", "startsAt": "2026-03-02 00:00:00", "startsAtUnixMs": 1772409600000.0,
				"nextFireAt": "2026-03-02 03:00:00", "nextFireAtUnixMs": 1772420400000.0, "isEnabled": true, "createdBy": "u-1",
				"misfirePolicy": "fire_now", "concurrencyPolicy": "forbid", "params": map[string]any{"a": 1.0}}},
		{name: "create UnixMs wins", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"ms","jobName":"ok","trigger":{"kind":"once","at":"2030-01-01 00:00:00","atUnixMs":1772330400000}}`,
			want:   map[string]any{"fireAt": "2026-03-01 02:00:00", "fireAtUnixMs": 1772330400000.0, "nextFireAtUnixMs": 1772330400000.0}},
		{name: "create duplicate", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"dt","jobName":"ok","trigger":{"kind":"interval","everyMs":60000}}`, wantCode: ErrCodeScheduleExists},
		{name: "create unknown job", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"j","jobName":"nope","trigger":{"kind":"interval","everyMs":60000}}`, wantCode: ErrCodeJobNotRegistered},
		{name: "create bad trigger", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"t","jobName":"ok","trigger":{"kind":"interval","everyMs":500}}`, wantCode: ErrCodeTriggerInvalid},
		{name: "create conflicting trigger fields", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"t","jobName":"ok","trigger":{"kind":"cron","expr":"@daily","everyMs":1000}}`, wantCode: ErrCodeTriggerInvalid},
		{name: "create never fires", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"t","jobName":"ok","trigger":{"kind":"once","atUnixMs":1000}}`, wantCode: ErrCodeScheduleInvalid},
		{name: "create inverted window", resource: ScheduleResource, action: "create", as: manage,
			params:   `{"name":"t","jobName":"ok","trigger":{"kind":"interval","everyMs":1000},"startsAtUnixMs":2000,"endsAtUnixMs":1000}`,
			wantCode: ErrCodeScheduleInvalid},
		{name: "create negative timeout", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"t","jobName":"ok","trigger":{"kind":"interval","everyMs":1000},"timeoutMs":-1}`, wantCode: ErrCodeScheduleInvalid},
		{name: "create unknown policy", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"t","jobName":"ok","trigger":{"kind":"interval","everyMs":1000},"misfirePolicy":"later"}`, wantCode: ErrCodeScheduleInvalid},
		{name: "create empty name", resource: ScheduleResource, action: "create", as: manage,
			params: `{"name":"  ","jobName":"ok","trigger":{"kind":"interval","everyMs":1000}}`, wantCode: ErrCodeScheduleInvalid},
		{name: "get", resource: ScheduleResource, action: "get", as: query, params: `{"name":"dt"}`,
			want: map[string]any{"nextFires": []any{"2026-03-02 03:00:00", "2026-03-03 03:00:00", "2026-03-04 03:00:00",
				"2026-03-05 03:00:00", "2026-03-06 03:00:00"}}},
		{name: "get missing", resource: ScheduleResource, action: "get", as: query, params: `{"name":"none"}`, wantCode: ErrCodeScheduleNotFound},
		{name: "get without permission", resource: ScheduleResource, action: "get", as: runs, params: `{"name":"dt"}`, wantCode: rpc.CodeAccessDenied},
		{name: "preview", resource: ScheduleResource, action: "preview_fires", as: query,
			params: `{"trigger":{"kind":"interval","everyMs":3600000},"startsAtUnixMs":1772330400000}`,
			want:   map[string]any{"nextFiresUnixMs": []any{1772330400000.0, 1772334000000.0, 1772337600000.0, 1772341200000.0, 1772344800000.0}}},
		{name: "preview invalid", resource: ScheduleResource, action: "preview_fires", as: query,
			params: `{"trigger":{"kind":"cron","expr":"0 0 * *"}}`, wantCode: ErrCodeTriggerInvalid},
		{name: "pause", resource: ScheduleResource, action: "pause", as: manage, params: `{"name":"dt"}`},
		{name: "trigger_now paused", resource: ScheduleResource, action: "trigger_now", as: manage, params: `{"name":"dt"}`,
			wantCode: ErrCodeScheduleDisabled},
		{name: "get paused lists no fires", resource: ScheduleResource, action: "get", as: query, params: `{"name":"dt"}`,
			want: map[string]any{"nextFires": []any{}}},
		{name: "resume", resource: ScheduleResource, action: "resume", as: manage, params: `{"name":"dt"}`},
		{name: "trigger_now", resource: ScheduleResource, action: "trigger_now", as: manage, params: `{"name":"dt"}`},
		{name: "pause again", resource: ScheduleResource, action: "pause", as: manage, params: `{"name":"dt"}`},
		{name: "update without enabled resumes, keeps the cursor", resource: ScheduleResource, action: "update", as: manage,
			params: `{"name":"dt","jobName":"ok","trigger":{"kind":"cron","expr":"0 3 * * *"},"startsAt":"2026-03-02 00:00:00","misfirePolicy":"skip"}`,
			want: map[string]any{"name": "dt", "isEnabled": true, "misfirePolicy": "skip", "nextFireAt": "2026-03-02 03:00:00",
				"createdBy": "u-1", "updatedBy": "u-1"}},
		{name: "update timing recomputes the cursor", resource: ScheduleResource, action: "update", as: manage,
			params: `{"name":"dt","jobName":"ok","trigger":{"kind":"cron","expr":"0 5 * * *","timezone":"Asia/Shanghai"}}`,
			want:   map[string]any{"name": "dt", "timezone": "Asia/Shanghai", "nextFireAt": "2026-03-01 21:00:00"}},
		{name: "update rename to a taken name", resource: ScheduleResource, action: "update", as: manage,
			params: `{"name":"dt","newName":"ms","jobName":"ok","trigger":{"kind":"interval","everyMs":60000}}`, wantCode: ErrCodeScheduleExists},
		{name: "update missing", resource: ScheduleResource, action: "update", as: manage,
			params: `{"name":"none","jobName":"ok","trigger":{"kind":"interval","everyMs":60000}}`, wantCode: ErrCodeScheduleNotFound},
		{name: "update to a dead trigger", resource: ScheduleResource, action: "update", as: manage,
			params: `{"name":"dt","jobName":"ok","trigger":{"kind":"once","atUnixMs":1000}}`, wantCode: ErrCodeScheduleInvalid},
		{name: "find_page", resource: ScheduleResource, action: "find_page", as: query, params: `{"name":"d","isEnabled":true}`,
			want: map[string]any{"total": 1.0, "page": 1.0, "size": 15.0}},
		{name: "find_page wildcard is literal", resource: ScheduleResource, action: "find_page", as: query, params: `{"name":"%"}`,
			want: map[string]any{"total": 0.0}},
		{name: "list_jobs", resource: ScheduleResource, action: "list_jobs", as: query},
		{name: "delete", resource: ScheduleResource, action: "delete", as: manage, params: `{"name":"ms"}`},
		{name: "delete missing", resource: ScheduleResource, action: "delete", as: manage, params: `{"name":"ms"}`, wantCode: ErrCodeScheduleNotFound},
		{name: "runs without permission", resource: RunResource, action: "find_page", as: query, wantCode: rpc.CodeAccessDenied},
		{name: "find_one missing", resource: RunResource, action: "find_one", as: runs, params: `{"id":"none"}`, wantCode: rpc.CodeRecordNotFound},
	}
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		e := apiEngine(t, h)
		for _, tt := range tests {
			got, err := e.Call(ctx, tt.as, tt.resource, tt.action, "", json.RawMessage(tt.params))
			if tt.wantCode != 0 {
				if re, ok := rpc.AsError(err); !ok || re.Code != tt.wantCode {
					t.Errorf("%s: error = %v, want code %d", tt.name, err, tt.wantCode)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
				continue
			}
			if tt.want == nil {
				continue
			}
			data := decoded(t, got)
			if s, ok := data["schedule"].(map[string]any); ok && tt.want["name"] != nil {
				data = s
			}
			for k, v := range tt.want {
				if diff := cmp.Diff(v, data[k]); diff != "" {
					t.Errorf("%s: data.%s (-want +got):\n%s", tt.name, k, diff)
				}
			}
		}
	})
}

// TestAPIRuns reads the journal through sys/cron/run in both shapes.
func TestAPIRuns(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		e := apiEngine(t, h)
		h.create(t, Spec{Name: "r", JobName: "ok", Trigger: every(time.Minute)})
		h.clock.Advance(time.Minute)
		h.claim(t, true)
		as := user(PermRunQuery)
		page, err := e.Call(ctx, as, RunResource, "find_page", "", json.RawMessage(`{"scheduleName":"r","status":"succeeded","scheduledAtFrom":"2026-03-01 00:01:00","scheduledAtToUnixMs":1772323260000}`))
		if err != nil {
			t.Fatal(err)
		}
		p := decoded(t, page)
		items, _ := p["items"].([]any)
		if p["total"] != 1.0 || len(items) != 1 {
			t.Fatalf("find_page = %v, want one run", p)
		}
		run := items[0].(map[string]any)
		want := map[string]any{"scheduleName": "r", "jobName": "ok", "status": "succeeded", "nodeId": "node-a",
			"scheduledAt": "2026-03-01 00:01:00", "scheduledAtUnixMs": 1772323260000.0}
		for k, v := range want {
			if run[k] != v {
				t.Errorf("run.%s = %v, want %v", k, run[k], v)
			}
		}
		one, err := e.Call(ctx, as, RunResource, "find_one", "", json.RawMessage(`{"id":"`+run["id"].(string)+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := decoded(t, one)["id"]; got != run["id"] {
			t.Errorf("find_one id = %v, want %v", got, run["id"])
		}
		h.create(t, Spec{Name: "sub", JobName: "ok", Trigger: Trigger{Kind: KindOnce, At: h.clock.Now().Add(1500 * time.Millisecond)}})
		h.clock.Advance(2 * time.Second)
		h.claim(t, true) // a run at 00:01:01.5
		sec, err := e.Call(ctx, as, RunResource, "find_page", "", json.RawMessage(`{"scheduleName":"sub","scheduledAtTo":"2026-03-01 00:01:01"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := decoded(t, sec)["total"]; got != 1.0 {
			t.Errorf("total up to the run's second = %v, want 1 (the string names a whole second)", got)
		}
		empty, err := e.Call(ctx, as, RunResource, "find_page", "", json.RawMessage(`{"scheduleName":"r","scheduledAtFromUnixMs":1772323260001}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := decoded(t, empty)["total"]; got != 0.0 {
			t.Errorf("total after the range = %v, want 0", got)
		}
	})
}

// TestDescribeJobs: describe_jobs answers this node's jobs in list_jobs' order, each with what
// its handler says of its params (nothing for a handler that does not describe them), under
// cron.schedule.query.
func TestDescribeJobs(t *testing.T) {
	t.Parallel()
	policy, err := NewHostPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(HTTPRequestJob(policy), Job("plain", func(context.Context, Execution) error { return nil }), EventPublishJob(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{cfg: storeConfig().Cron.Store, jobs: reg}
	e, err := rpc.NewEngine(rpc.EngineConfig{Permissions: grants{}, Messages: i18n.MustNew(i18n.English, Messages())})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Register(s.Module().Resources...); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Call(ctx, user(PermRunQuery), ScheduleResource, "describe_jobs", "", nil); err == nil {
		t.Error("describe_jobs without cron.schedule.query answered")
	}
	got, err := e.Call(ctx, user(PermScheduleQuery), ScheduleResource, "describe_jobs", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	var jobs []struct {
		Name     string          `json:"name"`
		Required bool            `json:"paramsRequired"`
		Schema   json.RawMessage `json:"paramsSchema"`
		Example  json.RawMessage `json:"paramsExample"`
	}
	if err := json.Unmarshal(b, &jobs); err != nil || len(jobs) != 3 {
		t.Fatalf("describe_jobs = %s (%v)", b, err)
	}
	for i, want := range []struct {
		name      string
		described bool
	}{{JobEventPublish, true}, {JobHTTPRequest, true}, {"plain", false}} {
		j := jobs[i]
		if j.Name != want.name || j.Required != want.described || (len(j.Schema) > 0) != want.described || (len(j.Example) > 0) != want.described {
			t.Errorf("job %d = %s %v %s %s, want %s described %v", i, j.Name, j.Required, j.Schema, j.Example, want.name, want.described)
		}
	}
}

// TestDisabledStoreMountsNoOperations: spec §1, a switched-off feature exposes no surface.
func TestDisabledStoreMountsNoOperations(t *testing.T) {
	t.Parallel()
	cfg := storeConfig()
	cfg.Cron.Store.Enabled = false
	svc := &Service{cfg: cfg.Cron.Store, jobs: &Registry{}}
	for _, r := range svc.Module().Resources {
		if len(r.Ops) != 0 {
			t.Errorf("%s has %d operations with the store disabled, want 0", r.Name, len(r.Ops))
		}
	}
	if len(svc.Module().Workers) != 0 {
		t.Errorf("workers = %d with the store disabled, want 0", len(svc.Module().Workers))
	}
	ctx := context.Background()
	if _, err := svc.Create(ctx, "", Spec{Name: "x"}); !errors.Is(err, ErrStoreDisabled) {
		t.Errorf("Create error = %v, want ErrStoreDisabled", err)
	}
	if err := svc.Pause(ctx, "", "x"); !errors.Is(err, ErrStoreDisabled) {
		t.Errorf("Pause error = %v, want ErrStoreDisabled", err)
	}
}

// decoded round-trips a handler result through JSON as the envelope would carry it.
func decoded(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("data %s: %v", b, err)
	}
	return m
}
