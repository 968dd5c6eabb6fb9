// Package approvalbench measures the approval engine end to end through /api: each iteration
// starts an instance of a three-node flow (start → approval → end) as the applicant and
// approves its task as the assignee, so the instance ends approved. Parallel clients
// (-cpu / GOMAXPROCS × RunParallel) drive the server; the metric instances/s counts complete
// instances.
//
//	go test ./bench/approval -run '^$' -bench . -benchtime 2000x             # SQLite
//	eval "$(scripts/services.sh)"; go test ./bench/approval -run '^$' -bench . -benchtime 2000x
//
// The task id is read from apv_task, keeping the measured path on the engine (bench/approvalquery
// measures the approval/my lists). The metric stmts/instance counts every statement the
// server's database ran per instance (a bun query hook: the engine's, the outbox relay's, BEGIN
// and COMMIT, and this benchmark's task lookup; a joined PostgreSQL flush counts once, as the
// one round trip it is); SVC_BENCH_STMTS=1 with -v logs them by verb and table. Since the write
// batching, PostgreSQL runs about half the statements per instance it did and MariaDB and SQLite
// about a fifth fewer. This is the in-process diagnostic; issue #23's targets are measured on the
// shipped binary by run.sh (svc serve, real logins, the approver's pending list, default logging).
// See docs/approval.md for recorded and relative numbers.
package approvalbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

const flowDef = `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":1},"data":{"name":"A","assignees":[{"kind":"user","ids":["u1"],"sortOrder":0}]}},
 {"id":"e","kind":"end","position":{"x":0,"y":2},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"e"}]}`

func principal(id string) *rpc.Principal {
	p := svctest.User(id, "admin")
	p.Details = map[string]any{"tenantId": "t1"}
	return p
}

func call(b *testing.B, srv *svctest.Server, as *rpc.Principal, resource, action, params string) map[string]any {
	var v any
	if err := json.Unmarshal([]byte(params), &v); err != nil {
		b.Fatal(err)
	}
	r := srv.Call(b, resource, action, v, svctest.As(as))
	if r.Code != 0 {
		b.Fatalf("%s.%s: %d %s", resource, action, r.Code, r.Message)
	}
	var m map[string]any
	_ = json.Unmarshal(r.Data, &m)
	return m
}

func BenchmarkStartApproveEnd(b *testing.B) {
	for _, kind := range []config.DBKind{config.SQLite, config.Postgres, config.MySQL} {
		b.Run(string(kind), func(b *testing.B) {
			stmts := newStmtCounter()
			srv := svctest.New(b, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
				c.Security.Roles = map[string][]string{"admin": {"*"}}
				c.Log.Level = "error"
				c.API.RateLimit.Max = 1 << 30 // measure the engine, not the default limit
			}), svctest.WithOptions(svc.WithApproval(approval.Options{})), svctest.WithQueryHook(stmts))
			admin := principal("admin")
			cat := call(b, srv, admin, "approval/category", "create", `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`)["id"]
			f := call(b, srv, admin, "approval/flow", "create", fmt.Sprintf(`{"tenantId":"t1","code":"bench","name":"Bench","categoryId":"%s","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`, cat))["id"]
			v := call(b, srv, admin, "approval/flow", "deploy", fmt.Sprintf(`{"flowId":"%s","flowDefinition":%s}`, f, flowDef))["id"]
			call(b, srv, admin, "approval/flow", "publish_version", fmt.Sprintf(`{"versionId":"%s"}`, v))
			call(b, srv, admin, "approval/flow", "toggle_active", fmt.Sprintf(`{"flowId":"%s","isActive":true}`, f))
			applicant, approver := principal("app"), principal("u1")
			stmts.reset()
			var done atomic.Int64
			b.SetParallelism(8) // 8 × GOMAXPROCS clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := call(b, srv, applicant, "approval/instance", "start", `{"tenantId":"t1","flowCode":"bench","formData":{}}`)["id"].(string)
					var task string
					if err := srv.DB().NewSelect().Table("apv_task").Column("id").Where("instance_id = ?", id).Scan(context.Background(), &task); err != nil {
						b.Fatal(err)
					}
					call(b, srv, approver, "approval/instance", "process_task", fmt.Sprintf(`{"taskId":"%s","action":"approve"}`, task))
					done.Add(1)
				}
			})
			b.StopTimer()
			stmts.on.Store(false)
			var approved int
			if err := srv.DB().NewSelect().Table("apv_instance").ColumnExpr("COUNT(*)").Where("status = ?", "approved").Scan(context.Background(), &approved); err != nil {
				b.Fatal(err)
			}
			if int64(approved) != done.Load() {
				b.Fatalf("%d instances approved, %d completed", approved, done.Load())
			}
			b.ReportMetric(float64(done.Load())/b.Elapsed().Seconds(), "instances/s")
			// The benchmark's own task lookup is one SELECT apv_task per instance among them.
			b.ReportMetric(float64(stmts.total.Load())/float64(done.Load()), "stmts/instance")
			if os.Getenv("SVC_BENCH_STMTS") != "" {
				b.Logf("statements per instance by kind:\n%s", stmts.breakdown(done.Load()))
			}
		})
	}
}
