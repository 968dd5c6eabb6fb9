package approval

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// Types of the scanner events (wire-approval §10).
const (
	EventTaskTimedOut        = "approval.task.timed_out"
	EventTaskDeadlineWarning = "approval.task.deadline_warning"
)

// scanBatch is how many tasks one scan takes up at most.
const scanBatch = 100

// systemOperator is the operator of what the scanners do.
var systemOperator = UserInfo{ID: "system", Name: "system"}

// workers are the module's scanners (wire-approval §8): timeouts every
// svc.approval.timeout_scan_interval, deadline pre-warnings every pre_warning_scan_interval,
// retention cleanup every cleanup_scan_interval. Every one is safe on several nodes at once: a
// timeout is processed under the instance's row lock and re-checked there, a warning is claimed
// by a conditional update, the cleanup deletes idempotently.
func (s *Service) workers() []app.Worker {
	logged := func(name string, fn func(context.Context) (int, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			n, err := fn(ctx)
			if n > 0 {
				s.log.Info("approval scan", slog.String("scan", name), slog.Int("rows", n))
			}
			return err
		}
	}
	return []app.Worker{
		{Name: "approval-timeouts", Interval: s.cfg.TimeoutScanInterval, Run: logged("timeouts", s.ScanTimeouts)},
		{Name: "approval-pre-warnings", Interval: s.cfg.PreWarningScanInterval, Run: logged("pre-warnings", s.ScanPreWarnings)},
		{Name: "approval-cleanup", Interval: s.cfg.CleanupScanInterval, Run: logged("cleanup", s.Cleanup)},
		{Name: "approval-binding", Interval: s.cfg.BusinessBinding.ScanInterval, Run: logged("binding", s.ScanProjections)},
	}
}

// ScanTimeouts processes the pending tasks whose deadline has passed and that are not marked
// timed out yet (at most one batch): each in its own transaction with the instance row locked
// first and the task re-checked, marked is_timeout, approval.task.timed_out published, then the
// node's timeout action applied — none and notify mark only; auto_pass approves (handles) and
// auto_reject rejects the task and evaluates the node; transfer_admin gives the node's admins
// without a live task new tasks and transfers the overdue one. It returns how many tasks it
// timed out.
func (s *Service) ScanTimeouts(ctx context.Context) (int, error) {
	now := crud.NewTime(s.clock())
	var ids []string
	if err := s.db.NewSelect().Model((*Task)(nil)).Column("id").Where("status = ?", TaskPending).Where("is_timeout = ?", false).
		Where("deadline IS NOT NULL").Where("deadline <= ?", now).Order("deadline").Limit(scanBatch).Scan(ctx, &ids); err != nil {
		return 0, err
	}
	done := 0
	for _, id := range ids {
		ok, err := s.timeoutTask(ctx, id)
		if err != nil {
			s.log.Error("approval timeout", slog.String("task", id), slog.Any("error", err))
			continue
		}
		if ok {
			done++
		}
	}
	return done, nil
}

// timeoutTask times out task id when it is still due (false when another node or a decision
// got there first).
func (s *Service) timeoutTask(ctx context.Context, id string) (bool, error) {
	done := false
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		l, err := s.lockedTask(ctx, tx, caller{ID: systemOperator.ID, Super: true}, id)
		if err != nil {
			return err
		}
		t, inst := l.task, l.inst
		if inst.Status != InstanceRunning || t.Status != TaskPending || t.IsTimeout || t.Deadline.IsZero() || t.Deadline.After(s.clock()) {
			return nil // no longer due: no run to build
		}
		r, err := s.lockedRun(ctx, tx, l, systemOperator)
		if err != nil {
			return err
		}
		done = true
		n := r.g.nodes[t.NodeID]
		if _, err := tx.NewUpdate().Model(t).Set("is_timeout = ?", true).WherePK().Exec(ctx); err != nil {
			return err
		}
		t.IsTimeout = true
		if err := r.taskEvent(ctx, EventTaskTimedOut, t, n, nil); err != nil {
			return err
		}
		switch n.TimeoutAction {
		case design.TimeoutAutoPass:
			action := ActionApprove
			if n.Kind == design.NodeHandle {
				action = ActionHandle
			}
			err = r.decide(ctx, n, t, action, ProcessTaskParams{Opinion: "timeout"}, l.visit)
		case design.TimeoutAutoReject:
			err = r.decide(ctx, n, t, ActionReject, ProcessTaskParams{Opinion: "timeout"}, l.visit)
		case design.TimeoutTransferAdmin:
			err = r.timeoutToAdmins(ctx, n, t)
		}
		if err != nil {
			return err
		}
		return r.save(ctx)
	})
	return done, err
}

// timeoutToAdmins transfers an overdue task to the node's admins that hold no live task there.
func (r *run) timeoutToAdmins(ctx context.Context, n *Node, t *Task) error {
	live, err := r.liveAt(ctx, n)
	if err != nil {
		return err
	}
	var admins []string
	for _, a := range dedupe(n.AdminUserIDs) {
		if a != t.AssigneeID && !slices.Contains(live, a) {
			admins = append(admins, a)
		}
	}
	if len(admins) == 0 {
		r.s.log.Error("approval timeout transfer_admin: the node has no admin without a live task", slog.String("task", t.ID), slog.String("node", n.Key))
		return nil
	}
	infos, err := r.s.userInfos(ctx, admins)
	if err != nil {
		return err
	}
	if err := r.setTask(ctx, t, TaskTransferred); err != nil {
		return err
	}
	from := t.assignee()
	for i, a := range admins {
		nt := &Task{}
		if i == 0 { // the first admin takes the task's seat, with a fresh deadline
			if nt, err = r.replaceTask(ctx, n, t, infos[a], r.deadline(n)); err != nil {
				return err
			}
		} else {
			r.fillTask(nt, n, &Visit{ID: t.VisitID}, infos[a], t.SortOrder)
			if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(nt)); err != nil {
				return err
			}
		}
		to := infos[a]
		if err := r.taskEvent(ctx, EventTaskTransferred, t, n, func(e *InstanceEvent) { e.From, e.To, e.Reason = &from, &to, "timeout" }); err != nil {
			return err
		}
		if err := r.taskEvent(ctx, EventTaskCreated, nt, n, nil); err != nil {
			return err
		}
	}
	return nil
}

// ScanPreWarnings warns the assignees of pending tasks that enter their node's
// timeoutNotifyBeforeHours window (approval.task.deadline_warning with hoursLeft), once per
// task: the warning is claimed by a conditional update, so two nodes never both send it.
func (s *Service) ScanPreWarnings(ctx context.Context) (int, error) {
	now := s.clock().UTC()
	var tasks []Task
	if err := s.db.NewSelect().Model(&tasks).Join("JOIN apv_flow_node AS fn ON fn.id = task.node_id").
		Where("task.status = ?", TaskPending).Where("task.is_pre_warning_sent = ?", false).Where("task.is_timeout = ?", false).
		Where("task.deadline IS NOT NULL").Where("task.deadline > ?", crud.NewTime(now)).
		Where("fn.timeout_notify_before_hours > 0").Where("task.deadline <= ?", crud.NewTime(now.Add(maxWarnWindow))).
		Order("task.deadline").Limit(scanBatch).Scan(ctx); err != nil {
		return 0, err
	}
	sent := 0
	for i := range tasks {
		ok, err := s.preWarn(ctx, &tasks[i], now)
		if err != nil {
			s.log.Error("approval pre-warning", slog.String("task", tasks[i].ID), slog.Any("error", err))
			continue
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// maxWarnWindow bounds the pre-warning query (a node's window is checked per task).
const maxWarnWindow = 24 * 365 * time.Hour

func (s *Service) preWarn(ctx context.Context, t *Task, now time.Time) (bool, error) {
	sent := false
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		inst := new(Instance)
		if err := tx.NewSelect().Model(inst).Where("id = ?", t.InstanceID).Scan(ctx); err != nil {
			return err
		}
		r, err := s.newRun(ctx, tx, inst, systemOperator)
		if err != nil {
			return err
		}
		n := r.g.nodes[t.NodeID]
		if t.Deadline.Add(-time.Duration(n.TimeoutNotifyBeforeHours) * time.Hour).After(now) {
			return nil // not in the window yet
		}
		res, err := tx.NewUpdate().Model((*Task)(nil)).Set("is_pre_warning_sent = ?", true).Where("id = ?", t.ID).
			Where("is_pre_warning_sent = ?", false).Where("status = ?", TaskPending).Exec(ctx)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return nil
		}
		sent = true
		hours := int(t.Deadline.Sub(now).Hours())
		return r.taskEvent(ctx, EventTaskDeadlineWarning, t, n, func(e *InstanceEvent) { e.HoursLeft = &hours })
	})
	return sent, err
}

// Cleanup prunes form snapshots, urge records and read CC records older than
// svc.approval.form_snapshot_retention, urge_record_retention and cc_record_retention. It
// returns how many rows it deleted.
func (s *Service) Cleanup(ctx context.Context) (int, error) {
	now := s.clock().UTC() // the retentions are the configuration's (defaults applied at load)
	total := 0
	for _, c := range []struct {
		model any
		age   time.Duration
		extra string
	}{
		{(*FormSnapshot)(nil), s.cfg.FormSnapshotRetention, ""},
		{(*UrgeRecord)(nil), s.cfg.UrgeRecordRetention, ""},
		{(*CCRecord)(nil), s.cfg.CCRecordRetention, "read_at IS NOT NULL"},
	} {
		q := s.db.NewDelete().Model(c.model).Where("created_at < ?", crud.NewTime(now.Add(-c.age)))
		if c.extra != "" {
			q = q.Where(c.extra)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return total, fmt.Errorf("approval cleanup: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, nil
}
