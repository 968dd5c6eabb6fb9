package approval

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// ProcessTaskParams are process_task's params (§6.4).
type ProcessTaskParams struct {
	TaskID       string         `json:"taskId"`
	Action       string         `json:"action"`
	Opinion      string         `json:"opinion"`
	FormData     map[string]any `json:"formData"`
	Attachments  []string       `json:"attachments"`
	TransferToID string         `json:"transferToId"`
	TargetNodeID string         `json:"targetNodeId"`
}

// taskLock is what a command on a task holds: the instance row, locked first (fixed lock order:
// the instance row, then task rows), and every task of the task's visit, locked and read in one
// statement with the instance's last visit sequence. Visits and tasks are created, and tasks
// change status, only under the instance's lock, so that statement, which starts once the lock is
// held, sees all of them; a flag set without it (the pre-warning's) is waited for by the row lock.
type taskLock struct {
	task *Task
	inst *Instance
	// visit is the visit's tasks in sort order as they were before the command's writes (task is
	// a copy of one of them); lastSeq the highest visit sequence of the instance.
	visit   []Task
	lastSeq int
	// lastLogSeq is the instance's highest action log sequence (run.log).
	lastLogSeq int64
}

// lockedVisitTask is a row of the lock's task statement: a task and the instance's last visit
// and action log sequences.
type lockedVisitTask struct {
	Task       `bun:",extend"`
	LastSeq    int   `bun:"last_seq,scanonly"`
	LastLogSeq int64 `bun:"last_log_seq,scanonly"`
}

// lockedTask locks the task of a command with its instance and visit (taskLock), checked for the
// caller's tenant.
func (s *Service) lockedTask(ctx context.Context, tx bun.Tx, cl caller, taskID string) (*taskLock, error) {
	inst := new(Instance)
	q := tx.NewSelect().Model(inst).Where("id = (?)", tx.NewSelect().Model((*Task)(nil)).Column("instance_id").Where("id = ?", taskID))
	if err := s.db.ForUpdate(q).Scan(ctx); err != nil {
		return nil, notFoundAs(err, ErrTaskNotFound)
	}
	if !cl.sees(inst.TenantID) {
		return nil, ErrTaskNotFound
	}
	var rows []lockedVisitTask
	q = tx.NewSelect().Model(&rows).ColumnExpr("?TableColumns").
		ColumnExpr("(SELECT COALESCE(MAX(v.sequence), 0) FROM apv_node_visit AS v WHERE v.instance_id = ?) AS last_seq", inst.ID).
		ColumnExpr("(SELECT COALESCE(MAX(a.seq), 0) FROM apv_action_log AS a WHERE a.instance_id = ?) AS last_log_seq", inst.ID).
		Where("?TableAlias.visit_id = (?)", tx.NewSelect().Model((*Task)(nil)).Column("visit_id").Where("id = ?", taskID)).
		Order("sort_order", "created_at")
	if err := s.db.ForUpdate(q).Scan(ctx); err != nil {
		return nil, err
	}
	l := &taskLock{inst: inst, visit: make([]Task, len(rows))}
	for i := range rows {
		l.visit[i], l.lastSeq, l.lastLogSeq = rows[i].Task, rows[i].LastSeq, rows[i].LastLogSeq
		if rows[i].ID == taskID {
			t := rows[i].Task
			l.task = &t
		}
	}
	if l.task == nil {
		return nil, ErrTaskNotFound
	}
	return l, nil
}

// lockedRun is the run of a command on the task l locked: the last visit and log sequences are
// known.
func (s *Service) lockedRun(ctx context.Context, tx bun.Tx, l *taskLock, op UserInfo) (*run, error) {
	r, err := s.newRun(ctx, tx, l.inst, op)
	if err != nil {
		return nil, err
	}
	r.seq, r.seqRead, r.logSeq, r.logSeqRead = l.lastSeq, true, l.lastLogSeq, true
	return r, nil
}

// processTask applies a decision of the task's assignee (§8 Decisions): approve / handle /
// reject evaluate the node's pass rule, transfer hands the task over, rollback returns the
// instance to an earlier node. One transaction; the instance row is locked first.
func (s *Service) processTask(ctx context.Context, c rpc.Call, p ProcessTaskParams) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	op, err := s.operator(ctx, cl)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		l, err := s.lockedTask(ctx, tx, cl, p.TaskID)
		if err != nil {
			return err
		}
		t := l.task
		if err := decisionErr(l.inst, t, cl.ID); err != nil {
			return err
		}
		r, err := s.lockedRun(ctx, tx, l, op)
		if err != nil {
			return err
		}
		n := r.g.nodes[t.NodeID]
		if n.IsOpinionRequired && strings.TrimSpace(p.Opinion) == "" {
			return ErrOpinionRequired
		}
		action, err := decisionAction(n, p.Action)
		if err != nil {
			return err
		}
		if err := r.mergeForm(n, p.FormData, action == ActionApprove || action == ActionHandle); err != nil {
			return err
		}
		switch action {
		case ActionApprove, ActionHandle, ActionReject:
			err = r.decide(ctx, n, t, action, p, l.visit)
		case ActionTransfer:
			err = r.transfer(ctx, n, t, p)
		case ActionRollback:
			err = r.rollback(ctx, n, t, p)
		}
		if err != nil {
			return err
		}
		return r.save(ctx)
	})
}

// mergeForm lays the submitted values of the fields n lets its assignee write over the stored
// form data (validated; required fields enforced on approve and handle).
func (r *run) mergeForm(n *Node, submitted map[string]any, requireFilled bool) error {
	ps := n.FieldPermissions
	merged := r.inst.FormData
	if len(submitted) > 0 {
		if r.g.hasFields {
			if err := FormDataError(design.ValidateWritable(r.g.fields, submitted, ps), r.s.translate); err != nil {
				return err
			}
		}
		merged = design.MergeWritable(r.inst.FormData, submitted, ps)
		if err := r.s.ValidateGrowth(r.inst.FormData, merged); err != nil {
			return err
		}
	}
	if requireFilled && r.g.hasFields {
		if err := FormDataError(design.ValidateRequired(r.g.fields, ps, merged), r.s.translate); err != nil {
			return err
		}
	}
	r.inst.FormData = merged
	return nil
}

// decide records an approve, handle or reject and evaluates the node; visit is the tasks of t's
// visit as locked, before the command's writes (settle brings it up to date).
func (r *run) decide(ctx context.Context, n *Node, t *Task, action string, p ProcessTaskParams, visit []Task) error {
	status, typ := TaskApproved, EventTaskApproved
	switch action {
	case ActionHandle:
		status, typ = TaskHandled, EventTaskHandled
	case ActionReject:
		status, typ = TaskRejected, EventTaskRejected
	}
	if err := r.setTask(ctx, t, status); err != nil {
		return err
	}
	if err := r.log(ctx, action, n, t, func(l *ActionLog) { l.Opinion, l.Attachments = optional(p.Opinion), p.Attachments }); err != nil {
		return err
	}
	op := r.op
	if err := r.taskEvent(ctx, typ, t, n, func(e *InstanceEvent) { e.Operator, e.Opinion = &op, p.Opinion }); err != nil {
		return err
	}
	return r.settle(ctx, n, t, visit)
}

// transfer hands t to another user: t becomes transferred and the target gets a pending task
// with the same sort order, deadline and parent.
func (r *run) transfer(ctx context.Context, n *Node, t *Task, p ProcessTaskParams) error {
	if err := transferErr(n); err != nil {
		return err
	}
	to := strings.TrimSpace(p.TransferToID)
	if to == "" || to == t.AssigneeID {
		return ErrInvalidTransferTarget
	}
	live, err := r.tx.NewSelect().Model((*Task)(nil)).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", n.ID).
		Where("assignee_id = ?", to).Where("status IN (?)", bun.List(LiveTaskStatuses)).Count(ctx)
	if err != nil {
		return err
	}
	if live > 0 {
		return ErrInvalidTransferTarget
	}
	nt, err := r.handOver(ctx, n, t, to, TaskTransferred)
	if err != nil {
		return err
	}
	from, target := t.assignee(), nt.assignee()
	if err := r.log(ctx, ActionTransfer, n, t, func(l *ActionLog) {
		l.Opinion = optional(p.Opinion)
		l.setTransferTo(target)
	}); err != nil {
		return err
	}
	if err := r.taskEvent(ctx, EventTaskTransferred, t, n, func(e *InstanceEvent) { e.From, e.To, e.Reason = &from, &target, p.Opinion }); err != nil {
		return err
	}
	return r.taskEvent(ctx, EventTaskCreated, nt, n, nil)
}

// handOver closes t with status and creates the pending task of user to in its place.
func (r *run) handOver(ctx context.Context, n *Node, t *Task, to, status string) (*Task, error) {
	infos, err := r.s.userInfos(ctx, []string{to})
	if err != nil {
		return nil, err
	}
	if err := r.setTask(ctx, t, status); err != nil {
		return nil, err
	}
	return r.replaceTask(ctx, n, t, infos[to], t.Deadline)
}

// replaceTask creates the pending task of u that takes closed task t's place at node n: its
// seat (sort order, parent, add type) and deadline, and the people added to t hang off it (a
// "before" parent reactivates, "after" children follow it). Both writes are deferred.
func (r *run) replaceTask(ctx context.Context, n *Node, t *Task, u UserInfo, deadline crud.Time) (*Task, error) {
	nt := &Task{}
	r.fillTask(nt, n, &Visit{ID: t.VisitID}, u, t.SortOrder)
	nt.Deadline, nt.ParentTaskID, nt.AddAssigneeType = deadline, t.ParentTaskID, t.AddAssigneeType
	if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(nt)); err != nil {
		return nil, err
	}
	reparent := r.tx.NewUpdate().Model((*Task)(nil)).Set("parent_task_id = ?", nt.ID).Where("parent_task_id = ?", t.ID)
	return nt, r.writes.Queue(ctx, reparent)
}

// rollbackTargets are the nodes n's visit current may roll back to: rollbackTrail over the
// instance's visits before it.
func (r *run) rollbackTargets(ctx context.Context, n *Node, current *Visit) ([]*Node, error) {
	var visits []Visit
	if err := r.tx.NewSelect().Model(&visits).Where("instance_id = ?", r.inst.ID).Where("sequence < ?", current.Sequence).
		Scan(ctx); err != nil {
		return nil, err
	}
	return rollbackTrail(r.g, n, visits, current.Sequence), nil
}

// rollback returns the instance from t's node to targetNodeId: t rolled back, peers canceled,
// the visit returned, form data per the node's data strategy (keep: the target's snapshot;
// clear: null); the start node → instance returned, else the target is entered again.
func (r *run) rollback(ctx context.Context, n *Node, t *Task, p ProcessTaskParams) error {
	if err := rollbackErr(n); err != nil {
		return err
	}
	v := new(Visit)
	if err := r.tx.NewSelect().Model(v).Where("id = ?", t.VisitID).Scan(ctx); err != nil {
		return err
	}
	targets, err := r.rollbackTargets(ctx, n, v)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(targets, func(x *Node) bool { return x.ID == p.TargetNodeID })
	if idx < 0 {
		return ErrInvalidRollbackTarget
	}
	target := targets[idx]
	if err := r.setTask(ctx, t, TaskRolledBack); err != nil {
		return err
	}
	tasks, err := r.visitTasks(ctx, v.ID)
	if err != nil {
		return err
	}
	if err := r.cancelLive(ctx, tasks, n, "rolled_back"); err != nil {
		return err
	}
	if err := r.closeVisit(ctx, v, VisitReturned); err != nil {
		return err
	}
	if err := r.log(ctx, ActionRollback, n, t, func(l *ActionLog) { l.Opinion, l.RollbackToNodeID = optional(p.Opinion), &target.ID }); err != nil {
		return err
	}
	if deref(n.RollbackDataStrategy) == design.RollbackDataClear {
		r.inst.FormData = nil
	} else {
		snap := new(FormSnapshot)
		err := r.tx.NewSelect().Model(snap).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", target.ID).
			Order("seq DESC", "created_at DESC", "id DESC").Limit(1).Scan(ctx)
		switch {
		case err == nil:
			r.inst.FormData = snap.FormData
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	op := r.op
	fill := func(e *InstanceEvent) {
		e.FromNodeID, e.FromNodeName, e.ToNodeID, e.ToNodeName, e.Operator, e.Opinion = n.ID, n.Name, target.ID, target.Name, &op, p.Opinion
	}
	if target.Kind == design.NodeStart {
		if err := r.transition(ctx, InstanceReturned); err != nil {
			return err
		}
		id := target.ID
		r.inst.CurrentNodeID = &id
		return r.publish(ctx, EventInstanceReturned, fill)
	}
	if err := r.publish(ctx, EventInstanceRolledBack, fill); err != nil {
		return err
	}
	return r.enter(ctx, target, 0)
}
