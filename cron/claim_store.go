package cron

import (
	"context"
	"strings"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// runnableRequest is the condition of a schedule with a runnable fire request: a manual one, or
// a recovery one unless the schedule forbids overlap and has a running row (wire-runtime §1.6
// step 1). Without it, schedules whose recoveries wait could fill every batch and starve due
// schedules.
const runnableRequest = `EXISTS (SELECT 1 FROM crn_fire_request r WHERE r.schedule_id = crn_schedule.id AND (
	r.kind = 'manual' OR crn_schedule.concurrency_policy = 'allow' OR NOT EXISTS (
		SELECT 1 FROM crn_run x WHERE x.schedule_id = crn_schedule.id AND x.status = 'running')))`

// requestSchedules locks, in tx, up to limit enabled schedules of local jobs that have runnable
// fire requests, oldest request first (wire-runtime §1.6 step 1). Rows other nodes hold are
// skipped.
func requestSchedules(ctx context.Context, d *db.DB, tx bun.Tx, jobs []string, limit int) ([]scheduleRow, error) {
	var rows []scheduleRow
	q := tx.NewSelect().Model(&rows).
		Where("is_enabled = ?", true).Where("job_name IN (?)", bun.List(jobs)).
		Where(runnableRequest).
		OrderExpr("(SELECT MIN(r.scheduled_at_unix_ms) FROM crn_fire_request r WHERE r.schedule_id = crn_schedule.id) ASC, id ASC").
		Limit(int64(limit))
	err := d.ForUpdateSkipLocked(q).Scan(ctx)
	return rows, err
}

// dueSchedules locks, in tx, up to limit enabled schedules of local jobs whose cursor is due
// at now, earliest first (wire-runtime §1.6 step 2), leaving out the ids in skip.
func dueSchedules(ctx context.Context, d *db.DB, tx bun.Tx, jobs []string, now time.Time, limit int, skip []string) ([]scheduleRow, error) {
	var rows []scheduleRow
	q := tx.NewSelect().Model(&rows).
		Where("is_enabled = ?", true).Where("job_name IN (?)", bun.List(jobs)).
		Where("next_fire_at_unix_ms IS NOT NULL").Where("next_fire_at_unix_ms <= ?", now.UnixMilli()).
		OrderExpr("next_fire_at_unix_ms ASC, id ASC").Limit(int64(limit))
	if len(skip) > 0 {
		q = q.Where("id NOT IN (?)", bun.List(skip))
	}
	err := d.ForUpdateSkipLocked(q).Scan(ctx)
	return rows, err
}

// runningRuns reads the running rows of the schedules (wire-runtime §1.6 step 3) without
// locking them: the schedules are locked, and takeover is a guarded UPDATE (abandonRun), so the
// claim need not wait for the outcome writes and heartbeats of the nodes running them — with
// row locks here, finishing runs and claims queued behind each other under load.
func runningRuns(ctx context.Context, _ *db.DB, tx bun.Tx, scheduleIDs []string) ([]runRow, error) {
	var rows []runRow
	err := tx.NewSelect().Model(&rows).
		Where("schedule_id IN (?)", bun.List(scheduleIDs)).Where("status = ?", StatusRunning).
		OrderExpr("id ASC").Scan(ctx)
	return rows, err
}

// pendingRequests locks the fire requests of the schedules, in logical order (step 4).
func pendingRequests(ctx context.Context, d *db.DB, tx bun.Tx, scheduleIDs []string) ([]fireRequest, error) {
	var rows []fireRequest
	q := tx.NewSelect().Model(&rows).
		Where("schedule_id IN (?)", bun.List(scheduleIDs)).
		OrderExpr("scheduled_at_unix_ms ASC, id ASC")
	err := d.ForUpdateSkipLocked(q).Scan(ctx)
	return rows, err
}

// insertRuns journals the runs of a claim batch in one statement.
func insertRuns(ctx context.Context, tx bun.IDB, rows []*runRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&rows).Exec(ctx)
	return err
}

// insertRequest queues a fire request.
func insertRequest(ctx context.Context, tx bun.IDB, scheduleID, kind string, at time.Time, sourceRunID string) error {
	req := &fireRequest{ID: rpc.NewID(), ScheduleID: scheduleID, Kind: kind, ScheduledAtUnixMs: at.UnixMilli()}
	if sourceRunID != "" {
		req.SourceRunID = &sourceRunID
	}
	_, err := tx.NewInsert().Model(req).Exec(ctx)
	return err
}

// deleteRequests removes consumed requests.
func deleteRequests(ctx context.Context, tx bun.IDB, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.NewDelete().Model((*fireRequest)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx)
	return err
}

// cursorMove is a schedule's new cursor and last fire time, written at the end of a claim.
type cursorMove struct {
	id         string
	next, last time.Time
}

// moveCursors stores the cursors of a claim batch in one UPDATE (a CASE per column whose ELSE
// keeps the column, so an all-NULL branch list still has the column's type).
func moveCursors(ctx context.Context, tx bun.IDB, moves []cursorMove) error {
	switch len(moves) {
	case 0:
		return nil
	case 1:
		return moveCursor(ctx, tx, moves[0].id, moves[0].next, moves[0].last)
	}
	ids := make([]string, len(moves))
	next := make([]any, 0, 2*len(moves))
	last := make([]any, 0, 2*len(moves))
	for i, m := range moves {
		ids[i] = m.id
		next = append(next, m.id, toUnixMs(m.next))
		last = append(last, m.id, toUnixMs(m.last))
	}
	when := strings.Repeat("WHEN ? THEN ? ", len(moves))
	_, err := tx.NewUpdate().Model((*scheduleRow)(nil)).
		Set("next_fire_at_unix_ms = CASE id "+when+"ELSE next_fire_at_unix_ms END", next...).
		Set("last_fire_at_unix_ms = CASE id "+when+"ELSE last_fire_at_unix_ms END", last...).
		Where("id IN (?)", bun.List(ids)).Exec(ctx)
	return err
}

// moveCursor stores a schedule's cursor and last fire time.
func moveCursor(ctx context.Context, tx bun.IDB, id string, next, last time.Time) error {
	_, err := tx.NewUpdate().Model((*scheduleRow)(nil)).
		Set("next_fire_at_unix_ms = ?", toUnixMs(next)).Set("last_fire_at_unix_ms = ?", toUnixMs(last)).
		Where("id = ?", id).Exec(ctx)
	return err
}

// abandonRun ends a stale running row; false when it was no longer running.
func abandonRun(ctx context.Context, tx bun.IDB, id string, now, cutoff time.Time) (bool, error) {
	res, err := tx.NewUpdate().Model((*runRow)(nil)).
		Set("status = ?", StatusAbandoned).Set("finished_at_unix_ms = ?", now.UnixMilli()).
		Set("error = ?", "abandoned: no heartbeat").
		Where("id = ?", id).Where("status = ?", StatusRunning).
		Where("(heartbeat_at_unix_ms IS NULL OR heartbeat_at_unix_ms < ?)", cutoff.UnixMilli()).Exec(ctx)
	return affected(res, err)
}

// finishRun records a run's outcome, guarded by status = running: when a sweep took the row
// over, the late outcome is discarded (false).
func finishRun(ctx context.Context, tx bun.IDB, id string, status Status, msg string, started, now time.Time) (bool, error) {
	res, err := tx.NewUpdate().Model((*runRow)(nil)).
		Set("status = ?", status).Set("finished_at_unix_ms = ?", now.UnixMilli()).
		Set("duration_ms = ?", max(now.Sub(started).Milliseconds(), 0)).Set("error = ?", msg).
		Where("id = ?", id).Where("status = ?", StatusRunning).Exec(ctx)
	return affected(res, err)
}

// heartbeat stamps the running rows of ids alive.
func heartbeat(ctx context.Context, tx bun.IDB, ids []string, now time.Time) error {
	_, err := tx.NewUpdate().Model((*runRow)(nil)).
		Set("heartbeat_at_unix_ms = ?", now.UnixMilli()).
		Where("id IN (?)", bun.List(ids)).Where("status = ?", StatusRunning).Exec(ctx)
	return err
}

// staleScheduleIDs lists up to limit schedules that have running rows without a heartbeat since
// cutoff (the recovery sweep's candidates).
func staleScheduleIDs(ctx context.Context, tx bun.IDB, cutoff time.Time, limit int) ([]string, error) {
	var ids []string
	err := tx.NewSelect().Model((*runRow)(nil)).Column("schedule_id").Distinct().
		Where("status = ?", StatusRunning).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("heartbeat_at_unix_ms IS NULL").WhereOr("heartbeat_at_unix_ms < ?", cutoff.UnixMilli())
		}).
		OrderExpr("schedule_id ASC").Limit(int64(limit)).Scan(ctx, &ids)
	return ids, err
}

// lockSchedules locks the schedules of ids that no other transaction holds.
func lockSchedules(ctx context.Context, d *db.DB, tx bun.Tx, ids []string) ([]scheduleRow, error) {
	var rows []scheduleRow
	q := tx.NewSelect().Model(&rows).Where("id IN (?)", bun.List(ids)).OrderExpr("id ASC")
	err := d.ForUpdateSkipLocked(q).Scan(ctx)
	return rows, err
}

// affected turns an exec result into "at least one row changed".
func affected(res interface{ RowsAffected() (int64, error) }, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
