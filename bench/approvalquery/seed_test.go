package approvalquery

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

const flowDef = `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":1},"data":{"name":"Review","assignees":[{"kind":"user","ids":["u1"],"sortOrder":0}]}},
 {"id":"e","kind":"end","position":{"x":0,"y":2},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"e"}]}`

// fixture is the published flow the seeded instances belong to.
type fixture struct {
	flowID, versionID, nodeID string
}

// seed publishes the flow through /api, bulk-inserts the instances with their visits, tasks and
// action logs, and refreshes the planner statistics.
func seed(b *testing.B, srv *svctest.Server) {
	ctx := context.Background()
	fx := publish(b, srv)
	base := time.Now().UTC().Add(-365 * 24 * time.Hour)
	batches := make(chan []any)
	errs := make(chan error, seedWorkers)
	for range seedWorkers {
		go func() { errs <- insertBatches(ctx, srv, batches) }()
	}
	mine := 0
	for from := 0; from < instances; from += batchRows {
		batches <- batch(fx, base, from, &mine)
	}
	close(batches)
	for range seedWorkers {
		if err := <-errs; err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	if _, err := srv.DB().ExecContext(ctx, "VACUUM ANALYZE apv_instance, apv_node_visit, apv_task, apv_action_log"); err != nil {
		b.Fatal(err)
	}
}

// seedWorkers insert batches side by side, each batch in one transaction.
const seedWorkers = 2

// insertBatches inserts each batch's tables in order in one transaction until batches closes;
// after a failure it drains the channel and answers the error.
func insertBatches(ctx context.Context, srv *svctest.Server, batches <-chan []any) error {
	var failed error
	for rows := range batches {
		if failed != nil {
			continue
		}
		failed = srv.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			// The seed needs no durability: skip the WAL flush at each commit.
			if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
			for _, r := range rows {
				if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return failed
}

// batch builds instances from..from+batchRows with their visits, tasks and action logs (in
// foreign-key order); mine counts the pending tasks given to the benchmark user so far.
func batch(fx fixture, base time.Time, from int, mine *int) []any {
	step := 365 * 24 * time.Hour / instances
	var (
		insts  []approval.Instance
		visits []approval.Visit
		tasks  []approval.Task
		logs   []approval.ActionLog
	)
	for i := from; i < min(from+batchRows, instances); i++ {
		created := crud.NewTime(base.Add(time.Duration(i) * step))
		inst, v, t := row(fx, i, created)
		if t.Status == approval.TaskPending && *mine < benchTasks {
			t.AssigneeID, t.AssigneeName, *mine = benchUserID, benchUserID, *mine+1
		}
		insts, visits, tasks = append(insts, inst), append(visits, v), append(tasks, t)
		logs = append(logs, actionLog(inst, nil, approval.ActionSubmit, inst.ApplicantID, created))
		if t.Status == approval.TaskApproved || t.Status == approval.TaskRejected {
			logs = append(logs, actionLog(inst, &t, decision(t.Status), t.AssigneeID, t.FinishedAt))
		}
	}
	return []any{&insts, &visits, &tasks, &logs}
}

// publish creates, deploys, publishes and activates the flow and reads its ids back.
func publish(b *testing.B, srv *svctest.Server) fixture {
	admin := principal("admin")
	call := func(resource, action, params string) map[string]any {
		r := srv.Call(b, resource, action, jsonOf(b, params), svctest.As(admin))
		if r.Code != 0 {
			b.Fatalf("%s.%s: %d %s", resource, action, r.Code, r.Message)
		}
		var m map[string]any
		r.DataAs(b, &m)
		return m
	}
	cat := call("approval/category", "create", `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`)["id"]
	f := call("approval/flow", "create", fmt.Sprintf(`{"tenantId":"t1","code":"bench","name":"Bench","categoryId":"%s","bindingMode":"standalone","isAllInitiationAllowed":true}`, cat))["id"].(string)
	v := call("approval/flow", "deploy", fmt.Sprintf(`{"flowId":"%s","flowDefinition":%s}`, f, flowDef))["id"].(string)
	call("approval/flow", "publish_version", fmt.Sprintf(`{"versionId":"%s"}`, v))
	call("approval/flow", "toggle_active", fmt.Sprintf(`{"flowId":"%s","isActive":true}`, f))
	fx := fixture{flowID: f, versionID: v}
	if err := srv.DB().NewSelect().Table("apv_flow_node").Column("id").Where("flow_version_id = ?", v).Where("key = ?", "a").
		Scan(context.Background(), &fx.nodeID); err != nil {
		b.Fatal(err)
	}
	return fx
}

// statusOf spreads the statuses: 65% approved, 10% rejected, 5% withdrawn, 5% terminated, 15%
// running; the task status follows.
func statusOf(i int) (instance, task, visit string) {
	switch r := i % 20; {
	case r < 13:
		return approval.InstanceApproved, approval.TaskApproved, approval.VisitPassed
	case r < 15:
		return approval.InstanceRejected, approval.TaskRejected, approval.VisitRejected
	case r < 16:
		return approval.InstanceWithdrawn, approval.TaskCanceled, approval.VisitCanceled
	case r < 17:
		return approval.InstanceTerminated, approval.TaskCanceled, approval.VisitCanceled
	}
	return approval.InstanceRunning, approval.TaskPending, approval.VisitActive
}

// row is instance i with its visit of the approval node and its task.
func row(fx fixture, i int, created crud.Time) (approval.Instance, approval.Visit, approval.Task) {
	is, ts, vs := statusOf(i)
	applicant, approver := fmt.Sprintf("user%04d", i%applicants), fmt.Sprintf("approver%03d", i%approvers)
	inst := approval.Instance{TenantID: "t1", FlowID: fx.flowID, FlowCode: "bench", FlowVersionID: fx.versionID,
		Title: fmt.Sprintf("%s: Bench #%d", applicant, i), InstanceNo: fmt.Sprintf("BENCH-%06d", i), ApplicantID: applicant,
		ApplicantName: applicant, Status: is, FormData: map[string]any{"amount": i % 5000}}
	inst.Audited = crud.Audited{ID: rpc.NewID(), CreatedAt: created, CreatedBy: applicant, UpdatedAt: created, UpdatedBy: applicant}
	finished := crud.NewTime(created.Add(time.Duration(1+i%72) * time.Hour))
	v := approval.Visit{ID: rpc.NewID(), CreatedAt: created, CreatedBy: applicant, TenantID: "t1", InstanceID: inst.ID,
		NodeID: fx.nodeID, Sequence: 1, Status: vs}
	t := approval.Task{TenantID: "t1", InstanceID: inst.ID, NodeID: fx.nodeID, VisitID: v.ID, AssigneeID: approver,
		AssigneeName: approver, Status: ts}
	t.Audited = crud.Audited{ID: rpc.NewID(), CreatedAt: created, CreatedBy: applicant, UpdatedAt: created, UpdatedBy: applicant}
	if is == approval.InstanceRunning {
		inst.CurrentNodeID = &fx.nodeID
	} else {
		inst.FinishedAt, v.FinishedAt, t.FinishedAt = finished, finished, finished
	}
	return inst, v, t
}

// actionLog is the log of action on inst by operator (of task t when not nil).
func actionLog(inst approval.Instance, t *approval.Task, action, operator string, at crud.Time) approval.ActionLog {
	l := approval.ActionLog{ID: rpc.NewID(), CreatedAt: at, CreatedBy: operator, InstanceID: inst.ID, Action: action,
		OperatorID: operator, OperatorName: operator, AddedAssignees: []approval.UserInfo{}, RemovedAssignees: []approval.UserInfo{},
		CCUsers: []approval.UserInfo{}}
	if t != nil {
		l.NodeID, l.TaskID = &t.NodeID, &t.ID
	}
	return l
}

// decision is the action that leaves a task in status.
func decision(status string) string {
	if status == approval.TaskRejected {
		return approval.ActionReject
	}
	return approval.ActionApprove
}
