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

// StartParams are start's params (wire-approval §6.4). The applicant, its department and the
// globals are resolved on the server.
type StartParams struct {
	TenantID    string         `json:"tenantId"`
	FlowCode    string         `json:"flowCode"`
	BusinessRef *string        `json:"businessRef"`
	FormData    map[string]any `json:"formData"`
}

// Validate: flowCode is required; businessRef is at most 512 characters. An empty tenantId is
// the caller's tenant.
func (p *StartParams) Validate() error {
	var c rpc.Check
	c.Required("flowCode", strings.TrimSpace(p.FlowCode) != "")
	if p.BusinessRef != nil {
		c.MaxLen("businessRef", *p.BusinessRef, 512)
	}
	return c.Err()
}

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

// Validate: taskId and a known action are required; opinion ≤ 2000, attachments ≤ 20 × 512.
func (p *ProcessTaskParams) Validate() error {
	var c rpc.Check
	c.Required("taskId", p.TaskID != "")
	c.Required("action", p.Action != "")
	c.Valid("action", p.Action == "" || slices.Contains([]string{ActionApprove, ActionReject, ActionTransfer, ActionRollback, ActionHandle}, p.Action))
	c.MaxLen("opinion", p.Opinion, 2000)
	c.Valid("attachments", len(p.Attachments) <= 20)
	for _, a := range p.Attachments {
		c.MaxLen("attachments", a, 512)
	}
	return c.Err()
}

// InstanceReasonParams address an instance with an optional reason (withdraw, terminate).
type InstanceReasonParams struct {
	InstanceID string `json:"instanceId"`
	Reason     string `json:"reason"`
}

// Validate: instanceId is required, reason ≤ 2000.
func (p *InstanceReasonParams) Validate() error {
	var c rpc.Check
	c.Required("instanceId", p.InstanceID != "")
	c.MaxLen("reason", p.Reason, 2000)
	return c.Err()
}

// ResubmitParams are resubmit's params.
type ResubmitParams struct {
	InstanceID string         `json:"instanceId"`
	FormData   map[string]any `json:"formData"`
}

// Validate: instanceId is required.
func (p *ResubmitParams) Validate() error {
	var c rpc.Check
	c.Required("instanceId", p.InstanceID != "")
	return c.Err()
}

// AddCCParams are add_cc's params.
type AddCCParams struct {
	InstanceID string   `json:"instanceId"`
	CCUserIDs  []string `json:"ccUserIds"`
}

// Validate: instanceId and 1–50 ccUserIds are required.
func (p *AddCCParams) Validate() error {
	var c rpc.Check
	c.Required("instanceId", p.InstanceID != "")
	c.Required("ccUserIds", len(p.CCUserIDs) > 0)
	c.Valid("ccUserIds", len(p.CCUserIDs) <= 50)
	return c.Err()
}

// InstanceIDParams address an instance (mark_cc_read).
type InstanceIDParams struct {
	InstanceID string `json:"instanceId"`
}

// Validate: instanceId is required.
func (p *InstanceIDParams) Validate() error {
	var c rpc.Check
	c.Required("instanceId", p.InstanceID != "")
	return c.Err()
}

// instanceResource is approval/instance (§6.4) with the permissions of §12; commands but
// mark_cc_read and urge_task are audited.
func (s *Service) instanceResource() rpc.Resource {
	audit := rpc.Audit()
	return rpc.Resource{Name: "approval/instance", Ops: append([]rpc.Op{
		rpc.Handle("start", s.start, rpc.RequiredPermission("approval.instance.start"), audit),
		rpc.Handle("process_task", s.processTask, rpc.RequiredPermission("approval.task.process"), audit),
		rpc.Handle("withdraw", s.withdraw, rpc.RequiredPermission("approval.instance.withdraw"), audit),
		rpc.Handle("resubmit", s.resubmit, rpc.RequiredPermission("approval.instance.resubmit"), audit),
		rpc.Handle("add_cc", s.addCC, rpc.RequiredPermission("approval.instance.cc"), audit),
		rpc.Handle("mark_cc_read", s.markCCRead, rpc.RequiredPermission("approval.instance.cc")),
	}, s.taskOps()...)}
}

// operator is the caller as the action logs and events show it (name and department from the
// directory).
func (s *Service) operator(ctx context.Context, cl caller) (UserInfo, error) {
	infos, err := s.userInfos(ctx, []string{cl.ID})
	if err != nil {
		return UserInfo{}, err
	}
	u := infos[cl.ID]
	if u.Name == cl.ID && cl.Name != "" {
		u.Name = cl.Name
	}
	if u.DepartmentID == "" && !s.oneDirectory { // one directory: ResolveUsers answered the department
		id, name, err := s.departments.UserDepartment(ctx, cl.ID)
		if err != nil {
			return UserInfo{}, Detail(ErrAssigneeResolveFailed, err.Error())
		}
		u.DepartmentID, u.DepartmentName = id, name
	}
	return u, nil
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
}

// lockedVisitTask is a row of the lock's task statement: a task and the instance's last visit
// sequence.
type lockedVisitTask struct {
	Task    `bun:",extend"`
	LastSeq int `bun:"last_seq,scanonly"`
}

// lockedTask locks the task of a command with its instance and visit (taskLock), checked for the
// caller's tenant.
func (s *Service) lockedTask(ctx context.Context, tx bun.Tx, cl caller, taskID string) (*taskLock, error) {
	inst := new(Instance)
	q := tx.NewSelect().Model(inst).Where("id = (?)", tx.NewSelect().Model((*Task)(nil)).Column("instance_id").Where("id = ?", taskID))
	if err := s.forUpdate(q).Scan(ctx); err != nil {
		return nil, notFoundAs(err, ErrTaskNotFound)
	}
	if !cl.sees(inst.TenantID) {
		return nil, ErrTaskNotFound
	}
	var rows []lockedVisitTask
	q = tx.NewSelect().Model(&rows).ColumnExpr("?TableColumns").
		ColumnExpr("(SELECT COALESCE(MAX(v.sequence), 0) FROM apv_node_visit AS v WHERE v.instance_id = ?) AS last_seq", inst.ID).
		Where("?TableAlias.visit_id = (?)", tx.NewSelect().Model((*Task)(nil)).Column("visit_id").Where("id = ?", taskID)).
		Order("sort_order", "created_at")
	if err := s.forUpdate(q).Scan(ctx); err != nil {
		return nil, err
	}
	l := &taskLock{inst: inst, visit: make([]Task, len(rows))}
	for i := range rows {
		l.visit[i], l.lastSeq = rows[i].Task, rows[i].LastSeq
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

// lockedRun is the run of a command on the task l locked: the last visit sequence is known.
func (s *Service) lockedRun(ctx context.Context, tx bun.Tx, l *taskLock, op UserInfo) (*run, error) {
	r, err := s.newRun(ctx, tx, l.inst, op)
	if err != nil {
		return nil, err
	}
	r.seq, r.seqRead = l.lastSeq, true
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
	live, err := r.tx(ctx).NewSelect().Model((*Task)(nil)).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", n.ID).
		Where("assignee_id = ?", to).Where("status IN (?)", bun.In(LiveTaskStatuses)).Count(ctx)
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
	if err := r.later(ctx, r.raw.NewInsert().Model(nt)); err != nil {
		return nil, err
	}
	reparent := r.raw.NewUpdate().Model((*Task)(nil)).Set("parent_task_id = ?", nt.ID).Where("parent_task_id = ?", t.ID)
	return nt, r.later(ctx, reparent)
}

// rollbackTargets are the nodes n's visit current may roll back to: rollbackTrail over the
// instance's visits before it.
func (r *run) rollbackTargets(ctx context.Context, n *Node, current *Visit) ([]*Node, error) {
	var visits []Visit
	if err := r.tx(ctx).NewSelect().Model(&visits).Where("instance_id = ?", r.inst.ID).Where("sequence < ?", current.Sequence).
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
	if err := r.tx(ctx).NewSelect().Model(v).Where("id = ?", t.VisitID).Scan(ctx); err != nil {
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
		err := r.tx(ctx).NewSelect().Model(snap).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", target.ID).
			Order("created_at DESC").Limit(1).Scan(ctx)
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

// lockedInstance locks the instance of a command and checks the caller's tenant.
func (s *Service) lockedInstance(ctx context.Context, tx bun.Tx, cl caller, id string) (*Instance, error) {
	inst, err := s.lockInstance(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if !cl.sees(inst.TenantID) {
		return nil, ErrInstanceNotFound
	}
	return inst, nil
}

// onInstance runs an instance command: the caller and operator resolved, then one transaction
// with the instance locked (tenant-checked) and a run on it; the instance row is saved after
// fn unless fn fails.
func (s *Service) onInstance(ctx context.Context, c rpc.Call, id string, fn func(ctx context.Context, r *run, cl caller) error) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	op, err := s.operator(ctx, cl)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		inst, err := s.lockedInstance(ctx, tx, cl, id)
		if err != nil {
			return err
		}
		r, err := s.newRun(ctx, tx, inst, op)
		if err != nil {
			return err
		}
		if err := fn(ctx, r, cl); err != nil {
			return err
		}
		return r.save(ctx)
	})
}

// withdraw: the applicant takes a running (or returned) instance back; live tasks are
// canceled, active visits closed.
func (s *Service) withdraw(ctx context.Context, c rpc.Call, p InstanceReasonParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(ctx context.Context, r *run, cl caller) error {
		inst := r.inst
		if err := withdrawErr(inst, cl.ID); err != nil {
			return err
		}
		if err := r.cancelAll(ctx, "withdrawn"); err != nil {
			return err
		}
		if err := r.transition(ctx, InstanceWithdrawn); err != nil {
			return err
		}
		if err := r.log(ctx, ActionWithdraw, nil, nil, func(l *ActionLog) { l.Opinion = optional(p.Reason) }); err != nil {
			return err
		}
		op := r.op
		return r.publish(ctx, EventInstanceWithdrawn, func(e *InstanceEvent) { e.Operator, e.Reason = &op, p.Reason })
	})
}

// resubmit: the applicant restarts a returned or withdrawn instance from the start node of the
// same version, with the submitted form data laid over the stored data.
func (s *Service) resubmit(ctx context.Context, c rpc.Call, p ResubmitParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(ctx context.Context, r *run, cl caller) error {
		inst := r.inst
		if err := resubmitErr(inst, cl.ID); err != nil {
			return err
		}
		data := map[string]any{}
		for k, v := range inst.FormData {
			data[k] = v
		}
		for k, v := range p.FormData {
			data[k] = v
		}
		if err := s.checkForm(r.g, data); err != nil {
			return err
		}
		inst.FormData = data
		if err := r.storeForm(ctx); err != nil {
			return err
		}
		if err := r.transition(ctx, InstanceRunning); err != nil {
			return err
		}
		if err := r.log(ctx, ActionResubmit, r.g.start, nil, nil); err != nil {
			return err
		}
		op := r.op
		if err := r.publish(ctx, EventInstanceResubmitted, func(e *InstanceEvent) { e.Operator = &op }); err != nil {
			return err
		}
		return r.enter(ctx, r.g.start, 0)
	})
}

// addCC: a participant of the instance copies users in at the current node when it allows
// manual CC (records with isManual, action add_cc, approval.cc.notified with isManual).
func (s *Service) addCC(ctx context.Context, c rpc.Call, p AddCCParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(ctx context.Context, r *run, cl caller) error {
		var part error
		if r.inst.Status == InstanceRunning {
			part = s.participant(ctx, r.tx(ctx), r.inst, cl.ID)
		}
		if err := manualCCErr(r.inst, r.g, part); err != nil {
			return err
		}
		n := r.g.nodes[deref(r.inst.CurrentNodeID)]
		recs, err := r.insertCC(ctx, n, nil, dedupe(p.CCUserIDs), "", true)
		if err != nil {
			return err
		}
		cc := make([]UserInfo, len(recs))
		for i, rc := range recs {
			cc[i] = UserInfo{ID: rc.CCUserID, Name: rc.CCUserName, DepartmentID: deref(rc.CCUserDepartmentID), DepartmentName: deref(rc.CCUserDepartmentName)}
		}
		return r.log(ctx, ActionAddCC, n, nil, func(l *ActionLog) { l.CCUsers = cc })
	})
}

// participant: the applicant, or someone who has or had a task on the instance.
func (s *Service) participant(ctx context.Context, tx bun.IDB, inst *Instance, user string) error {
	if inst.ApplicantID == user {
		return nil
	}
	n, err := tx.NewSelect().Model((*Task)(nil)).Where("instance_id = ?", inst.ID).Where("assignee_id = ?", user).Count(ctx)
	if err != nil {
		return err
	}
	return participantErr(inst, user, n > 0)
}

// markCCRead marks the caller's CC records of the instance read; a cc node waiting for read
// confirmation passes when all its records are read, and the walk continues.
func (s *Service) markCCRead(ctx context.Context, c rpc.Call, p InstanceIDParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(ctx context.Context, r *run, cl caller) error {
		tx, inst := r.tx(ctx), r.inst
		res, err := tx.NewUpdate().Model((*CCRecord)(nil)).Set("read_at = ?", crud.NewTime(r.now)).Where("instance_id = ?", inst.ID).
			Where("cc_user_id = ?", cl.ID).Where("read_at IS NULL").Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			mine, err := tx.NewSelect().Model((*CCRecord)(nil)).Where("instance_id = ?", inst.ID).Where("cc_user_id = ?", cl.ID).Count(ctx)
			if err != nil {
				return err
			}
			if mine == 0 {
				return ErrAccessDenied
			}
			return nil
		}
		n := r.g.nodes[deref(inst.CurrentNodeID)]
		if inst.Status != InstanceRunning || n == nil || n.Kind != design.NodeCC {
			return nil
		}
		v := new(Visit)
		if err := tx.NewSelect().Model(v).Where("instance_id = ?", inst.ID).Where("node_id = ?", n.ID).
			Where("status = ?", VisitActive).Scan(ctx); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		unread, err := tx.NewSelect().Model((*CCRecord)(nil)).Where("visit_id = ?", v.ID).Where("read_at IS NULL").Count(ctx)
		if err != nil || unread > 0 {
			return err
		}
		if err := r.closeVisit(ctx, v, VisitPassed); err != nil {
			return err
		}
		return r.advance(ctx, n, 0)
	})
}
