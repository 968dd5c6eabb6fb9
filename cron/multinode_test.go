package cron

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// clusterNode builds one node named name over its own connection pool to ds, on clock, with the
// job "tick" that counts its calls.
func clusterNode(t *testing.T, ds config.DataSource, name string, clock func() time.Time, mutate func(*config.CronStore), calls *atomic.Int64) *Service {
	t.Helper()
	cfg := config.Default()
	cfg.Cron.Store.Enabled = true
	if mutate != nil {
		mutate(&cfg.Cron.Store)
	}
	tick := Job("tick", func(context.Context, Execution) error { calls.Add(1); return nil })
	s, err := New(app.Platform{Config: cfg, DB: testservice.OpenDB(t, ds), Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Options{Jobs: []JobHandler{tick}, NodeID: name})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// claimAll runs one claim pass on every node at once and waits for their runs.
func claimAll(t *testing.T, nodes []*Service) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = n.Claim(context.Background()); errs[i] == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				errs[i] = n.Wait(ctx)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
}

// The acceptance property of the multi-node scheduler (issue #16): 200 schedules with 1-second
// intervals claimed for 30 logical seconds by three nodes on PostgreSQL and two on MariaDB —
// every logical occurrence is journaled exactly once, none is missing (half the schedules
// forbid overlap, so an occurrence due while the previous run is live is journaled skipped, as
// the policy says). The clock is a fake one shared by the nodes and moved by irregular steps
// (0.2 s to 2.8 s: several occurrences can be due in one claim), so 30 s of schedule time
// take a few seconds of wall time; the claims of the nodes still race for the same rows in
// real, concurrent transactions, which is what exactly-once depends on.
func TestClusterFiresEachOccurrenceOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind  config.DBKind
		nodes int
	}{{config.Postgres, 3}, {config.MySQL, 2}} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			checkCluster(t, testservice.DataSource(t, tc.kind), tc.nodes)
		})
	}
}

func checkCluster(t *testing.T, ds config.DataSource, n int) {
	const schedules, span = 200, 30 * time.Second
	ctx := context.Background()
	clock := testservice.NewClock(t0)
	var calls atomic.Int64
	nodes := make([]*Service, n)
	for i := range nodes {
		nodes[i] = clusterNode(t, ds, fmt.Sprintf("node-%d", i), clock.Now, func(c *config.CronStore) {
			c.BatchSize, c.MaxConcurrent = 64, 256
		}, &calls)
	}
	if err := db.Migrate(ctx, nodes[0].db, *Migrations()); err != nil {
		t.Fatal(err)
	}
	for i := range schedules {
		policy := ConcurrencyAllow
		if i%2 == 1 {
			policy = ConcurrencyForbid // an occurrence due while the previous one runs is skipped
		}
		spec := Spec{Name: fmt.Sprintf("s%03d", i), JobName: "tick", Trigger: every(time.Second), ConcurrencyPolicy: policy}
		if _, err := nodes[i%n].Create(ctx, "tester", spec); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for clock.Now().Sub(t0) < span {
		clock.Advance(min(time.Duration(200+rng.IntN(2600))*time.Millisecond, span-clock.Now().Sub(t0)))
		claimAll(t, nodes)
	}
	claimAll(t, nodes) // a last pass for what the final step left due
	if fired := checkJournal(t, nodes[0], schedules, span, n); int(calls.Load()) != fired {
		t.Errorf("the job ran %d times, the journal has %d fired runs", calls.Load(), fired)
	}
}

// checkJournal asserts that every occurrence of every schedule is journaled exactly once, as a
// succeeded run or, for forbid schedules only, a skipped row (an occurrence due while the
// previous run was live), with no missed row (the clock never passes misfire_threshold), and
// that every node fired runs. It returns the number of succeeded runs.
func checkJournal(t *testing.T, s *Service, schedules int, span time.Duration, n int) int {
	t.Helper()
	runs, err := s.Runs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	byNode := map[string]int{}
	fired := 0
	for _, r := range runs {
		var idx int
		_, _ = fmt.Sscanf(r.ScheduleName, "s%03d", &idx)
		switch {
		case r.Status == StatusSucceeded:
			fired++
			byNode[r.NodeID]++
		case r.Status == StatusSkipped && idx%2 == 1:
		default:
			t.Errorf("run %s of %s at %s: status %s (%s)", r.ID, r.ScheduleName, r.ScheduledAt, r.Status, r.Error)
		}
		seen[fmt.Sprintf("%s@%d", r.ScheduleName, r.ScheduledAt.Sub(t0)/time.Second)]++
	}
	for i := range schedules {
		for k := 1; k <= int(span/time.Second); k++ {
			if c := seen[fmt.Sprintf("s%03d@%d", i, k)]; c != 1 {
				t.Errorf("s%03d at +%ds journaled %d times, want once", i, k, c)
			}
		}
	}
	if want := schedules * int(span/time.Second); len(runs) != want {
		t.Errorf("%d runs journaled, want %d", len(runs), want)
	}
	if len(byNode) != n {
		t.Errorf("runs by node %v: want every one of the %d nodes to claim", byNode, n)
	}
	return fired
}
