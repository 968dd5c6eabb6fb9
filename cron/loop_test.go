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

// TestLoopClaimsAndReturnsOnWake: one pass of the claim loop claims what is due and returns as
// soon as a wake-up is pending, whatever poll_interval says.
func TestLoopClaimsAndReturnsOnWake(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		h.svc.cfg.PollInterval = time.Hour
		h.create(t, Spec{Name: "l", JobName: "ok", Trigger: every(time.Minute)}) // leaves a wake-up pending
		h.clock.Advance(time.Minute)
		done := make(chan error, 1)
		go func() { done <- h.svc.loop(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("loop: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("loop did not return on a pending wake-up")
		}
		if err := h.svc.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if got := h.journal(t, "l"); len(got) != 1 || got[0].Status != StatusSucceeded {
			t.Errorf("journal = %v, want one succeeded run", got)
		}
	})
}
