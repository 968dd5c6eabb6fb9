package cron

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// t0 is the fake clock's start in every engine test.
var t0 = at("2026-03-01T00:00:00Z")

// harness is one cron store over a migrated test database with a fake clock.
type harness struct {
	svc     *Service
	clock   *testservice.Clock
	db      *db.DB
	release chan struct{} // closing it ends the "block" job
	calls   atomic.Int64
	events  recorder
}

// recorder is a Publisher that keeps the events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Publish(_ context.Context, e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

// runEvents returns the payloads of the recorded events named name.
func (r *recorder) runEvents(name string) []RunEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RunEvent
	for _, e := range r.events {
		if e.Name == name {
			out = append(out, e.Payload.(RunEvent))
		}
	}
	return out
}

func newHarness(t *testing.T, d *db.DB, node string, mutate func(*config.CronStore)) *harness {
	t.Helper()
	ctx := context.Background()
	if err := db.Migrate(ctx, d, *Migrations()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return attach(t, d, node, mutate)
}

// attach builds a second node on an already migrated database.
func attach(t *testing.T, d *db.DB, node string, mutate func(*config.CronStore)) *harness {
	t.Helper()
	cfg := config.Default()
	cfg.Cron.Store.Enabled = true
	if mutate != nil {
		mutate(&cfg.Cron.Store)
	}
	h := &harness{clock: testservice.NewClock(t0), db: d, release: make(chan struct{})}
	jobs := []JobHandler{
		Job("ok", func(context.Context, Execution) error { h.calls.Add(1); return nil }),
		Job("fail", func(context.Context, Execution) error { return errors.New("boom") }),
		Job("panic", func(context.Context, Execution) error { panic("kaput") }),
		Job("block", func(ctx context.Context, _ Execution) error {
			select {
			case <-h.release:
			case <-ctx.Done():
			}
			return nil
		}),
		Job("slow", func(ctx context.Context, _ Execution) error { <-ctx.Done(); return nil }),
		TypedJob("typed", func(context.Context, Execution, struct{ N int }) error { h.calls.Add(1); return nil }),
	}
	svc, err := New(app.Platform{Config: cfg, DB: d, Clock: h.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Options{Jobs: jobs, NodeID: node, Events: &h.events})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.svc = svc
	svc.wire = wireTimes{loc: time.UTC}
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		_ = svc.Stop(context.Background())
	})
	return h
}

// claim runs one claim pass and waits until every run it started is journaled, unless keep.
func (h *harness) claim(t *testing.T, wait bool) {
	t.Helper()
	ctx := context.Background()
	if err := h.svc.Claim(ctx); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if wait {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := h.svc.Wait(wctx); err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
}

// runView is the comparable part of a run: logical offset from t0, status, missed count.
type runView struct {
	At     time.Duration
	Status Status
	Missed int
	Error  string
}

func (h *harness) journal(t *testing.T, name string) []runView {
	t.Helper()
	runs, err := h.svc.Runs(context.Background(), name)
	if err != nil {
		t.Fatalf("Runs: %v", err)
	}
	out := make([]runView, len(runs))
	for i, r := range runs {
		out[i] = runView{At: r.ScheduledAt.Sub(t0), Status: r.Status, Missed: r.MissedCount, Error: r.Error}
	}
	return out
}

// create stores spec or fails the test.
func (h *harness) create(t *testing.T, spec Spec) {
	t.Helper()
	if _, err := h.svc.Create(context.Background(), "tester", spec); err != nil {
		t.Fatalf("Create(%s): %v", spec.Name, err)
	}
}

// eachStore runs fn on a fresh store per database kind.
func eachStore(t *testing.T, fn func(t *testing.T, h *harness, ctx context.Context)) {
	t.Helper()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		fn(t, newHarness(t, d, "node-a", nil), context.Background())
	})
}

func every(d time.Duration) Trigger { return Trigger{Kind: KindInterval, Every: d} }

func TestEngineScenarios(t *testing.T) {
	t.Parallel()
	type step struct {
		advance time.Duration // clock moves by this before the claim
		trigger bool          // trigger_now before the claim
		pause   bool
		resume  bool
	}
	tests := []struct {
		name     string
		spec     Spec
		created  time.Duration // clock offset when the schedule is created
		steps    []step
		want     []runView
		wantNext time.Duration // cursor offset from t0; -1 = spent
		wantLast time.Duration
	}{
		{name: "on time", spec: Spec{JobName: "ok", Trigger: every(time.Minute)},
			steps:    []step{{advance: time.Minute}, {advance: time.Minute + 10*time.Second}},
			want:     []runView{{At: time.Minute, Status: StatusSucceeded}, {At: 2 * time.Minute, Status: StatusSucceeded}},
			wantNext: 3 * time.Minute, wantLast: 2 * time.Minute},
		{name: "fire_now catches up once and journals the gap", spec: Spec{JobName: "ok", Trigger: every(time.Minute)},
			steps:    []step{{advance: 5*time.Minute + 30*time.Second}},
			want:     []runView{{At: time.Minute, Status: StatusSucceeded}, {At: 2 * time.Minute, Status: StatusMissed, Missed: 4}},
			wantNext: 6 * time.Minute, wantLast: time.Minute},
		{name: "skip journals the whole gap", spec: Spec{JobName: "ok", Trigger: every(time.Minute), MisfirePolicy: MisfireSkip},
			steps:    []step{{advance: 5*time.Minute + 30*time.Second}},
			want:     []runView{{At: time.Minute, Status: StatusMissed, Missed: 5}},
			wantNext: 6 * time.Minute, wantLast: -1},
		{name: "window: start inclusive, end stops the schedule",
			spec:  Spec{JobName: "ok", Trigger: every(time.Minute), Window: Window{StartsAt: t0.Add(10 * time.Minute), EndsAt: t0.Add(12 * time.Minute)}},
			steps: []step{{advance: 10 * time.Minute}, {advance: time.Minute}, {advance: time.Minute}, {advance: time.Minute}},
			want: []runView{{At: 10 * time.Minute, Status: StatusSucceeded}, {At: 11 * time.Minute, Status: StatusSucceeded},
				{At: 12 * time.Minute, Status: StatusSucceeded}},
			wantNext: -1, wantLast: 12 * time.Minute},
		{name: "interval phase anchored at creation", spec: Spec{JobName: "ok", Trigger: every(10 * time.Second)}, created: 3 * time.Second,
			steps:    []step{{advance: 10 * time.Second}, {advance: 10 * time.Second}},
			want:     []runView{{At: 13 * time.Second, Status: StatusSucceeded}, {At: 23 * time.Second, Status: StatusSucceeded}},
			wantNext: 33 * time.Second, wantLast: 23 * time.Second},
		{name: "once fires and is spent", spec: Spec{JobName: "ok", Trigger: Trigger{Kind: KindOnce, At: t0.Add(time.Hour)}},
			steps: []step{{advance: time.Hour}, {advance: time.Hour}},
			want:  []runView{{At: time.Hour, Status: StatusSucceeded}}, wantNext: -1, wantLast: time.Hour},
		{name: "failed and panicking jobs", spec: Spec{JobName: "fail", Trigger: every(time.Minute)},
			steps: []step{{advance: time.Minute}},
			want:  []runView{{At: time.Minute, Status: StatusFailed, Error: "boom"}}, wantNext: 2 * time.Minute, wantLast: time.Minute},
		{name: "panic journals failed", spec: Spec{JobName: "panic", Trigger: every(time.Minute)},
			steps:    []step{{advance: time.Minute}},
			want:     []runView{{At: time.Minute, Status: StatusFailed, Error: `cron store: job panicked: job "panic": kaput`}},
			wantNext: 2 * time.Minute, wantLast: time.Minute},
		{name: "typed decode failure journals failed", spec: Spec{JobName: "typed", Trigger: every(time.Minute), Params: []byte(`{"N":"x"}`)},
			steps: []step{{advance: time.Minute}},
			want: []runView{{At: time.Minute, Status: StatusFailed,
				Error: `cron: decode params of job "typed": json: cannot unmarshal string into Go struct field .N of type int`}},
			wantNext: 2 * time.Minute, wantLast: time.Minute},
		{name: "trigger_now fires once at now, cursor untouched", spec: Spec{JobName: "ok", Trigger: every(time.Hour)},
			steps: []step{{advance: 90 * time.Second, trigger: true}},
			want:  []runView{{At: 90 * time.Second, Status: StatusSucceeded}}, wantNext: time.Hour, wantLast: 90 * time.Second},
		{name: "regular occurrence wins a tie, the manual request overlaps", spec: Spec{JobName: "ok", Trigger: every(time.Minute)},
			steps:    []step{{advance: time.Minute, trigger: true}},
			want:     []runView{{At: time.Minute, Status: StatusSucceeded}, {At: time.Minute, Status: StatusSkipped}},
			wantNext: 2 * time.Minute, wantLast: time.Minute},
		{name: "pause keeps the cursor, resume hands the gap to fire_now", spec: Spec{JobName: "ok", Trigger: every(time.Minute)},
			steps:    []step{{pause: true}, {advance: 5*time.Minute + 30*time.Second}, {resume: true}},
			want:     []runView{{At: time.Minute, Status: StatusSucceeded}, {At: 2 * time.Minute, Status: StatusMissed, Missed: 4}},
			wantNext: 6 * time.Minute, wantLast: time.Minute},
	}
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h.clock.Set(t0.Add(tt.created))
				spec := tt.spec
				spec.Name = tt.name
				h.create(t, spec)
				defer func() {
					if err := h.svc.Delete(ctx, tt.name); err != nil {
						t.Errorf("Delete: %v", err)
					}
				}()
				for _, st := range tt.steps {
					h.clock.Advance(st.advance)
					if st.trigger {
						if err := h.svc.TriggerNow(ctx, tt.name); err != nil {
							t.Fatalf("TriggerNow: %v", err)
						}
					}
					if st.pause {
						if err := h.svc.Pause(ctx, "tester", tt.name); err != nil {
							t.Fatalf("Pause: %v", err)
						}
					}
					if st.resume {
						if err := h.svc.Resume(ctx, "tester", tt.name); err != nil {
							t.Fatalf("Resume: %v", err)
						}
					}
					h.claim(t, true)
				}
				if diff := cmp.Diff(tt.want, h.journal(t, tt.name)); diff != "" {
					t.Errorf("journal (-want +got):\n%s", diff)
				}
				sch, err := h.svc.Get(ctx, tt.name)
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if got := offset(sch.NextFireAt); got != tt.wantNext {
					t.Errorf("nextFireAt = %v, want %v", got, tt.wantNext)
				}
				if got := offset(sch.LastFireAt); got != tt.wantLast {
					t.Errorf("lastFireAt = %v, want %v", got, tt.wantLast)
				}
			})
		}
	})
}

// offset is t - t0, or -1 for the zero time.
func offset(t time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return t.Sub(t0)
}

func TestEngineOverlap(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		for _, p := range []ConcurrencyPolicy{ConcurrencyForbid, ConcurrencyAllow} {
			h.create(t, Spec{Name: string(p), JobName: "block", Trigger: every(time.Minute), ConcurrencyPolicy: p})
		}
		h.clock.Advance(time.Minute)
		h.claim(t, false)
		if err := h.svc.TriggerNow(ctx, "forbid"); err != nil {
			t.Fatalf("TriggerNow: %v", err)
		}
		h.clock.Advance(time.Minute)
		h.claim(t, false)
		close(h.release)
		if err := h.svc.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// the manual request (queued at 1m) and the 2m occurrence overlap the live 1m run
		wantForbid := []runView{{At: time.Minute, Status: StatusSucceeded}, {At: time.Minute, Status: StatusSkipped},
			{At: 2 * time.Minute, Status: StatusSkipped}}
		if diff := cmp.Diff(wantForbid, h.journal(t, "forbid")); diff != "" {
			t.Errorf("forbid journal (-want +got):\n%s", diff)
		}
		wantAllow := []runView{{At: time.Minute, Status: StatusSucceeded}, {At: 2 * time.Minute, Status: StatusSucceeded}}
		if diff := cmp.Diff(wantAllow, h.journal(t, "allow")); diff != "" {
			t.Errorf("allow journal (-want +got):\n%s", diff)
		}
	})
}

func TestEngineTimeout(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		h.create(t, Spec{Name: "slow", JobName: "slow", Trigger: every(time.Minute), Timeout: 20 * time.Millisecond})
		h.clock.Advance(time.Minute)
		h.claim(t, true)
		want := []runView{{At: time.Minute, Status: StatusFailed, Error: "cron store: run timed out after 20ms"}}
		if diff := cmp.Diff(want, h.journal(t, "slow")); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		wantEvents := []RunEvent{{ScheduleName: "slow", JobName: "slow", ScheduledAt: "2026-03-01 00:01:00",
			ScheduledAtUnixMs: t0.Add(time.Minute).UnixMilli(), NodeID: "node-a", Error: "cron store: run timed out after 20ms"}}
		if diff := cmp.Diff(wantEvents, h.events.runEvents(EventRunFailed), cmpopts.IgnoreFields(RunEvent{}, "RunID")); diff != "" {
			t.Errorf("failed events (-want +got):\n%s", diff)
		}
	})
}

func TestEngineTakeoverAndRecovery(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		a := newHarness(t, d, "node-a", nil)
		b := attach(t, d, "node-b", nil)
		ctx := context.Background()
		a.create(t, Spec{Name: "r", JobName: "block", Trigger: every(time.Hour), Recover: true})
		a.clock.Advance(time.Hour)
		a.claim(t, false) // node a runs it, then "dies": no heartbeats
		b.clock.Set(a.clock.Now().Add(2 * time.Minute))
		if err := b.svc.Heartbeat(ctx); err != nil { // b tracks nothing: a's row stays stale
			t.Fatal(err)
		}
		if err := b.svc.Sweep(ctx); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		b.claim(t, false)
		close(b.release)
		if err := b.svc.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		runs, err := b.svc.Runs(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(runs))
		for i, r := range runs {
			got[i] = string(r.Status) + "@" + r.NodeID + "@" + r.ScheduledAt.Sub(t0).String()
		}
		want := []string{"abandoned@node-a@1h0m0s", "succeeded@node-b@1h0m0s"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if ev := b.events.runEvents(EventRunAbandoned); len(ev) != 1 || ev[0].RunID != runs[0].ID || ev[0].NodeID != "node-a" {
			t.Errorf("abandoned events = %+v, want one for run %s of node-a", ev, runs[0].ID)
		}
		close(a.release)
		if err := a.svc.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// a's late outcome is discarded: the row stays abandoned
		if runs, _ := a.svc.Runs(ctx, "r"); runs[0].Status != StatusAbandoned {
			t.Errorf("first run status = %s after a late finish, want abandoned", runs[0].Status)
		}
	})
}

func TestEngineOnlyLocalJobs(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		a := newHarness(t, d, "node-a", nil)
		ctx := context.Background()
		a.create(t, Spec{Name: "x", JobName: "ok", Trigger: every(time.Minute)})
		other, err := New(app.Platform{Config: storeConfig(), DB: d, Clock: a.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			Options{Jobs: []JobHandler{Job("elsewhere", noop)}, NodeID: "node-c"})
		if err != nil {
			t.Fatal(err)
		}
		a.clock.Advance(time.Minute)
		if err := other.Claim(ctx); err != nil {
			t.Fatal(err)
		}
		if got := a.journal(t, "x"); len(got) != 0 {
			t.Errorf("a node without the job claimed it: %v", got)
		}
		a.claim(t, true)
		if got := a.journal(t, "x"); len(got) != 1 || got[0].Status != StatusSucceeded {
			t.Errorf("journal = %v, want one succeeded run", got)
		}
	})
}

func TestEngineShutdownCancelsAndRecovers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		h.create(t, Spec{Name: "s", JobName: "slow", Trigger: every(time.Hour), Recover: true})
		h.clock.Advance(time.Hour)
		h.claim(t, false)
		stopCtx, cancel := context.WithCancel(ctx)
		cancel() // no drain time: the straggler is canceled at once
		_ = h.svc.Stop(stopCtx)
		testservice.Eventually(t, 10*time.Second, func() bool {
			got := h.journal(t, "s")
			return len(got) == 1 && got[0].Status == StatusCanceled
		}, "run canceled by shutdown")
		var n int
		if err := h.db.NewSelect().Model((*fireRequest)(nil)).ColumnExpr("COUNT(*)").Where("kind = ?", requestRecovery).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("recovery requests = %d, want 1", n)
		}
	})
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1500) // 3000 bytes
	got := clip(long)
	if len(got) > maxErrorBytes || !strings.HasPrefix(long, got) || len(got) < maxErrorBytes-1 {
		t.Errorf("clip kept %d bytes, want ≤ %d on a rune boundary", len(got), maxErrorBytes)
	}
	if got := clip("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("clip(invalid) = %q", got)
	}
}

// storeConfig is the default configuration with the store enabled.
func storeConfig() *config.Config {
	cfg := config.Default()
	cfg.Cron.Store.Enabled = true
	return cfg
}

// TestEngineTwoNodesFireOnce: two nodes claiming the same due schedules at the same moment
// fire each occurrence once (SKIP LOCKED on PostgreSQL and MySQL, the write lock on SQLite).
func TestEngineTwoNodesFireOnce(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		small := func(c *config.CronStore) { c.BatchSize = 3 }
		a := newHarness(t, d, "node-a", small)
		b := attach(t, d, "node-b", small)
		const n = 12
		for i := range n {
			a.create(t, Spec{Name: "s" + string(rune('a'+i)), JobName: "ok", Trigger: every(time.Minute)})
		}
		a.clock.Advance(time.Minute)
		b.clock.Set(a.clock.Now())
		errc := make(chan error, 1)
		go func() { errc <- a.svc.Claim(context.Background()) }() // no t.Fatal off the test goroutine
		b.claim(t, true)
		if err := <-errc; err != nil {
			t.Fatalf("node a Claim: %v", err)
		}
		a.claim(t, true) // whatever a busy SQLite batch left behind
		b.claim(t, true)
		runs, err := a.svc.Runs(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, r := range runs {
			if r.Status != StatusSucceeded || !r.ScheduledAt.Equal(t0.Add(time.Minute)) {
				t.Errorf("run %s of %s: %s at %v, want succeeded at 1m", r.ID, r.ScheduleName, r.Status, r.ScheduledAt)
			}
			per[r.ScheduleName]++
		}
		if len(per) != n {
			t.Errorf("schedules fired = %d, want %d", len(per), n)
		}
		for name, c := range per {
			if c != 1 {
				t.Errorf("schedule %s fired %d times, want 1", name, c)
			}
		}
	})
}

func TestPrune(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		h := newHarness(t, d, "node-a", func(c *config.CronStore) { c.RunRetention = time.Hour })
		ctx := context.Background()
		h.create(t, Spec{Name: "p", JobName: "ok", Trigger: every(time.Minute)})
		h.create(t, Spec{Name: "b", JobName: "block", Trigger: every(time.Hour)})
		h.clock.Advance(time.Minute)
		h.claim(t, true) // p succeeds at 1m
		h.clock.Advance(time.Hour)
		h.claim(t, false) // b runs (stays running), p fires a catch-up and a missed row at 1h1m
		if err := h.svc.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		testservice.Eventually(t, 10*time.Second, func() bool {
			j := h.journal(t, "p")
			return len(j) == 3 && j[1].Status == StatusSucceeded
		}, "p's catch-up journaled")
		h.clock.Advance(30 * time.Minute)
		if err := h.svc.Prune(ctx); err != nil {
			t.Fatalf("Prune: %v", err)
		}
		want := []runView{{At: 2 * time.Minute, Status: StatusSucceeded}, {At: 3 * time.Minute, Status: StatusMissed, Missed: 59}}
		if diff := cmp.Diff(want, h.journal(t, "p")); diff != "" {
			t.Errorf("p journal after prune (-want +got):\n%s", diff)
		}
		if got := h.journal(t, "b"); len(got) != 1 || got[0].Status != StatusRunning {
			t.Errorf("b journal = %v, want the running row kept", got)
		}
		if n := len(h.svc.Module().Workers); n != 4 {
			t.Errorf("workers = %d with run_retention set, want 4 (with the pruner)", n)
		}
	})
}

// TestWaitingRecoveriesDoNotStarveDueSchedules: schedules whose recovery requests wait on a live
// run are not candidates, so with batch_size 1 a due schedule is still claimed.
func TestWaitingRecoveriesDoNotStarveDueSchedules(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		h := newHarness(t, d, "node-a", func(c *config.CronStore) { c.BatchSize = 1 })
		ctx := context.Background()
		h.create(t, Spec{Name: "busy", JobName: "block", Trigger: every(time.Hour), Recover: true})
		h.clock.Advance(time.Hour)
		h.claim(t, false) // busy runs and stays running
		sch, err := h.svc.Get(ctx, "busy")
		if err != nil {
			t.Fatal(err)
		}
		if err := insertRequest(ctx, d, sch.ID, requestRecovery, t0, "earlier-run"); err != nil {
			t.Fatal(err)
		}
		h.create(t, Spec{Name: "due", JobName: "ok", Trigger: every(time.Minute)})
		h.clock.Advance(time.Minute)
		h.claim(t, false)
		testservice.Eventually(t, 10*time.Second, func() bool {
			j := h.journal(t, "due")
			return len(j) == 1 && j[0].Status == StatusSucceeded
		}, "the due schedule ran despite the waiting recovery")
		if got := h.journal(t, "busy"); len(got) != 1 {
			t.Errorf("busy journal = %v, want only its first run (the recovery waits)", got)
		}
	})
}
