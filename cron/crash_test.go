package cron

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// Environment of the crash child: the test binary re-executed, run as a node by TestMain.
const (
	envCrashDS     = "SVC_CRON_CRASH_DS"     // JSON config.DataSource
	envCrashMarker = "SVC_CRON_CRASH_MARKER" // file the child writes when its run has started
)

// crashStore is the configuration of both nodes: heartbeats and takeover in real seconds.
func crashStore(c *config.CronStore) {
	c.Enabled = true
	c.PollInterval, c.HeartbeatInterval, c.AbandonedAfter = 100*time.Millisecond, 200*time.Millisecond, time.Second
}

// TestMain runs the crash child instead of the tests when crash tests re-execute this binary.
func TestMain(m *testing.M) {
	if raw := os.Getenv(envCrashDS); raw != "" {
		err := crashChild(raw, os.Getenv(envCrashMarker))
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// crashChild is a node whose job "work" writes the marker and blocks forever; it claims and
// heartbeats like a server until it is killed.
func crashChild(rawDS, marker string) error {
	var ds config.DataSource
	if err := json.Unmarshal([]byte(rawDS), &ds); err != nil {
		return err
	}
	ctx := context.Background()
	d, err := db.Open(ctx, config.PrimaryDataSource, ds)
	if err != nil {
		return err
	}
	cfg := config.Default()
	crashStore(&cfg.Cron.Store)
	work := Job("work", func(context.Context, Execution) error {
		if err := os.WriteFile(marker, []byte("started"), 0o600); err != nil {
			return err
		}
		select {}
	})
	s, err := New(app.Platform{Config: cfg, DB: d, Clock: time.Now, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))},
		Options{Jobs: []JobHandler{work}, NodeID: "victim"})
	if err != nil {
		return err
	}
	go func() {
		for range time.Tick(cfg.Cron.Store.HeartbeatInterval) {
			_ = s.Heartbeat(ctx)
		}
	}()
	for {
		_ = s.loop(ctx)
	}
}

// A node killed by SIGKILL in the middle of a run: another node marks the run abandoned once
// abandoned_after passes without heartbeat and, since the schedule recovers, runs it again once
// at the original logical time.
func TestCrashedRunIsRecoveredOnce(t *testing.T) {
	t.Parallel()
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			checkCrashRecovery(t, testservice.DataSource(t, kind))
		})
	}
}

func checkCrashRecovery(t *testing.T, ds config.DataSource) {
	ctx := context.Background()
	cfg := config.Default()
	crashStore(&cfg.Cron.Store)
	var mu sync.Mutex
	var ran []time.Time
	work := Job("work", func(_ context.Context, e Execution) error {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, e.ScheduledAt)
		return nil
	})
	events := &recorder{}
	survivor, err := New(app.Platform{Config: cfg, DB: testservice.OpenDB(t, ds), Clock: time.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Options{Jobs: []JobHandler{work}, NodeID: "survivor", Events: events})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = survivor.Stop(ctx) })
	if err := db.Migrate(ctx, survivor.db, *Migrations()); err != nil {
		t.Fatal(err)
	}
	fireAt := time.Now().Add(500 * time.Millisecond).Truncate(time.Millisecond)
	if _, err := survivor.Create(ctx, "tester", Spec{Name: "crashy", JobName: "work", Recover: true,
		Trigger: Trigger{Kind: KindOnce, At: fireAt}}); err != nil {
		t.Fatal(err)
	}

	child := startCrashChild(t, ds)
	marker := child.marker
	testservice.Eventually(t, 30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }, "the child started its run")
	if err := child.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = child.cmd.Wait()
	killedAt := time.Now()

	testservice.Eventually(t, 30*time.Second, func() bool {
		_ = survivor.Sweep(ctx)
		_ = survivor.Claim(ctx)
		_ = survivor.Wait(ctx)
		mu.Lock()
		defer mu.Unlock()
		return len(ran) > 0
	}, "the survivor re-ran the abandoned occurrence")
	if waited := time.Since(killedAt); waited < 500*time.Millisecond {
		t.Errorf("recovered %s after the kill: before abandoned_after could pass", waited)
	}
	for range 3 { // further passes must not run it again
		_ = survivor.Sweep(ctx)
		_ = survivor.Claim(ctx)
	}
	_ = survivor.Wait(ctx)
	checkRecovered(t, survivor, events, fireAt, ran)
}

// checkRecovered asserts the journal of "crashy": the victim's run abandoned, then one
// succeeded run of the survivor, both at the original logical time, and one abandoned event.
func checkRecovered(t *testing.T, s *Service, events *recorder, fireAt time.Time, ran []time.Time) {
	t.Helper()
	if len(ran) != 1 || !ran[0].Equal(fireAt) {
		t.Fatalf("the survivor ran the job at %v, want once at %v", ran, fireAt)
	}
	runs, err := s.Runs(context.Background(), "crashy")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s %s %t", r.NodeID, r.Status, r.ScheduledAt.Equal(fireAt)))
	}
	want := []string{"victim abandoned true", "survivor succeeded true"}
	if len(got) != 2 || (got[0] != want[0] || got[1] != want[1]) && (got[1] != want[0] || got[0] != want[1]) {
		t.Fatalf("journal %q, want %q", got, want)
	}
	if ab := events.runEvents(EventRunAbandoned); len(ab) != 1 || ab[0].NodeID != "victim" {
		t.Fatalf("abandoned events %+v, want one for the victim's run", ab)
	}
}

// crashChildProc is a running crash child.
type crashChildProc struct {
	cmd    *exec.Cmd
	marker string
}

// startCrashChild re-executes the test binary as a node over ds.
func startCrashChild(t *testing.T, ds config.DataSource) crashChildProc {
	t.Helper()
	raw, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = testservice.ChildEnv(envCrashDS+"="+string(raw), envCrashMarker+"="+marker)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("crash child stderr:\n%s", stderr.String())
		}
	})
	return crashChildProc{cmd: cmd, marker: marker}
}
