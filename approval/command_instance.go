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
		return UserInfo{}, s.explain(ctx, err)
	}
	u := infos[cl.ID]
	if u.Name == cl.ID && cl.Name != "" {
		u.Name = cl.Name
	}
	if u.DepartmentID == "" && !s.oneDirectory { // one directory: ResolveUsers answered the department
		id, name, err := s.departments.UserDepartment(ctx, cl.ID)
		if err != nil {
			return UserInfo{}, s.explain(ctx, ErrAssigneeResolveFailed.Wrap(err))
		}
		u.DepartmentID, u.DepartmentName = id, name
	}
	return u, nil
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
			part = s.participant(ctx, r.tx, r.inst, cl.ID)
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
		tx, inst := r.tx, r.inst
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
