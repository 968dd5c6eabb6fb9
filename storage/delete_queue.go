package storage

import (
	"context"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// Delete reasons written to the queue and the registry (wire-core §7.8).
const (
	ReasonReplaced     = "replaced"
	ReasonDeleted      = "deleted"
	ReasonClaimExpired = "claim_expired"
	ReasonAborted      = "aborted"
	ReasonOrphaned     = "orphaned"
)

// pendingDelete maps sys_storage_pending_delete: an object (and maybe a multipart session) the
// delete worker must remove. LeaseToken names the worker run that holds the row until
// NextAttemptAt; finishing a row is conditional on the token, so a row is finished once.
type pendingDelete struct {
	bun.BaseModel `bun:"table:sys_storage_pending_delete"`

	ID            string    `bun:"id,pk"`
	ObjectKey     string    `bun:"object_key"`
	UploadID      string    `bun:"upload_id"`
	Reason        string    `bun:"reason"`
	Attempts      int       `bun:"attempts"`
	NextAttemptAt time.Time `bun:"next_attempt_at"`
	LeaseToken    string    `bun:"lease_token"`
	LastError     string    `bun:"last_error"`
	CreatedAt     time.Time `bun:"created_at"`
}

// deleteQueue is the pending-delete store.
type deleteQueue struct{}

// enqueue queues key for deletion. Queuing the same key for the same reason twice keeps one row
// (insert-or-ignore on the unique (object_key, reason)).
func (deleteQueue) enqueue(ctx context.Context, tx bun.IDB, key, uploadID, reason string, now time.Time) error {
	row := &pendingDelete{
		ID: newID(), ObjectKey: key, UploadID: uploadID, Reason: reason,
		NextAttemptAt: dbTime(now), CreatedAt: dbTime(now),
	}
	_, err := tx.NewInsert().Model(row).Ignore().Exec(ctx)
	return err
}

// lease claims, in tx, up to limit due rows for token until now+window: rows other nodes hold are
// skipped (FOR UPDATE SKIP LOCKED; on SQLite the immediate transaction is the lock), and the
// pushed-back next_attempt_at keeps every node off them until the lease ends.
func (deleteQueue) lease(ctx context.Context, d *db.DB, tx bun.Tx, now time.Time, limit int, window time.Duration, token string) ([]pendingDelete, error) {
	var rows []pendingDelete
	sel := tx.NewSelect().Model(&rows).
		Where("next_attempt_at <= ?", dbTime(now)).
		OrderExpr("next_attempt_at ASC").Limit(int64(limit))
	if err := d.ForUpdateSkipLocked(sel).Scan(ctx); err != nil || len(rows) == 0 {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
		rows[i].LeaseToken = token
	}
	_, err := tx.NewUpdate().Model((*pendingDelete)(nil)).
		Set("lease_token = ?", token).Set("next_attempt_at = ?", dbTime(now.Add(window))).
		Where("id IN (?)", bun.List(ids)).
		Exec(ctx)
	return rows, err
}

// finish removes a leased row; false when the lease was lost to another run.
func (deleteQueue) finish(ctx context.Context, tx bun.IDB, id, token string) (bool, error) {
	res, err := tx.NewDelete().Model((*pendingDelete)(nil)).
		Where("id = ?", id).Where("lease_token = ?", token).Exec(ctx)
	return affected(res, err)
}

// retry records a failed attempt of a leased row and when to try again.
func (deleteQueue) retry(ctx context.Context, tx bun.IDB, id, token string, attempts int, next time.Time, lastErr string) (bool, error) {
	res, err := tx.NewUpdate().Model((*pendingDelete)(nil)).
		Set("attempts = ?", attempts).Set("next_attempt_at = ?", dbTime(next)).
		Set("last_error = ?", lastErr).Set("lease_token = ''").
		Where("id = ?", id).Where("lease_token = ?", token).
		Exec(ctx)
	return affected(res, err)
}

// pending lists the queued rows (tests and operators).
func (deleteQueue) pending(ctx context.Context, db bun.IDB) ([]pendingDelete, error) {
	var rows []pendingDelete
	err := db.NewSelect().Model(&rows).OrderExpr("created_at ASC, object_key ASC").Scan(ctx)
	return rows, err
}
