// Package approvalquery measures the approval/my and approval/admin queries and the instance
// detail through /api on a PostgreSQL database holding 100 000 instances (issue #24: p99 ≤ 20
// ms for my.find_pending_tasks and my.get_instance_detail). The seed is bulk-inserted straight into
// the tables in multi-row INSERTs of 1 000 rows (no COPY): one flow with one approval node;
// instances spread over a year with a realistic status mix (65% approved, 10% rejected, 5%
// withdrawn, 5% terminated, 15% running), one node visit, one task and a submit action log each
// (plus the decision's log for a decided task); 1 000 applicants; 3 000 of the running
// instances wait on the benchmark user, the others on 500 other approvers. The tables are
// VACUUM ANALYZEd (as autovacuum keeps a live database) and the plan of the measured query is
// logged (EXPLAIN ANALYZE); each iteration is one /api call; p50 and p99 latencies are reported
// as metrics.
//
//	eval "$(scripts/services.sh)"
//	go test ./bench/approvalquery -run '^$' -bench . -benchtime 2000x -v
//
// Seeding takes under 50 s on the shared machine under load (load average ≈ 11). See
// docs/approval.md for recorded numbers.
package approvalquery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// Seed sizes.
const (
	instances   = 100_000
	benchTasks  = 3_000
	applicants  = 1_000
	approvers   = 500
	batchRows   = 1_000
	benchUserID = "bench"
)

// lastQuery is a bun hook keeping the last SELECT on the apv_* tables of each kind — the page
// (with a LIMIT) and its count — so the benchmark can EXPLAIN exactly what the server ran.
type lastQuery struct {
	mu           sync.Mutex
	page, counts string
}

var _ bun.QueryHook = (*lastQuery)(nil)

// BeforeQuery implements bun.QueryHook.
func (h *lastQuery) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (h *lastQuery) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !strings.HasPrefix(e.Query, "SELECT") || !strings.Contains(e.Query, "apv_") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case strings.Contains(e.Query, "LIMIT"):
		h.page = e.Query
	case strings.HasPrefix(e.Query, "SELECT count(*)"):
		h.counts = e.Query
	}
}

// BenchmarkMyQueries seeds once and measures each query as a sub-benchmark.
func BenchmarkMyQueries(b *testing.B) {
	hook := &lastQuery{}
	srv := svctest.New(b, svctest.WithDB(config.Postgres), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Log.Level = "error"
		c.API.RateLimit.Max = 1 << 30 // measure the queries, not the default limit
	}), svctest.WithOptions(svc.WithApproval(approval.Options{})), svctest.WithQueryHook(hook))
	start := time.Now()
	seed(b, srv)
	b.Logf("seeded %d instances in %s", instances, time.Since(start).Round(time.Millisecond))
	me := principal(benchUserID)
	mine := pendingInstances(b, srv)
	queries := []struct {
		name, resource, action string
		params                 func(i int) string
	}{
		{"find_pending_tasks", "approval/my", "find_pending_tasks", func(i int) string {
			return fmt.Sprintf(`{"page":%d,"pageSize":20}`, 1+i%10)
		}},
		{"get_pending_counts", "approval/my", "get_pending_counts", func(int) string { return `{}` }},
		{"admin_find_instances", "approval/admin", "find_instances", func(i int) string {
			return fmt.Sprintf(`{"page":%d,"pageSize":20}`, 1+i%10)
		}},
		{"admin_find_tasks_of_user", "approval/admin", "find_tasks", func(i int) string {
			return fmt.Sprintf(`{"assigneeId":"%s","status":"pending","page":%d,"pageSize":20}`, benchUserID, 1+i%10)
		}},
		{"get_instance_detail", "approval/my", "get_instance_detail", func(i int) string {
			return `{"instanceId":"` + mine[i%len(mine)] + `"}`
		}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				r := srv.Call(b, q.resource, q.action, jsonOf(b, q.params(i)), svctest.As(me))
				lat = append(lat, time.Since(t0))
				if r.Code != 0 {
					b.Fatalf("%s: code %d %s", q.name, r.Code, r.Message)
				}
			}
			b.StopTimer()
			report(b, lat)
		})
		explain(b, srv, hook)
	}
}

// pendingInstances are the ids of the instances waiting on the benchmark user, whose details
// the user may read.
func pendingInstances(b *testing.B, srv *svctest.Server) []string {
	var ids []string
	if err := srv.DB().NewSelect().Table("apv_task").Column("instance_id").Where("assignee_id = ?", benchUserID).
		Where("status = ?", approval.TaskPending).Limit(1000).Scan(context.Background(), &ids); err != nil {
		b.Fatal(err)
	}
	if len(ids) == 0 {
		b.Fatal("no pending task of the benchmark user was seeded")
	}
	return ids
}

// report adds the p50 and p99 latencies in milliseconds.
func report(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// explain logs the PostgreSQL plans of the last page and count queries the server ran, if any,
// and forgets them.
func explain(b *testing.B, srv *svctest.Server, hook *lastQuery) {
	hook.mu.Lock()
	queries := []string{hook.page, hook.counts}
	hook.page, hook.counts = "", ""
	hook.mu.Unlock()
	for _, q := range queries {
		if q == "" {
			continue
		}
		var plan []string
		if err := srv.DB().NewRaw("EXPLAIN (ANALYZE, BUFFERS) "+q).Scan(context.Background(), &plan); err != nil {
			b.Fatal(err)
		}
		b.Logf("plan of %s\n%s", q, strings.Join(plan, "\n"))
	}
}

func principal(id string) *rpc.Principal {
	p := svctest.User(id, "admin")
	p.Details = map[string]any{"tenantId": "t1"}
	return p
}

func jsonOf(b *testing.B, s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		b.Fatal(err)
	}
	return v
}
