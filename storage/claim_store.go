package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// claimRow maps sys_storage_upload_claim.
type claimRow struct {
	bun.BaseModel `bun:"table:sys_storage_upload_claim"`

	ID               string    `bun:"id,pk"`
	CreatedAt        time.Time `bun:"created_at"`
	CreatedBy        string    `bun:"created_by"`
	ObjectKey        string    `bun:"object_key"`
	UploadID         string    `bun:"upload_id"`
	Size             int64     `bun:"size"`
	ContentType      string    `bun:"content_type"`
	OriginalFilename string    `bun:"original_filename"`
	Status           string    `bun:"status"`
	Public           bool      `bun:"public"`
	PartSize         int64     `bun:"part_size"`
	PartCount        int       `bun:"part_count"`
	ExpiresAt        time.Time `bun:"expires_at"`
}

func (r *claimRow) claim() *Claim {
	return &Claim{
		ID: r.ID, CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy, Key: r.ObjectKey, UploadID: r.UploadID,
		Size: r.Size, ContentType: r.ContentType, OriginalFilename: r.OriginalFilename, Status: r.Status,
		Public: r.Public, PartSize: r.PartSize, PartCount: r.PartCount, ExpiresAt: r.ExpiresAt.UTC(),
	}
}

func rowOf(c *Claim) *claimRow {
	return &claimRow{
		ID: c.ID, CreatedAt: dbTime(c.CreatedAt), CreatedBy: c.CreatedBy, ObjectKey: c.Key, UploadID: c.UploadID,
		Size: c.Size, ContentType: c.ContentType, OriginalFilename: c.OriginalFilename, Status: c.Status,
		Public: c.Public, PartSize: c.PartSize, PartCount: c.PartCount, ExpiresAt: dbTime(c.ExpiresAt),
	}
}

// dbTime is the form every time takes in the database: UTC, microseconds (the precision of
// PostgreSQL and MySQL DATETIME(6)), so a value read back equals the value written.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// claimStore reads and writes claims. Every write that changes a claim's state is conditional on
// the state it expects, so two nodes (or a retry) racing on one claim change it once.
type claimStore struct{}

// insert stores a new claim.
func (claimStore) insert(ctx context.Context, db bun.IDB, c *Claim) error {
	_, err := db.NewInsert().Model(rowOf(c)).Exec(ctx)
	return err
}

// setUploadID records the backend session of a pending claim.
func (claimStore) setUploadID(ctx context.Context, db bun.IDB, id, uploadID string) (bool, error) {
	res, err := db.NewUpdate().Model((*claimRow)(nil)).
		Set("upload_id = ?", uploadID).
		Where("id = ?", id).Where("status = ?", StatusPending).
		Exec(ctx)
	return affected(res, err)
}

// get returns the claim with id, or nil when there is none.
func (claimStore) get(ctx context.Context, db bun.IDB, id string) (*Claim, error) {
	var row claimRow
	err := db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return row.claim(), nil
}

// countPending counts the principal's pending claims that have not expired at now.
func (claimStore) countPending(ctx context.Context, db bun.IDB, owner string, now time.Time) (int64, error) {
	return db.NewSelect().Model((*claimRow)(nil)).
		Where("created_by = ?", owner).Where("status = ?", StatusPending).
		Where("expires_at > ?", dbTime(now)).
		Count(ctx)
}

// markUploaded moves a pending claim to uploaded; false when it was not pending.
func (claimStore) markUploaded(ctx context.Context, db bun.IDB, id string) (bool, error) {
	res, err := db.NewUpdate().Model((*claimRow)(nil)).
		Set("status = ?", StatusUploaded).
		Where("id = ?", id).Where("status = ?", StatusPending).
		Exec(ctx)
	return affected(res, err)
}

// remove deletes the claim when it is in status; its parts go with it (ON DELETE CASCADE).
func (claimStore) remove(ctx context.Context, db bun.IDB, id, status string) (bool, error) {
	res, err := db.NewDelete().Model((*claimRow)(nil)).
		Where("id = ?", id).Where("status = ?", status).
		Exec(ctx)
	return affected(res, err)
}

// expiring lists claims in status whose expires_at is before cutoff, oldest first.
func (claimStore) expiring(ctx context.Context, db bun.IDB, status string, cutoff time.Time, limit int) ([]*Claim, error) {
	var rows []claimRow
	err := db.NewSelect().Model(&rows).
		Where("status = ?", status).Where("expires_at < ?", dbTime(cutoff)).
		OrderExpr("expires_at ASC").Limit(int64(limit)).
		Scan(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Claim, len(rows))
	for i := range rows {
		out[i] = rows[i].claim()
	}
	return out, nil
}

// consume deletes the uploaded claims of owner under keys (adoption) and returns how many went.
func (claimStore) consume(ctx context.Context, db bun.IDB, owner string, keys []string) (int64, error) {
	res, err := db.NewDelete().Model((*claimRow)(nil)).
		Where("object_key IN (?)", bun.List(keys)).
		Where("status = ?", StatusUploaded).Where("created_by = ?", owner).
		Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// affected turns an exec result into "exactly one row changed".
func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
