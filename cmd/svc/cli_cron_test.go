package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
)

// cronTOML is the configuration of the cron CLI tests, less the data source.
var cronTOML = `
[svc.app]
port = 18080
[svc.security]
secret = "` + svctest.TestSecret + `"
[svc.cron.store]
enabled = true
`

// cronNode is a cron store over the CLI's database with the job "report", as a server node.
func cronNode(t *testing.T, cfg *config.Config, d *db.DB, calls *atomic.Int64) *cron.Service {
	t.Helper()
	report := cron.Job("report", func(context.Context, cron.Execution) error { calls.Add(1); return nil })
	s, err := cron.New(app.Platform{Config: cfg, DB: d, Clock: time.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		cron.Options{Jobs: []cron.JobHandler{report}, NodeID: "server"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// `svc cron list | runs | trigger | pause | resume` act on the configured database: a trigger
// queues a manual fire that a server node claims and journals; pause and resume flip the
// schedule; a paused or unknown schedule is refused with the catalog's message and exit 1.
func TestCronCLI(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		env := newCLIEnv(t, svctest.DataSource(t, kind), cronTOML)
		ctx := context.Background()
		if err := db.Migrate(ctx, env.db, *cron.Migrations()); err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int64
		node := cronNode(t, env.cfg, env.db, &calls)
		if _, err := node.Create(ctx, "tester", cron.Spec{Name: "nightly", JobName: "report",
			Trigger: cron.Trigger{Kind: cron.KindCron, Expr: "0 3 * * *"}}); err != nil {
			t.Fatal(err)
		}
		if out := env.mustRun("", "cron", "list"); !strings.Contains(out, "nightly") || !strings.Contains(out, `cron "0 3 * * *" UTC`) ||
			!strings.Contains(out, "true") {
			t.Fatalf("list:\n%s", out)
		}
		if out := env.mustRun("", "cron", "trigger", "nightly"); out != "schedule nightly: trigger queued for\n" {
			t.Fatalf("trigger: %q", out)
		}
		if err := node.Claim(ctx); err != nil {
			t.Fatal(err)
		}
		if err := node.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 1 {
			t.Fatalf("the triggered fire ran %d times, want 1", calls.Load())
		}
		if out := env.mustRun("", "cron", "runs", "nightly"); !strings.Contains(out, "succeeded") || !strings.Contains(out, "server") {
			t.Fatalf("runs:\n%s", out)
		}
		env.mustRun("", "cron", "pause", "nightly")
		if s, _ := node.Get(ctx, "nightly"); s.IsEnabled {
			t.Fatal("pause left the schedule enabled")
		}
		if res := env.run("", "cron", "trigger", "nightly"); res.code != 1 || !strings.Contains(res.errOut, "The schedule is paused") {
			t.Fatalf("trigger while paused: %+v", res)
		}
		if out := env.mustRun("", "cron", "resume", "nightly"); out != "schedule nightly: resumed\n" {
			t.Fatalf("resume: %q", out)
		}
		if s, _ := node.Get(ctx, "nightly"); !s.IsEnabled {
			t.Fatal("resume left the schedule paused")
		}
		if res := env.run("", "cron", "pause", "nope"); res.code != 1 || !strings.Contains(res.errOut, "Schedule not found") {
			t.Fatalf("unknown schedule: %+v", res)
		}
	})
}

// Without svc.cron.store.enabled the cron commands refuse to run.
func TestCronCLINeedsTheStore(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t, svctest.DataSource(t, config.SQLite), usersTOML)
	if res := env.run("", "cron", "list"); res.code != 1 || !strings.Contains(res.errOut, "svc.cron.store.enabled") {
		t.Fatalf("list with the store off: %+v", res)
	}
}
