package svc_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// cronAdmin is a user whose role grants every permission token (svc.security.roles admin = "*").
var cronAdmin = svctest.As(svctest.User("root", "admin"))

// enableCron switches the cron store on and grants the admin role every permission.
func enableCron(c *config.Config) {
	c.Cron.Store.Enabled = true
	c.Security.Roles = map[string][]string{"admin": {"*"}}
}

// cronRunPage is the part of sys/cron/run find_page the tests read.
type cronRunPage struct {
	Total int `json:"total"`
	Items []struct {
		ScheduleName string `json:"scheduleName"`
		JobName      string `json:"jobName"`
		Status       string `json:"status"`
		Error        string `json:"error"`
	} `json:"items"`
}

// createAndTrigger creates a once schedule of job (a day away, so only the manual fire runs)
// through /api and fires it with trigger_now.
func createAndTrigger(t *testing.T, srv *svctest.Server, name, job string) {
	t.Helper()
	at := time.Now().Add(24 * time.Hour).UnixMilli()
	r := srv.Call(t, cron.ScheduleResource, "create", map[string]any{"name": name, "jobName": job,
		"trigger": map[string]any{"kind": "once", "atUnixMs": at}, "enabled": true}, cronAdmin)
	if r.Status != http.StatusOK || r.Code != 0 {
		t.Fatalf("create %s: HTTP %d code %d (%s)", name, r.Status, r.Code, r.Message)
	}
	if r := srv.Call(t, cron.ScheduleResource, "trigger_now", map[string]any{"name": name}, cronAdmin); r.Code != 0 {
		t.Fatalf("trigger_now %s: code %d (%s)", name, r.Code, r.Message)
	}
}

// finishedRun waits until sys/cron/run find_page shows one run of schedule that is no longer
// running, and returns the page.
func finishedRun(t *testing.T, srv *svctest.Server, schedule string) cronRunPage {
	t.Helper()
	var page cronRunPage
	svctest.Eventually(t, 20*time.Second, func() bool {
		r := srv.Call(t, cron.RunResource, "find_page", map[string]any{"scheduleName": schedule}, cronAdmin)
		if r.Code != 0 {
			t.Fatalf("run find_page: code %d (%s)", r.Code, r.Message)
		}
		page = cronRunPage{}
		r.DataAs(t, &page)
		return len(page.Items) == 1 && page.Items[0].Status != string(cron.StatusRunning)
	}, "a finished run of "+schedule)
	return page
}

// TestCronWiredIntoServer: with the store on, a job registered through svc.WithCron runs when a
// schedule created through /api is triggered, the run is journaled succeeded (or failed, with
// svc.cron.run.failed on the server's event bus), on every database.
func TestCronWiredIntoServer(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		ran := make(chan cron.Execution, 1)
		jobs := []cron.JobHandler{
			cron.Job("ping", func(_ context.Context, e cron.Execution) error { ran <- e; return nil }),
			cron.Job("boom", func(context.Context, cron.Execution) error { return errors.New("boom") }),
		}
		failed := make(chan string, 1)
		subscribe := func(d app.Deps) (app.Module, error) {
			_, err := d.Events.Subscribe(cron.EventRunFailed, func(_ context.Context, env *event.Envelope) error {
				failed <- env.Type
				return nil
			}, event.WithGroup("host"))
			return app.Module{Name: "cron-subscriber"}, err
		}
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(enableCron),
			svctest.WithOptions(svc.WithCron(cron.Options{Jobs: jobs}), svc.WithModule(subscribe)))
		if srv.Cron() == nil || srv.Cron().Jobs().Get("ping") == nil {
			t.Fatal("Server.Cron() has no job ping, want the handlers of WithCron")
		}

		createAndTrigger(t, srv, "nightly-ping", "ping")
		page := finishedRun(t, srv, "nightly-ping")
		if got := page.Items[0]; got.Status != string(cron.StatusSucceeded) || got.JobName != "ping" {
			t.Errorf("run = %+v, want job ping succeeded", got)
		}
		select {
		case e := <-ran:
			if e.ScheduleName != "nightly-ping" {
				t.Errorf("Execution.ScheduleName = %q, want nightly-ping", e.ScheduleName)
			}
		default:
			t.Error("the ping handler was not called")
		}

		createAndTrigger(t, srv, "always-fails", "boom")
		page = finishedRun(t, srv, "always-fails")
		if got := page.Items[0]; got.Status != string(cron.StatusFailed) || got.Error != "boom" {
			t.Errorf("run = %+v, want failed with error boom", got)
		}
		select {
		case typ := <-failed:
			if typ != cron.EventRunFailed {
				t.Errorf("event type = %q, want %q", typ, cron.EventRunFailed)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("no %s event reached the bus subscriber", cron.EventRunFailed)
		}
	})
}

// TestCronStoreDisabledHasNoSurface: with svc.cron.store.enabled = false (the code default) the
// sys/cron resources mount no operation, so every action answers 404/1200, even for an admin
// (spec §1: a feature that is switched off exposes no surface).
func TestCronStoreDisabledHasNoSurface(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			c.Security.Roles = map[string][]string{"admin": {"*"}}
		}), svctest.WithOptions(svc.WithCron(cron.Options{Jobs: []cron.JobHandler{
			cron.Job("ping", func(context.Context, cron.Execution) error { return nil }),
		}})))
		for _, call := range []struct{ resource, action string }{
			{cron.ScheduleResource, "create"}, {cron.ScheduleResource, "find_page"},
			{cron.ScheduleResource, "trigger_now"}, {cron.ScheduleResource, "list_jobs"},
			{cron.RunResource, "find_page"}, {cron.RunResource, "find_one"},
		} {
			r := srv.Call(t, call.resource, call.action, map[string]any{"name": "x"}, cronAdmin)
			if r.Status != http.StatusNotFound || r.Code != rpc.CodeNotFound {
				t.Errorf("%s %s = HTTP %d code %d, want 404/1200", call.resource, call.action, r.Status, r.Code)
			}
		}
	})
}

// TestShippedConfigRunsCron: the server boots from configs/application.toml, which enables the
// cron store with auto_migrate and grants admin every permission, and a host job registered with
// svc.WithCron runs when an admin triggers its schedule through /api.
func TestShippedConfigRunsCron(t *testing.T) {
	shipped := shippedConfig(t)
	if !shipped.Cron.Store.Enabled {
		t.Fatal("the shipped configuration does not enable svc.cron.store")
	}
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { *c = *shipped }),
		svctest.WithOptions(svc.WithCron(cron.Options{Jobs: []cron.JobHandler{
			cron.Job("ping", func(context.Context, cron.Execution) error { return nil }),
		}})))
	createAndTrigger(t, srv, "shipped-ping", "ping")
	if got := finishedRun(t, srv, "shipped-ping").Items[0]; got.Status != string(cron.StatusSucceeded) {
		t.Errorf("run = %+v, want succeeded", got)
	}
}
