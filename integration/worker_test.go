package integration

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
)

// TestWorker is the script worker executable every engine and server of the package's tests
// starts (Limits.Worker): testdata/worker built by TestMain without the race detector.
var TestWorker string

// runWithWorker builds the tests' script worker once (Go's build cache keeps its packages, so
// a rebuild only links) into a temporary directory and runs the tests with it (TestMain). A
// race-built test binary as its own worker would run every script under the race detector,
// several times slower and with several times the memory, so the memory limits and deadlines
// the tests check would be the detector's, not those of the worker that ships.
func runWithWorker(m *testing.M) int {
	dir, err := os.MkdirTemp("", "svc-integration-worker-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	TestWorker = filepath.Join(dir, "worker")
	build := exec.Command("go", "build", "-o", TestWorker, "./testdata/worker")
	build.Env = testservice.ChildEnv("GOFLAGS=" + withoutRace(os.Getenv("GOFLAGS")))
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the script worker: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// withoutRace is GOFLAGS without -race: the worker is a plain build whatever the caller asked.
func withoutRace(flags string) string {
	var keep []string
	for _, f := range strings.Fields(flags) {
		if f != "-race" && f != "--race" && !strings.HasPrefix(f, "-race=") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// anonMemory is the process's anonymous memory in bytes (Anonymous in
// /proc/self/smaps_rollup: the heap and stacks, not the mapped binary).
func anonMemory(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Fatalf("smaps_rollup: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Anonymous:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no Anonymous line in %q", raw)
	return 0
}

// peakAnon samples anonMemory every 2 ms until stop is called and answers the highest value.
func peakAnon(t *testing.T) (stop func() int64) {
	var peak atomic.Int64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := anonMemory(t); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// processGone reports whether pid no longer runs: reaped (no /proc entry), or killed and not
// yet reaped (state Z or X), which uses no CPU.
func processGone(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	s := string(raw)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// busyPID waits until the engine has a worker running a script and answers its pid.
func busyPID(t *testing.T, e *Engine) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := e.pool.pids(); len(p) > 0 {
			return p[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no worker started")
	return 0
}

// AnonMemory, PeakAnon and ProcessGone are anonMemory, peakAnon and processGone for the
// package's external tests.
var (
	AnonMemory  = anonMemory
	PeakAnon    = peakAnon
	ProcessGone = processGone
)

// WarmWorkers waits until every worker of s's pool is up and idle.
func WarmWorkers(t *testing.T, s *Service) {
	t.Helper()
	if err := s.engine.pool.prestart(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// BusyWorkerPIDs are the pids of s's workers running a script.
func BusyWorkerPIDs(s *Service) []int { return s.engine.pool.pids() }

var (
	testCache = config.ScriptCache{}
	testLog   = slog.New(slog.DiscardHandler)
)

// TestConcurrencyCap: with a cap of one, a second run waits for the first (queue_wait), and
// once the wait is over fails with 2630 (kind timeout) while the first still runs; after the
// first ends, runs go on.
func TestConcurrencyCap(t *testing.T) {
	t.Parallel()
	e := NewEngine(Limits{Concurrency: 1, QueueWait: 300 * time.Millisecond, Worker: TestWorker}, testCache, testLog, time.Now)
	t.Cleanup(e.Close)
	// A worker up before the first run: the queue wait (300 ms) bounds a worker's start too,
	// and a start on a loaded machine can take longer.
	if err := e.pool.prestart(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, _, err := evalBody(t, e, 3*time.Second, "for (;;) {}")
		first <- err
	}()
	busyPID(t, e)
	start := time.Now()
	_, kind, err := evalBody(t, e, 10*time.Second, "return 1")
	waited := time.Since(start)
	if kind != KindTimeout || !errors.Is(err, ErrScriptsBusy) {
		t.Errorf("second run: kind %q, %v; want timeout, 2630", kind, err)
	}
	if waited < 300*time.Millisecond || waited > 3*time.Second {
		t.Errorf("second run answered after %v, want after the queue wait (300ms) and before the first run's end", waited)
	}
	if err := <-first; !errors.Is(err, ErrInvocationTimeout) {
		t.Errorf("first run: %v, want a timeout", err)
	}
	if out, _, err := evalBody(t, e, 10*time.Second, "return 2"); err != nil || out != "2" {
		t.Errorf("a run after them: %s %v", out, err)
	}
}
