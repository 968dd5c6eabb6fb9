package cron

import (
	"context"
	"testing"
	"time"
)

// TestNextWait: the claim loop sleeps until the nearest local cursor, within [50ms, poll].
func TestNextWait(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		wait := func(want time.Duration) {
			t.Helper()
			got, err := h.svc.nextWait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("nextWait = %v, want %v", got, want)
			}
		}
		wait(h.svc.cfg.PollInterval) // no schedules
		h.create(t, Spec{Name: "far", JobName: "ok", Trigger: every(time.Hour)})
		wait(h.svc.cfg.PollInterval)
		h.create(t, Spec{Name: "near", JobName: "ok", Trigger: every(3 * time.Second)})
		wait(3 * time.Second)
		h.clock.Advance(2*time.Second + 990*time.Millisecond)
		wait(minLoopWait)
		if err := h.svc.Pause(ctx, "", "near"); err != nil {
			t.Fatal(err)
		}
		wait(h.svc.cfg.PollInterval) // paused schedules do not count
	})
}

// TestWake: local mutations wake the claim loop; wake-ups never block and coalesce.
func TestWake(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		drain := func() bool {
			select {
			case <-h.svc.wake:
				return true
			default:
				return false
			}
		}
		drain()
		h.create(t, Spec{Name: "w", JobName: "ok", Trigger: every(time.Hour)})
		if !drain() {
			t.Error("Create did not wake the claim loop")
		}
		if err := h.svc.TriggerNow(ctx, "w"); err != nil {
			t.Fatal(err)
		}
		h.svc.Wake() // a second wake-up coalesces with the first
		if !drain() || drain() {
			t.Error("TriggerNow and Wake: want exactly one pending wake-up")
		}
	})
}
