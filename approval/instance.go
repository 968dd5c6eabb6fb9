package approval

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"text/template"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/config"
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
	if u.DepartmentID == "" {
		id, name, err := s.departments.UserDepartment(ctx, cl.ID)
		if err != nil {
			return UserInfo{}, Detail(ErrAssigneeResolveFailed, err.Error())
		}
		u.DepartmentID, u.DepartmentName = id, name
	}
	return u, nil
}

// start creates an instance of the flow's published version and walks it forward from the
// start node until a node waits or the flow ends, all in one transaction (§8 Start).
func (s *Service) start(ctx context.Context, c rpc.Call, p StartParams) (*Instance, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	tenant := p.TenantID
	if tenant == "" {
		tenant = cl.Tenant
	}
	if !cl.sees(tenant) {
		return nil, ErrFlowNotFound
	}
	op, err := s.operator(ctx, cl)
	if err != nil {
		return nil, err
	}
	f := new(Flow)
	if err := s.db.NewSelect().Model(f).Where("tenant_id = ?", tenant).Where("code = ?", p.FlowCode).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrFlowNotFound
		}
		return nil, err
	}
	switch {
	case !f.IsActive:
		return nil, ErrFlowNotActive
	case f.CurrentVersion == 0:
		return nil, ErrNoPublishedVersion
	}
	if err := s.mayInitiate(ctx, f, c.Principal, op); err != nil {
		return nil, err
	}
	if f.BindingMode == BindingBusiness && strings.TrimSpace(deref(p.BusinessRef)) == "" {
		return nil, ErrBusinessRefRequired
	}
	var versionID string
	if err := s.db.NewSelect().Model((*Version)(nil)).Column("id").Where("flow_id = ?", f.ID).
		Where("status = ?", VersionPublished).Scan(ctx, &versionID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNoPublishedVersion
		}
		return nil, err
	}
	g, err := s.loadGraph(ctx, s.db, versionID)
	if err != nil {
		return nil, err
	}
	data := nonNilMap(p.FormData)
	if err := s.checkForm(g, data); err != nil {
		return nil, err
	}
	now := crud.NewTime(s.clock())
	inst := &Instance{TenantID: f.TenantID, FlowID: f.ID, FlowCode: f.Code, FlowVersionID: versionID,
		InstanceNo: instanceNo(f.Code, now), ApplicantID: op.ID, ApplicantName: op.Name,
		ApplicantDepartmentID: optional(op.DepartmentID), ApplicantDepartmentName: optional(op.DepartmentName),
		Status: InstanceRunning, BusinessRef: p.BusinessRef, FormData: data}
	inst.ID, inst.CreatedAt, inst.UpdatedAt, inst.CreatedBy, inst.UpdatedBy = crud.NewID(), now, now, op.ID, op.ID
	if inst.Title, err = title(f, inst); err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(inst).Exec(ctx); err != nil {
			return err
		}
		r, err := s.newRun(ctx, tx, inst, op)
		if err != nil {
			return err
		}
		if err := r.log(ActionSubmit, r.g.start, nil, nil); err != nil {
			return err
		}
		if err := r.publish(EventInstanceCreated, nil); err != nil {
			return err
		}
		if err := r.enter(r.g.start, 0); err != nil {
			return err
		}
		return r.save()
	})
	if err != nil {
		return nil, err
	}
	return inst, nil
}

// checkForm validates form data against the version's fields (when the version has a form
// document) and the size cap.
func (s *Service) checkForm(g *graph, data map[string]any) error {
	if g.hasFields {
		return s.ValidateFormData(g.fields, data)
	}
	return s.ValidateGrowth(map[string]any{}, data)
}

// mayInitiate applies the flow's initiation rule: everyone, or a matching initiator row (user
// id, the caller's department, one of its roles).
func (s *Service) mayInitiate(ctx context.Context, f *Flow, p *rpc.Principal, op UserInfo) error {
	if f.IsAllInitiationAllowed {
		return nil
	}
	var rows []Initiator
	if err := s.db.NewSelect().Model(&rows).Where("flow_id = ?", f.ID).Scan(ctx); err != nil {
		return err
	}
	for _, in := range rows {
		switch in.Kind {
		case InitiatorUser:
			if slices.Contains(in.IDs, op.ID) {
				return nil
			}
		case InitiatorDepartment:
			if op.DepartmentID != "" && slices.Contains(in.IDs, op.DepartmentID) {
				return nil
			}
		case InitiatorRole:
			for _, r := range p.Roles {
				if slices.Contains(in.IDs, r) {
					return nil
				}
			}
		}
	}
	return ErrNotAllowedInitiate
}

// instanceNo is the default instance number: the flow code (at most 32 characters), the UTC
// time to the second and 8 random hex digits — unique in practice; the column's unique key
// makes a collision fail the start.
func instanceNo(code string, now crud.Time) string {
	if len(code) > 32 {
		code = code[:32]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(code) + "-" + now.Format("20060102150405") + "-" + hex.EncodeToString(b[:])
}

// title renders the flow's title template with flowName, flowCode, instanceNo, formData,
// applicantId, applicantName and the nested flow.name/code and applicant.id/name.
func title(f *Flow, inst *Instance) (string, error) {
	t, err := template.New("title").Option("missingkey=zero").Parse(f.InstanceTitleTemplate)
	if err != nil {
		return "", Detail(ErrInvalidTitleTemplate, err.Error())
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{"flowName": f.Name, "flowCode": f.Code, "instanceNo": inst.InstanceNo,
		"formData": inst.FormData, "applicantId": inst.ApplicantID, "applicantName": inst.ApplicantName,
		"flow": map[string]any{"name": f.Name, "code": f.Code}, "applicant": map[string]any{"id": inst.ApplicantID, "name": inst.ApplicantName}})
	if err != nil {
		return "", Detail(ErrInvalidTitleTemplate, err.Error())
	}
	out := b.String()
	if len(out) > 256 {
		out = out[:256]
	}
	return out, nil
}

// lockedTask is the task of a command with its instance locked first (fixed lock order:
// instance row, then the task row), checked for the caller's tenant.
func (s *Service) lockedTask(ctx context.Context, tx bun.Tx, cl caller, taskID string) (*Task, *Instance, error) {
	inst := new(Instance)
	q := tx.NewSelect().Model(inst).Where("id = (?)", tx.NewSelect().Model((*Task)(nil)).Column("instance_id").Where("id = ?", taskID))
	if s.db.Kind != config.SQLite {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil, ErrTaskNotFound
		}
		return nil, nil, err
	}
	if !cl.sees(inst.TenantID) {
		return nil, nil, ErrTaskNotFound
	}
	t := new(Task)
	q = tx.NewSelect().Model(t).Where("id = ?", taskID)
	if s.db.Kind != config.SQLite {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, nil, err
	}
	return t, inst, nil
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
		t, inst, err := s.lockedTask(ctx, tx, cl, p.TaskID)
		if err != nil {
			return err
		}
		if inst.Status != InstanceRunning {
			return ErrInstanceCompleted
		}
		if t.Status != TaskPending {
			return ErrTaskNotPending
		}
		if t.AssigneeID != cl.ID {
			return ErrNotAssignee
		}
		r, err := s.newRun(ctx, tx, inst, op)
		if err != nil {
			return err
		}
		n := r.g.nodes[t.NodeID]
		if n.IsOpinionRequired && strings.TrimSpace(p.Opinion) == "" {
			return ErrOpinionRequired
		}
		action := p.Action
		switch {
		case action == ActionApprove && n.Kind == string(design.NodeHandle):
			action = ActionHandle
		case action == ActionHandle && n.Kind != string(design.NodeHandle):
			return ErrInvalidTaskTransition
		}
		if err := r.mergeForm(n, p.FormData, action == ActionApprove || action == ActionHandle); err != nil {
			return err
		}
		switch action {
		case ActionApprove, ActionHandle, ActionReject:
			err = r.decide(n, t, action, p)
		case ActionTransfer:
			err = r.transfer(n, t, p)
		case ActionRollback:
			err = r.rollback(n, t, p)
		}
		if err != nil {
			return err
		}
		return r.save()
	})
}

// mergeForm lays the submitted values of the fields n lets its assignee write over the stored
// form data (validated; required fields enforced on approve and handle).
func (r *run) mergeForm(n *Node, submitted map[string]any, requireFilled bool) error {
	ps := perms(n)
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

// decide records an approve, handle or reject and evaluates the node.
func (r *run) decide(n *Node, t *Task, action string, p ProcessTaskParams) error {
	status, typ := TaskApproved, EventTaskApproved
	switch action {
	case ActionHandle:
		status, typ = TaskHandled, EventTaskHandled
	case ActionReject:
		status, typ = TaskRejected, EventTaskRejected
	}
	if err := r.setTask(t, status); err != nil {
		return err
	}
	if err := r.log(action, n, t, func(l *ActionLog) { l.Opinion, l.Attachments = optional(p.Opinion), p.Attachments }); err != nil {
		return err
	}
	op := r.op
	if err := r.taskEvent(typ, t, n, func(e *InstanceEvent) { e.Operator, e.Opinion = &op, p.Opinion }); err != nil {
		return err
	}
	if err := r.activateDependents(t); err != nil {
		return err
	}
	_, err := r.evaluate(n, &Visit{ID: t.VisitID}, 0) // evaluate closes the visit by id
	return err
}

// transfer hands t to another user: t becomes transferred and the target gets a pending task
// with the same sort order, deadline and parent.
func (r *run) transfer(n *Node, t *Task, p ProcessTaskParams) error {
	if !n.IsTransferAllowed {
		return ErrTransferNotAllowed
	}
	to := strings.TrimSpace(p.TransferToID)
	if to == "" || to == t.AssigneeID {
		return ErrInvalidTransferTarget
	}
	live, err := r.tx.NewSelect().Model((*Task)(nil)).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", n.ID).
		Where("assignee_id = ?", to).Where("status IN (?)", bun.In([]string{TaskPending, TaskWaiting})).Count(r.ctx)
	if err != nil {
		return err
	}
	if live > 0 {
		return ErrInvalidTransferTarget
	}
	nt, err := r.handOver(n, t, to, TaskTransferred)
	if err != nil {
		return err
	}
	from := UserInfo{ID: t.AssigneeID, Name: t.AssigneeName}
	target := UserInfo{ID: nt.AssigneeID, Name: nt.AssigneeName}
	if err := r.log(ActionTransfer, n, t, func(l *ActionLog) {
		l.Opinion, l.TransferToID, l.TransferToName = optional(p.Opinion), &target.ID, &target.Name
	}); err != nil {
		return err
	}
	if err := r.taskEvent(EventTaskTransferred, t, n, func(e *InstanceEvent) { e.From, e.To, e.Reason = &from, &target, p.Opinion }); err != nil {
		return err
	}
	return r.taskEvent(EventTaskCreated, nt, n, nil)
}

// handOver closes t with status and creates the pending task of user to in its place.
func (r *run) handOver(n *Node, t *Task, to, status string) (*Task, error) {
	infos, err := r.s.userInfos(r.ctx, []string{to})
	if err != nil {
		return nil, err
	}
	if err := r.setTask(t, status); err != nil {
		return nil, err
	}
	nt := &Task{}
	r.fillTask(nt, n, &Visit{ID: t.VisitID}, infos[to], t.SortOrder)
	nt.Deadline, nt.ParentTaskID, nt.AddAssigneeType = t.Deadline, t.ParentTaskID, t.AddAssigneeType
	if _, err := r.tx.NewInsert().Model(nt).Exec(r.ctx); err != nil {
		return nil, err
	}
	// Added people hang off the new task (a "before" parent reactivates, "after" children follow it).
	if _, err := r.tx.NewUpdate().Model((*Task)(nil)).Set("parent_task_id = ?", nt.ID).Where("parent_task_id = ?", t.ID).Exec(r.ctx); err != nil {
		return nil, err
	}
	return nt, nil
}

// rollbackTargets are the nodes n's visit may roll back to (§8 rollback), by node id: the
// passed visits of start, approval and handle nodes before the current visit, filtered by the
// node's rollback type.
func (r *run) rollbackTargets(n *Node, current *Visit) ([]*Node, error) {
	var visits []Visit
	if err := r.tx.NewSelect().Model(&visits).Where("instance_id = ?", r.inst.ID).Where("sequence < ?", current.Sequence).
		Where("status = ?", VisitPassed).Order("sequence DESC").Scan(r.ctx); err != nil {
		return nil, err
	}
	var trail []*Node
	seen := map[string]bool{}
	for _, v := range visits {
		vn := r.g.nodes[v.NodeID]
		if vn == nil || vn.ID == n.ID || seen[vn.ID] {
			continue
		}
		switch design.NodeKind(vn.Kind) {
		case design.NodeStart, design.NodeApproval, design.NodeHandle:
			seen[vn.ID] = true
			trail = append(trail, vn)
		}
		if vn.Kind == string(design.NodeStart) {
			break // the trail before the last start belongs to an earlier round
		}
	}
	switch design.RollbackType(n.RollbackType) {
	case design.RollbackPrevious:
		if len(trail) > 0 {
			return trail[:1], nil
		}
	case design.RollbackStart:
		return []*Node{r.g.start}, nil
	case design.RollbackAny:
		return trail, nil
	case design.RollbackSpecified:
		var out []*Node
		for _, vn := range trail {
			if slices.Contains(n.RollbackTargetKeys, vn.Key) {
				out = append(out, vn)
			}
		}
		return out, nil
	}
	return nil, nil
}

// rollback returns the instance from t's node to targetNodeId: t rolled back, peers canceled,
// the visit returned, form data per the node's data strategy (keep: the target's snapshot;
// clear: null); the start node → instance returned, else the target is entered again.
func (r *run) rollback(n *Node, t *Task, p ProcessTaskParams) error {
	if !n.IsRollbackAllowed || n.RollbackType == string(design.RollbackNone) {
		return ErrRollbackNotAllowed
	}
	v := new(Visit)
	if err := r.tx.NewSelect().Model(v).Where("id = ?", t.VisitID).Scan(r.ctx); err != nil {
		return err
	}
	targets, err := r.rollbackTargets(n, v)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(targets, func(x *Node) bool { return x.ID == p.TargetNodeID })
	if idx < 0 {
		return ErrInvalidRollbackTarget
	}
	target := targets[idx]
	if err := r.setTask(t, TaskRolledBack); err != nil {
		return err
	}
	tasks, err := r.visitTasks(v.ID)
	if err != nil {
		return err
	}
	if err := r.cancelLive(tasks, n, "rolled_back"); err != nil {
		return err
	}
	if err := r.closeVisit(v, VisitReturned); err != nil {
		return err
	}
	if err := r.log(ActionRollback, n, t, func(l *ActionLog) { l.Opinion, l.RollbackToNodeID = optional(p.Opinion), &target.ID }); err != nil {
		return err
	}
	if deref(n.RollbackDataStrategy) == string(design.RollbackDataClear) {
		r.inst.FormData = nil
	} else {
		snap := new(FormSnapshot)
		err := r.tx.NewSelect().Model(snap).Where("instance_id = ?", r.inst.ID).Where("node_id = ?", target.ID).
			Order("created_at DESC").Limit(1).Scan(r.ctx)
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
	if target.Kind == string(design.NodeStart) {
		if !canTransition(r.inst.Status, InstanceReturned) {
			return ErrInvalidInstanceTransition
		}
		r.inst.Status, r.inst.FinishedAt = InstanceReturned, crud.NewTime(r.now)
		id := target.ID
		r.inst.CurrentNodeID = &id
		return r.publish(EventInstanceReturned, fill)
	}
	if err := r.publish(EventInstanceRolledBack, fill); err != nil {
		return err
	}
	return r.enter(target, 0)
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
func (s *Service) onInstance(ctx context.Context, c rpc.Call, id string, fn func(r *run, cl caller) error) (*struct{}, error) {
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
		if err := fn(r, cl); err != nil {
			return err
		}
		return r.save()
	})
}

// withdraw: the applicant takes a running (or returned) instance back; live tasks are
// canceled, active visits closed.
func (s *Service) withdraw(ctx context.Context, c rpc.Call, p InstanceReasonParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(r *run, cl caller) error {
		inst := r.inst
		if inst.ApplicantID != cl.ID {
			return ErrNotApplicant
		}
		if !canTransition(inst.Status, InstanceWithdrawn) {
			return ErrWithdrawNotAllowed
		}
		if err := r.cancelAll("withdrawn"); err != nil {
			return err
		}
		inst.Status, inst.FinishedAt = InstanceWithdrawn, crud.NewTime(r.now)
		if err := r.log(ActionWithdraw, nil, nil, func(l *ActionLog) { l.Opinion = optional(p.Reason) }); err != nil {
			return err
		}
		op := r.op
		return r.publish(EventInstanceWithdrawn, func(e *InstanceEvent) { e.Operator, e.Reason = &op, p.Reason })
	})
}

// resubmit: the applicant restarts a returned or withdrawn instance from the start node of the
// same version, with the submitted form data laid over the stored data.
func (s *Service) resubmit(ctx context.Context, c rpc.Call, p ResubmitParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(r *run, cl caller) error {
		inst := r.inst
		if inst.ApplicantID != cl.ID {
			return ErrNotApplicant
		}
		if inst.Status != InstanceReturned && inst.Status != InstanceWithdrawn {
			return ErrResubmitNotAllowed
		}
		data := nonNilMap(nil)
		for k, v := range inst.FormData {
			data[k] = v
		}
		for k, v := range p.FormData {
			data[k] = v
		}
		if err := s.checkForm(r.g, data); err != nil {
			return err
		}
		inst.FormData, inst.Status, inst.FinishedAt = data, InstanceRunning, crud.Time{}
		if err := r.log(ActionResubmit, r.g.start, nil, nil); err != nil {
			return err
		}
		op := r.op
		if err := r.publish(EventInstanceResubmitted, func(e *InstanceEvent) { e.Operator = &op }); err != nil {
			return err
		}
		return r.enter(r.g.start, 0)
	})
}

// addCC: a participant of the instance copies users in at the current node when it allows
// manual CC (records with isManual, action add_cc, approval.cc.notified with isManual).
func (s *Service) addCC(ctx context.Context, c rpc.Call, p AddCCParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(r *run, cl caller) error {
		if r.inst.Status != InstanceRunning {
			return ErrInstanceCompleted
		}
		if err := s.participant(r.ctx, r.tx, r.inst, cl.ID); err != nil {
			return err
		}
		n := r.g.nodes[deref(r.inst.CurrentNodeID)]
		if n == nil || !n.IsManualCCAllowed {
			return ErrManualCcNotAllowed
		}
		recs, err := r.insertCC(n, nil, dedupe(p.CCUserIDs), "", true)
		if err != nil {
			return err
		}
		cc := make([]UserInfo, len(recs))
		for i, rc := range recs {
			cc[i] = UserInfo{ID: rc.CCUserID, Name: rc.CCUserName, DepartmentID: deref(rc.CCUserDepartmentID), DepartmentName: deref(rc.CCUserDepartmentName)}
		}
		return r.log(ActionAddCC, n, nil, func(l *ActionLog) { l.CCUsers = cc })
	})
}

// participant: the applicant, or someone who has or had a task on the instance.
func (s *Service) participant(ctx context.Context, tx bun.Tx, inst *Instance, user string) error {
	if inst.ApplicantID == user {
		return nil
	}
	n, err := tx.NewSelect().Model((*Task)(nil)).Where("instance_id = ?", inst.ID).Where("assignee_id = ?", user).Count(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrAccessDenied
	}
	return nil
}

// markCCRead marks the caller's CC records of the instance read; a cc node waiting for read
// confirmation passes when all its records are read, and the walk continues.
func (s *Service) markCCRead(ctx context.Context, c rpc.Call, p InstanceIDParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(r *run, cl caller) error {
		ctx, tx, inst := r.ctx, r.tx, r.inst
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
		if inst.Status != InstanceRunning || n == nil || n.Kind != string(design.NodeCC) {
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
		if err := r.closeVisit(v, VisitPassed); err != nil {
			return err
		}
		return r.advance(n, 0)
	})
}
