package approval

import (
	"context"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// visitTasks are the tasks of visit id in sort order, with the run's queued writes (a task it
// just closed, the tasks it created) flushed first.
func (r *run) visitTasks(ctx context.Context, visitID string) ([]Task, error) {
	if err := r.writes.Flush(ctx); err != nil {
		return nil, err
	}
	var ts []Task
	err := r.tx.NewSelect().Model(&ts).Where("visit_id = ?", visitID).Order("sort_order", "created_at").Scan(ctx)
	return ts, err
}

// setTask moves t to status (finished unless waiting or pending).
func (r *run) setTask(ctx context.Context, t *Task, status string) error {
	t.Status, t.UpdatedAt, t.UpdatedBy = status, crud.NewTime(r.now), r.op.ID
	if status != TaskPending && status != TaskWaiting {
		t.FinishedAt = crud.NewTime(r.now)
	}
	return r.writes.Queue(ctx, r.tx.NewUpdate().Model(t).Column("status", "updated_at", "updated_by", "finished_at", "deadline").WherePK())
}

// activate makes waiting task t of node n pending (its deadline starts now) and announces it.
func (r *run) activate(ctx context.Context, t *Task, n *Node) error {
	t.Deadline = r.deadline(n)
	if err := r.setTask(ctx, t, TaskPending); err != nil {
		return err
	}
	return r.taskEvent(ctx, EventTaskCreated, t, n, nil)
}

// counted reports whether a task's outcome counts for the pass rule (wire-approval §8): not
// transferred, canceled, removed, skipped or rolled back.
func counted(status string) bool {
	switch status {
	case TaskTransferred, TaskCanceled, TaskRemoved, TaskSkipped, TaskRolledBack:
		return false
	}
	return true
}

// outcome applies n's pass rule to the tasks of its visit: "passed", "rejected" or "".
func outcome(n *Node, tasks []Task) string {
	total, ok, no := 0, 0, 0
	for _, t := range tasks {
		if !counted(t.Status) {
			continue
		}
		total++
		switch t.Status {
		case TaskApproved, TaskHandled:
			ok++
		case TaskRejected:
			no++
		}
	}
	if total == 0 {
		return "passed"
	}
	switch n.PassRule {
	case design.PassAny:
		if ok > 0 {
			return "passed"
		}
		if no == total {
			return "rejected"
		}
	case design.PassRatio:
		// Percent, as deploy accepts it ((0, 100]) and the client sends it: 1 is one percent,
		// not the older 0..1 scale's 100 %.
		ratio := n.PassRatio.Float()
		if float64(ok)*100 >= ratio*float64(total) {
			return "passed"
		}
		if float64(total-no)*100 < ratio*float64(total) {
			return "rejected"
		}
	default: // all
		if no > 0 {
			return "rejected"
		}
		if ok == total {
			return "passed"
		}
	}
	return ""
}

// judge is evaluate over tasks, the current tasks of v.
func (r *run) judge(ctx context.Context, n *Node, v *Visit, depth int, tasks []Task) (bool, error) {
	switch outcome(n, tasks) {
	case "passed":
		if err := r.cancelLive(ctx, tasks, n, "node_passed"); err != nil {
			return true, err
		}
		if err := r.closeVisit(ctx, v, VisitPassed); err != nil {
			return true, err
		}
		if _, err := r.cc(ctx, n, v, r.g.ccsOn(n, design.CCOnApprove), ""); err != nil {
			return true, err
		}
		return true, r.advance(ctx, n, depth)
	case "rejected":
		if err := r.cancelLive(ctx, tasks, n, "node_rejected"); err != nil {
			return true, err
		}
		if err := r.closeVisit(ctx, v, VisitRejected); err != nil {
			return true, err
		}
		if _, err := r.cc(ctx, n, v, r.g.ccsOn(n, design.CCOnReject), ""); err != nil {
			return true, err
		}
		return true, r.finish(ctx, InstanceRejected, "")
	}
	for _, t := range tasks {
		if t.Status == TaskPending {
			return false, nil
		}
	}
	for i := range tasks {
		if tasks[i].Status == TaskWaiting {
			return false, r.activate(ctx, &tasks[i], n)
		}
	}
	return false, nil
}

// cancelLive cancels the pending and waiting tasks among tasks (approval.task.canceled each).
func (r *run) cancelLive(ctx context.Context, tasks []Task, n *Node, reason string) error {
	for i := range tasks {
		t := &tasks[i]
		if t.Status != TaskPending && t.Status != TaskWaiting {
			continue
		}
		if err := r.setTask(ctx, t, TaskCanceled); err != nil {
			return err
		}
		if err := r.taskEvent(ctx, EventTaskCanceled, t, n, func(e *InstanceEvent) { e.Reason = reason }); err != nil {
			return err
		}
	}
	return nil
}

// cancelAll cancels every live task and active visit of the instance (withdraw, terminate),
// reading them after the run's queued writes are flushed.
func (r *run) cancelAll(ctx context.Context, reason string) error {
	if err := r.writes.Flush(ctx); err != nil {
		return err
	}
	var tasks []Task
	if err := r.tx.NewSelect().Model(&tasks).Where("instance_id = ?", r.inst.ID).
		Where("status IN (?)", bun.List(LiveTaskStatuses)).Order("sort_order").Scan(ctx); err != nil {
		return err
	}
	for i := range tasks {
		if err := r.cancelLive(ctx, tasks[i:i+1], r.g.nodes[tasks[i].NodeID], reason); err != nil {
			return err
		}
	}
	return r.writes.Queue(ctx, r.tx.NewUpdate().Model((*Visit)(nil)).Set("status = ?", VisitCanceled).Set("finished_at = ?", crud.NewTime(r.now)).
		Where("instance_id = ?", r.inst.ID).Where("status = ?", VisitActive))
}

// settle runs the consequences of the change to task t at node n, given the tasks of t's visit
// as read before the command's writes: t replaces its stale copy, the tasks waiting on t become
// pending, and the pass rule evaluates the visit — with no read of its own, so the command's
// writes wait for its final flush. The instance row is locked, so the list is the visit's.
func (r *run) settle(ctx context.Context, n *Node, t *Task, tasks []Task) error {
	for i := range tasks {
		if tasks[i].ID == t.ID {
			tasks[i] = *t
		}
	}
	if err := r.activateDependents(ctx, t, tasks); err != nil {
		return err
	}
	_, err := r.judge(ctx, n, &Visit{ID: t.VisitID}, 0, tasks) // judge needs the visit's id only
	return err
}

// activateDependents runs after task t finished, over the tasks of its visit (which hold the
// people added to t and to its parent): a "before" parent whose added people have all finished
// is pending again; the "after" children of t become pending.
func (r *run) activateDependents(ctx context.Context, t *Task, tasks []Task) error {
	n := r.g.nodes[t.NodeID]
	if t.ParentTaskID != nil && deref(t.AddAssigneeType) == AddBefore {
		var parent *Task
		pending := false
		for i := range tasks {
			c := &tasks[i]
			if c.ID == *t.ParentTaskID {
				parent = c
			} else if c.ParentTaskID != nil && *c.ParentTaskID == *t.ParentTaskID && deref(c.AddAssigneeType) == AddBefore && live(c.Status) {
				pending = true
			}
		}
		if !pending && parent != nil && parent.Status == TaskWaiting {
			if err := r.activate(ctx, parent, n); err != nil {
				return err
			}
		}
	}
	if t.Status != TaskApproved && t.Status != TaskHandled {
		return nil
	}
	for i := range tasks {
		c := &tasks[i]
		if c.ParentTaskID != nil && *c.ParentTaskID == t.ID && deref(c.AddAssigneeType) == AddAfter && c.Status == TaskWaiting {
			if err := r.activate(ctx, c, n); err != nil {
				return err
			}
		}
	}
	return nil
}
