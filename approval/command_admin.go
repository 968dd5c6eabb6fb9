package approval

import (
	"context"
	"slices"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// ReassignParams are reassign_task's params (§6.6).
type ReassignParams struct {
	TaskID        string `json:"taskId"`
	NewAssigneeID string `json:"newAssigneeId"`
	Reason        string `json:"reason"`
}

// AdminOps are the admin commands of approval/admin that belong to the engine:
// terminate_instance and reassign_task (§6.6). The approval/admin queries add their own ops
// to the same resource.
func (s *Service) AdminOps() []rpc.Op {
	return []rpc.Op{
		rpc.Handle("terminate_instance", s.terminate, rpc.RequiredPermission("approval.instance.terminate"), rpc.Audit()),
		rpc.Handle("reassign_task", s.reassign, rpc.RequiredPermission("approval.task.reassign"), rpc.Audit()),
	}
}

// terminate ends a running, returned or withdrawn instance by an administrator (§8
// terminate_instance): live tasks canceled, status terminated with the reason. It is the escape
// hatch of a bound instance whose host record is gone or taken: the instance ends whatever the
// record's state, and a synchronous business write that fails is recorded on the projection
// (failed, retried by the approval-binding worker and retry_business_projection) instead of
// refusing the terminate (run.forced, docs/approval.md "Business binding").
func (s *Service) terminate(ctx context.Context, c rpc.Call, p InstanceReasonParams) (*struct{}, error) {
	return s.onInstance(ctx, c, p.InstanceID, func(ctx context.Context, r *run, _ caller) error {
		if !canTransition(r.inst.Status, InstanceTerminated) {
			return ErrTerminateNotAllowed
		}
		r.forced = true
		if err := r.log(ctx, ActionTerminate, nil, nil, func(l *ActionLog) { l.Opinion = optional(p.Reason) }); err != nil {
			return err
		}
		return r.finish(ctx, InstanceTerminated, p.Reason)
	})
}

// reassign hands a pending task to another user by an administrator (§8 reassign_task).
func (s *Service) reassign(ctx context.Context, c rpc.Call, p ReassignParams) (*struct{}, error) {
	return s.onTask(ctx, c, p.TaskID, func(ctx context.Context, r *run, _ caller, l *taskLock, n *Node) error {
		t := l.task
		if t.Status != TaskPending {
			return ErrTaskNotPending
		}
		to := strings.TrimSpace(p.NewAssigneeID)
		live, err := r.liveAt(ctx, n)
		if err != nil {
			return err
		}
		if to == t.AssigneeID || slices.Contains(live, to) {
			return ErrInvalidTransferTarget
		}
		nt, err := r.handOver(ctx, n, t, to, TaskTransferred)
		if err != nil {
			return err
		}
		from, target := t.assignee(), nt.assignee()
		if err := r.log(ctx, ActionReassign, n, t, func(l *ActionLog) {
			l.Opinion = optional(p.Reason)
			l.setTransferTo(target)
		}); err != nil {
			return err
		}
		if err := r.taskEvent(ctx, EventTaskReassigned, t, n, func(e *InstanceEvent) { e.From, e.To, e.Reason = &from, &target, p.Reason }); err != nil {
			return err
		}
		return r.taskEvent(ctx, EventTaskCreated, nt, n, nil)
	})
}
