package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
)

// maxDepth guards the forward walk against a corrupt graph (deploy rejects cycles).
const maxDepth = 256

// enter walks forward from node n until a node waits or the flow ends.
func (r *run) enter(ctx context.Context, n *Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("approval: the walk from %s is too deep", n.Key)
	}
	id := n.ID
	r.inst.CurrentNodeID = &id
	switch n.Kind {
	case design.NodeStart:
		if _, err := r.visit(ctx, n, VisitPassed); err != nil {
			return err
		}
		return r.advance(ctx, n, depth)
	case design.NodeEnd:
		if _, err := r.visit(ctx, n, VisitPassed); err != nil {
			return err
		}
		return r.finish(ctx, InstanceApproved, "")
	case design.NodeCondition:
		b, err := design.EvalBranch(r.g.branches[n.ID], design.Env{FormData: r.inst.FormData, Globals: r.inst.Globals,
			ApplicantID: r.inst.ApplicantID, ApplicantDepartmentID: deref(r.inst.ApplicantDepartmentID)})
		if err != nil {
			return fmt.Errorf("approval: condition %s: %w", n.Key, err)
		}
		for _, e := range r.g.out[n.ID] {
			if e.SourceHandle != nil && *e.SourceHandle == b.ID {
				return r.enter(ctx, r.g.nodes[e.TargetNodeID], depth+1)
			}
		}
		return fmt.Errorf("approval: branch %s of %s has no edge", b.ID, n.Key)
	case design.NodeCC:
		v, err := r.visit(ctx, n, VisitActive)
		if err != nil {
			return err
		}
		recs, err := r.cc(ctx, n, v, r.g.ccs[n.ID], "")
		if err != nil {
			return err
		}
		if n.IsReadConfirmRequired && len(recs) > 0 {
			return nil // waits for mark_cc_read
		}
		if err := r.closeVisit(ctx, v, VisitPassed); err != nil {
			return err
		}
		return r.advance(ctx, n, depth)
	case design.NodeApproval, design.NodeHandle:
		return r.enterTask(ctx, n, depth)
	}
	return fmt.Errorf("approval: unknown node kind %q", n.Kind)
}

// advance leaves n along its single edge.
func (r *run) advance(ctx context.Context, n *Node, depth int) error {
	next, err := r.g.next(n)
	if err != nil {
		return err
	}
	return r.enter(ctx, next, depth+1)
}

// visit inserts the next visit of n with status.
func (r *run) visit(ctx context.Context, n *Node, status string) (*Visit, error) {
	if !r.seqRead { // visits are written only here, so none of this run is pending: no flush
		if err := r.tx.NewSelect().Model((*Visit)(nil)).ColumnExpr("COALESCE(MAX(sequence), 0)").
			Where("instance_id = ?", r.inst.ID).Scan(ctx, &r.seq); err != nil {
			return nil, err
		}
		r.seqRead = true
	}
	r.seq++
	v := &Visit{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, TenantID: r.inst.TenantID,
		InstanceID: r.inst.ID, NodeID: n.ID, Sequence: r.seq, Status: status}
	if status != VisitActive {
		v.FinishedAt = crud.NewTime(r.now)
	}
	return v, r.writes.Queue(ctx, r.tx.NewInsert().Model(v))
}

// closeVisit finishes v with status.
func (r *run) closeVisit(ctx context.Context, v *Visit, status string) error {
	v.Status, v.FinishedAt = status, crud.NewTime(r.now)
	return r.writes.Queue(ctx, r.tx.NewUpdate().Model(v).Column("status", "finished_at").WherePK())
}

// enterTask enters an approval or handle node: snapshot the form, honour the execution type,
// resolve the assignees (same-applicant, delegation, empty-assignee rules) and create the tasks.
func (r *run) enterTask(ctx context.Context, n *Node, depth int) error {
	v, err := r.visit(ctx, n, VisitActive)
	if err != nil {
		return err
	}
	snap := &FormSnapshot{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID,
		NodeID: n.ID, Seq: int64(v.Sequence), FormData: nonNilMap(r.inst.FormData)}
	if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(snap)); err != nil {
		return err
	}
	switch n.ExecutionType {
	case design.ExecutionAutoPass:
		return r.autoPass(ctx, n, v, "execution_type", depth)
	case design.ExecutionAutoReject:
		if err := r.closeVisit(ctx, v, VisitRejected); err != nil {
			return err
		}
		return r.finish(ctx, InstanceRejected, "")
	}
	seats, reason, err := r.resolveSeats(ctx, n)
	if err != nil {
		return err
	}
	if len(seats) == 0 {
		return r.autoPass(ctx, n, v, reason, depth)
	}
	if err := r.createTasks(ctx, n, v, seats); err != nil {
		return err
	}
	if n.ConsecutiveApproverAction == design.ConsecutiveAutoPass {
		return r.consecutive(ctx, n, v, depth)
	}
	return nil
}

// autoPass passes n's visit without tasks and moves on (event approval.node.auto_passed).
func (r *run) autoPass(ctx context.Context, n *Node, v *Visit, reason string, depth int) error {
	if err := r.closeVisit(ctx, v, VisitPassed); err != nil {
		return err
	}
	if err := r.publish(ctx, EventNodeAutoPassed, func(e *InstanceEvent) { e.NodeID, e.NodeName, e.Reason = n.ID, n.Name, reason }); err != nil {
		return err
	}
	if _, err := r.cc(ctx, n, v, r.g.ccsOn(n, design.CCOnApprove), ""); err != nil {
		return err
	}
	return r.advance(ctx, n, depth)
}

// consecutive auto-approves the tasks of v whose assignee approved in the approval node visit
// just before it, judging the node after each.
func (r *run) consecutive(ctx context.Context, n *Node, v *Visit, depth int) error {
	if err := r.writes.Flush(ctx); err != nil { // the previous visit was closed by this run
		return err
	}
	var prev Visit
	err := r.tx.NewSelect().Model(&prev).Join("JOIN apv_flow_node AS fn ON fn.id = visit.node_id").
		Where("visit.instance_id = ?", r.inst.ID).Where("visit.sequence < ?", v.Sequence).
		Where("fn.kind = ?", design.NodeApproval).Where("visit.status = ?", VisitPassed).
		OrderExpr("visit.sequence DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var approvers []string
	if err := r.tx.NewSelect().Model((*Task)(nil)).Column("assignee_id").Where("visit_id = ?", prev.ID).
		Where("status = ?", TaskApproved).Scan(ctx, &approvers); err != nil {
		return err
	}
	// one read: the loop's own changes (the approvals, what judge cancels or activates) are
	// made on the list's elements, so it stays the visit's current tasks
	tasks, err := r.visitTasks(ctx, v.ID)
	if err != nil {
		return err
	}
	for {
		var hit *Task
		for i := range tasks {
			if tasks[i].Status == TaskPending && slices.Contains(approvers, tasks[i].AssigneeID) {
				hit = &tasks[i]
				break
			}
		}
		if hit == nil {
			return nil
		}
		if err := r.setTask(ctx, hit, TaskApproved); err != nil {
			return err
		}
		if err := r.log(ctx, ActionApprove, n, hit, func(l *ActionLog) {
			l.OperatorID, l.OperatorName = hit.AssigneeID, hit.AssigneeName
			l.Meta = json.RawMessage(`{"auto":"consecutive_approver"}`)
		}); err != nil {
			return err
		}
		// The task moved pending → approved: its event, with the assignee as the operator.
		self := hit.assignee()
		if err := r.taskEvent(ctx, EventTaskApproved, hit, n, func(e *InstanceEvent) { e.Operator = &self }); err != nil {
			return err
		}
		done, err := r.judge(ctx, n, v, depth, tasks)
		if err != nil || done {
			return err
		}
	}
}

// cc delivers carbon copies of rules (best effort: a rule that does not resolve is skipped)
// for node n's visit v, deduplicated per visit and user, and publishes approval.cc.notified.
func (r *run) cc(ctx context.Context, n *Node, v *Visit, rules []NodeCC, taskID string) ([]CCRecord, error) {
	var users []string
	for _, c := range rules {
		ids, _ := r.resolveRule(ctx, design.AssigneeKind(c.Kind), c.IDs, c.FormField, false)
		users = append(users, ids...)
	}
	users = dedupe(users)
	if len(users) == 0 {
		return nil, nil
	}
	if err := r.writes.Flush(ctx); err != nil { // this run may have copied people in at v already
		return nil, err
	}
	var have []string
	if err := r.tx.NewSelect().Model((*CCRecord)(nil)).Column("cc_user_id").Where("visit_id = ?", v.ID).Scan(ctx, &have); err != nil {
		return nil, err
	}
	users = slices.DeleteFunc(users, func(u string) bool { return slices.Contains(have, u) })
	return r.insertCC(ctx, n, &v.ID, users, taskID, false)
}

// insertCC writes the cc records of users (manual ones without a visit) and publishes
// approval.cc.notified.
func (r *run) insertCC(ctx context.Context, n *Node, visitID *string, users []string, taskID string, manual bool) ([]CCRecord, error) {
	if len(users) == 0 {
		return nil, nil
	}
	infos, err := r.s.userInfos(ctx, users)
	if err != nil {
		return nil, err
	}
	recs := make([]CCRecord, len(users))
	rec := make([]UserInfo, len(users))
	for i, u := range users {
		in := infos[u]
		rec[i] = in
		recs[i] = CCRecord{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID,
			NodeID: &n.ID, VisitID: visitID, TaskID: optional(taskID), CCUserID: u, CCUserName: in.Name,
			CCUserDepartmentID: optional(in.DepartmentID), CCUserDepartmentName: optional(in.DepartmentName), IsManual: manual}
	}
	if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(&recs)); err != nil {
		return nil, err
	}
	return recs, r.publish(ctx, EventCCNotified, func(e *InstanceEvent) {
		e.NodeID, e.NodeName, e.Recipients, e.IsManual = n.ID, n.Name, rec, &manual
	})
}

// finish moves the instance to a final (or resting) status and, for approved, rejected and
// terminated, publishes approval.instance.completed.
func (r *run) finish(ctx context.Context, status, reason string) error {
	if err := r.transition(ctx, status); err != nil {
		return err
	}
	switch status {
	case InstanceApproved, InstanceRejected, InstanceTerminated:
		if status != InstanceApproved {
			if err := r.cancelAll(ctx, "instance_"+status); err != nil {
				return err
			}
		}
		return r.publish(ctx, EventInstanceCompleted, func(e *InstanceEvent) {
			e.FinalStatus, e.FinishedAt = status, &r.inst.FinishedAt
			if status == InstanceTerminated {
				e.Reason = reason
			}
		})
	}
	return nil
}
