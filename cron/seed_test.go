package cron

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

func TestSeedDefaultSchedules(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *Migrations()); err != nil {
			t.Fatal(err)
		}
		clock := testservice.NewClock(t0)
		build := func(jobs ...JobHandler) *Service {
			svc, err := New(app.Platform{Config: storeConfig(), DB: d, Clock: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
				Options{Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			return svc
		}
		seeded := WithDefaultSchedule(Job("nightly", noop), Spec{Trigger: Trigger{Kind: KindCron, Expr: "0 2 * * *"}})
		svc := build(seeded)
		if err := svc.Module().Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		sch, err := svc.Get(ctx, "nightly")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if sch.JobName != "nightly" || sch.CreatedBy != "system" || !sch.NextFireAt.Equal(t0.Add(2*time.Hour)) {
			t.Errorf("seeded = %+v, want job nightly by system firing at 02:00", sch)
		}
		if err := svc.Pause(ctx, "ops", "nightly"); err != nil {
			t.Fatal(err)
		}
		if err := build(seeded).Module().Start(ctx); err != nil { // a restart keeps the operator's pause
			t.Fatalf("second Start: %v", err)
		}
		if sch, _ := svc.Get(ctx, "nightly"); sch.IsEnabled {
			t.Error("a restart re-enabled the paused default schedule")
		}
		bad := WithDefaultSchedule(Job("broken", noop), Spec{Trigger: Trigger{Kind: KindInterval, Every: time.Millisecond}})
		if err := build(bad).Module().Start(ctx); !errors.Is(err, ErrTriggerInvalid) {
			t.Errorf("Start with an invalid default = %v, want ErrTriggerInvalid", err)
		}
	})
}
