package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// decideFlow is start → a (u1) → b (u2) → c (u3) → end: approving a's task closes its visit and
// enters b (visit, form snapshot, task, action log, instance row, outbox rows of the events).
const decideFlow = `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":1},"data":{"name":"A","assignees":[{"kind":"user","ids":["u1"],"sortOrder":0}]}},
 {"id":"b","kind":"approval","position":{"x":0,"y":2},"data":{"name":"B","assignees":[{"kind":"user","ids":["u2"],"sortOrder":0}]}},
 {"id":"c","kind":"approval","position":{"x":0,"y":3},"data":{"name":"C","assignees":[{"kind":"user","ids":["u3"],"sortOrder":0}]}},
 {"id":"e","kind":"end","position":{"x":0,"y":4},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"c"},
 {"id":"e4","source":"c","target":"e"}]}`

// BenchmarkDecide measures one decision — u1 approves node a of decideFlow, the instance moves to
// b — with the run's writes batched (one round trip per flush on PostgreSQL) and unbatched (each
// write executed when queued), one client at a time, so the figure is the command's latency.
// Only process_task is timed; the start before it is not. stmts/op counts the approval's
// statements that name an apv_* table (stmtCounter; a joined PostgreSQL flush counts once):
//
//	eval "$(scripts/services.sh)"   # or source the test environment
//	go test ./approval -run '^$' -bench Decide/postgres -benchtime 2000x -count 3
func BenchmarkDecide(b *testing.B) {
	for _, kind := range []config.DBKind{config.SQLite, config.Postgres, config.MySQL} {
		b.Run(string(kind), func(b *testing.B) {
			stmts := &stmtCounter{}
			srv := svctest.New(b, svctest.WithDB(kind), svctest.WithQueryHook(stmts), svctest.WithConfig(func(c *config.Config) {
				c.Security.Roles = map[string][]string{"admin": {"*"}}
				c.Log.Level = "error"
				c.API.RateLimit.Max = 1 << 30
			}), svctest.WithOptions(svc.WithApproval(approval.Options{})))
			admin := tenantUser("admin", "t1", "admin")
			cat := benchCall(b, srv, admin, catR, "create", `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`)["id"]
			f := benchCall(b, srv, admin, flowR, "create", fmt.Sprintf(`{"tenantId":"t1","code":"decide","name":"Decide","categoryId":"%s","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`, cat))["id"]
			v := benchCall(b, srv, admin, flowR, "deploy", fmt.Sprintf(`{"flowId":"%s","flowDefinition":%s}`, f, decideFlow))["id"]
			benchCall(b, srv, admin, flowR, "publish_version", fmt.Sprintf(`{"versionId":"%s"}`, v))
			benchCall(b, srv, admin, flowR, "toggle_active", fmt.Sprintf(`{"flowId":"%s","isActive":true}`, f))
			applicant, approver := tenantUser("app", "t1", "admin"), tenantUser("u1", "t1", "admin")
			for _, mode := range []struct {
				name   string
				atOnce bool
			}{{"batched", false}, {"unbatched", true}} {
				b.Run(mode.name, func(b *testing.B) {
					approval.SetWritesAtOnce(srv.Approval(), mode.atOnce)
					defer approval.SetWritesAtOnce(srv.Approval(), false)
					var total int
					b.ResetTimer()
					for range b.N {
						b.StopTimer()
						id := benchCall(b, srv, applicant, instR, "start", `{"tenantId":"t1","flowCode":"decide","formData":{}}`)["id"].(string)
						var task string
						if err := srv.DB().NewSelect().Table("apv_task").Column("id").Where("instance_id = ?", id).Scan(context.Background(), &task); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						total += len(stmts.measure(func() {
							benchCall(b, srv, approver, instR, "process_task", fmt.Sprintf(`{"taskId":"%s","action":"approve"}`, task))
						}))
					}
					b.ReportMetric(float64(total)/float64(b.N), "stmts/op")
				})
			}
		})
	}
}

// benchCall posts resource.action with params as p and fails b unless the answer is code 0.
func benchCall(b *testing.B, srv *svctest.Server, p *rpc.Principal, resource, action, params string) map[string]any {
	b.Helper()
	var v any
	if err := json.Unmarshal([]byte(params), &v); err != nil {
		b.Fatal(err)
	}
	r := srv.Call(b, resource, action, v, svctest.As(p))
	if r.Code != 0 {
		b.Fatalf("%s.%s: %d %s", resource, action, r.Code, r.Message)
	}
	var m map[string]any
	_ = json.Unmarshal(r.Data, &m)
	return m
}
