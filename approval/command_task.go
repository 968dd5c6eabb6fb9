package approval

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Types of the events of the assignee, urge and admin commands (wire-approval §10).
const (
	EventTaskAssigneesAdded   = "approval.task.assignees_added"
	EventTaskAssigneesRemoved = "approval.task.assignees_removed"
	EventTaskUrged            = "approval.task.urged"
	EventTaskReassigned       = "approval.task.reassigned"
)

// Action-log actions of these commands.
const (
	ActionAddAssignee    = "add_assignee"
	ActionRemoveAssignee = "remove_assignee"
	ActionReassign       = "reassign"
	ActionUrge           = "urge"
)

// Add-assignee types (wire-approval §4).
const (
	AddBefore   = design.AddBefore
	AddAfter    = design.AddAfter
	AddParallel = design.AddParallel
)

// DefaultUrgeCooldownMinutes is the urge cooldown of nodes that set none (design's default).
const DefaultUrgeCooldownMinutes = design.DefaultUrgeCooldownMinutes

// AddAssigneeParams are add_assignee's params (§6.4).
type AddAssigneeParams struct {
	TaskID  string                 `json:"taskId"`
	UserIDs []string               `json:"userIds"`
	AddType design.AddAssigneeType `json:"addType"`
}

// Validate: taskId, 1–50 userIds and addType are required.
func (p *AddAssigneeParams) Validate() error {
	var c rpc.Check
	c.Required("taskId", p.TaskID != "")
	c.Required("userIds", len(p.UserIDs) > 0)
	c.Valid("userIds", len(p.UserIDs) <= 50)
	c.Required("addType", p.AddType != "")
	return c.Err()
}

// TaskIDParams address a task (remove_assignee).
type TaskIDParams struct {
	TaskID string `json:"taskId"`
}

// Validate: taskId is required.
func (p *TaskIDParams) Validate() error {
	var c rpc.Check
	c.Required("taskId", p.TaskID != "")
	return c.Err()
}

// UrgeParams are urge_task's params.
type UrgeParams struct {
	TaskID  string `json:"taskId"`
	Message string `json:"message"`
}

// Validate: taskId is required, message ≤ 500.
func (p *UrgeParams) Validate() error {
	var c rpc.Check
	c.Required("taskId", p.TaskID != "")
	c.MaxLen("message", p.Message, 500)
	return c.Err()
}

// Validate: taskId and newAssigneeId are required, reason ≤ 2000.
func (p *ReassignParams) Validate() error {
	var c rpc.Check
	c.Required("taskId", p.TaskID != "")
	c.Required("newAssigneeId", strings.TrimSpace(p.NewAssigneeID) != "")
	c.MaxLen("reason", p.Reason, 2000)
	return c.Err()
}

// taskOps are the task commands of approval/instance beyond process_task.
func (s *Service) taskOps() []rpc.Op {
	return []rpc.Op{
		rpc.Handle("add_assignee", s.addAssignee, rpc.RequiredPermission("approval.task.add_assignee"), rpc.Audit()),
		rpc.Handle("remove_assignee", s.removeAssignee, rpc.RequiredPermission("approval.task.remove_assignee"), rpc.Audit()),
		rpc.Handle("urge_task", s.urgeTask, rpc.RequiredPermission("approval.task.urge"), rpc.RateLimit(10, time.Minute)),
	}
}

// onTask runs a task command: one transaction with the task's instance locked first, then the
// tasks of its visit (lockedTask), and a run on the instance (saved after fn).
func (s *Service) onTask(ctx context.Context, c rpc.Call, taskID string, fn func(ctx context.Context, r *run, cl caller, l *taskLock, n *Node) error) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	op, err := s.operator(ctx, cl)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		l, err := s.lockedTask(ctx, tx, cl, taskID)
		if err != nil {
			return err
		}
		if l.inst.Status != InstanceRunning {
			return ErrInstanceCompleted
		}
		r, err := s.lockedRun(ctx, tx, l, op)
		if err != nil {
			return err
		}
		if err := fn(ctx, r, cl, l, r.g.nodes[l.task.NodeID]); err != nil {
			return err
		}
		return r.save(ctx)
	})
}

// addAssignee adds people at the caller's pending task (§8 add_assignee): before → the task
// waits until the new ones finish; after → the new ones wait until the task finishes;
// parallel → the new ones are pending at once. People already live at the node are skipped.
func (s *Service) addAssignee(ctx context.Context, c rpc.Call, p AddAssigneeParams) (*struct{}, error) {
	return s.onTask(ctx, c, p.TaskID, func(ctx context.Context, r *run, cl caller, l *taskLock, n *Node) error {
		t := l.task
		if err := addAssigneeErr(t, n, cl.ID, p.AddType); err != nil {
			return err
		}
		live, err := r.liveAt(ctx, n)
		if err != nil {
			return err
		}
		add := slices.DeleteFunc(dedupe(p.UserIDs), func(u string) bool { return slices.Contains(live, u) })
		if len(add) == 0 {
			return ErrNoUsersSpecified
		}
		infos, err := r.s.userInfos(ctx, add)
		if err != nil {
			return err
		}
		typ := p.AddType
		tasks := make([]Task, len(add))
		added := make([]UserInfo, len(add))
		for i, u := range add {
			nt := &tasks[i]
			r.fillTask(nt, n, &Visit{ID: t.VisitID}, infos[u], t.SortOrder)
			nt.ParentTaskID, nt.AddAssigneeType = &t.ID, &typ
			if typ == AddAfter {
				nt.Status, nt.Deadline = TaskWaiting, crud.Time{}
			}
			added[i] = infos[u]
		}
		if typ == AddBefore {
			t.Deadline = crud.Time{}
			if err := r.setTask(ctx, t, TaskWaiting); err != nil {
				return err
			}
		}
		if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(&tasks)); err != nil {
			return err
		}
		if err := r.log(ctx, ActionAddAssignee, n, t, func(l *ActionLog) { l.AddAssigneeType, l.AddedAssignees = &typ, added }); err != nil {
			return err
		}
		if err := r.publish(ctx, EventTaskAssigneesAdded, func(e *InstanceEvent) {
			e.TaskID, e.NodeID, e.NodeName, e.AddType, e.Assignees = t.ID, n.ID, n.Name, typ, added
		}); err != nil {
			return err
		}
		return r.announcePending(ctx, tasks, n)
	})
}

// liveAt lists the assignees with a pending or waiting task at node n of the instance (the
// run's queued task writes flushed first: a timeout has just closed one).
func (r *run) liveAt(ctx context.Context, n *Node) ([]string, error) {
	if err := r.writes.Flush(ctx); err != nil {
		return nil, err
	}
	var live []string
	err := r.tx.NewSelect().Model((*Task)(nil)).Column("assignee_id").Where("instance_id = ?", r.inst.ID).Where("node_id = ?", n.ID).
		Where("status IN (?)", bun.List(LiveTaskStatuses)).Scan(ctx, &live)
	return live, err
}

// removeAssignee removes a live peer task at the caller's node visit (§8 remove_assignee): not
// the caller's own, never the last actionable one; the node is evaluated again.
func (s *Service) removeAssignee(ctx context.Context, c rpc.Call, p TaskIDParams) (*struct{}, error) {
	return s.onTask(ctx, c, p.TaskID, func(ctx context.Context, r *run, cl caller, l *taskLock, n *Node) error {
		t := l.task
		if !live(t.Status) {
			return ErrTaskNotPending
		}
		tasks := l.visit
		if err := removeAssigneeErr(tasks, t, n, cl.ID); err != nil {
			return err
		}
		if err := r.setTask(ctx, t, TaskRemoved); err != nil {
			return err
		}
		removed := []UserInfo{{ID: t.AssigneeID, Name: t.AssigneeName}}
		if err := r.log(ctx, ActionRemoveAssignee, n, t, func(l *ActionLog) { l.RemovedAssignees = removed }); err != nil {
			return err
		}
		if err := r.taskEvent(ctx, EventTaskAssigneesRemoved, t, n, func(e *InstanceEvent) { e.Assignees = removed }); err != nil {
			return err
		}
		return r.settle(ctx, n, t, tasks)
	})
}

// urgeTask reminds the assignee of a pending task (§8 urge_task): the applicant or someone who
// has or had a task on the instance; once per node cooldown per task and urger (40601).
func (s *Service) urgeTask(ctx context.Context, c rpc.Call, p UrgeParams) (*struct{}, error) {
	return s.onTask(ctx, c, p.TaskID, func(ctx context.Context, r *run, cl caller, l *taskLock, n *Node) error {
		t := l.task
		if t.Status != TaskPending {
			return ErrTaskNotPending
		}
		if err := s.participant(ctx, r.tx, r.inst, cl.ID); err != nil {
			return err
		}
		minutes := urgeCooldown(n)
		recent, err := r.tx.NewSelect().Model((*UrgeRecord)(nil)).Where("task_id = ?", t.ID).Where("urger_id = ?", cl.ID).
			Where("created_at > ?", crud.NewTime(urgeSince(n, r.now))).Count(ctx)
		if err != nil {
			return err
		}
		if recent > 0 {
			return ErrUrgeCooldown.WithArgs("minutes", strconv.Itoa(minutes))
		}
		msg := p.Message
		if msg == "" {
			msg = "Please process the task " + n.Name
		}
		u := &UrgeRecord{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: cl.ID, InstanceID: r.inst.ID, NodeID: n.ID,
			TaskID: &t.ID, UrgerID: r.op.ID, UrgerName: &r.op.Name, TargetUserID: t.AssigneeID, TargetUserName: &t.AssigneeName, Message: msg}
		if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(u)); err != nil {
			return err
		}
		op := r.op
		return r.taskEvent(ctx, EventTaskUrged, t, n, func(e *InstanceEvent) {
			target := t.assignee()
			e.Urger, e.Target, e.Message = &op, &target, msg
		})
	})
}
