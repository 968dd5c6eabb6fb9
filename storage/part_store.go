package storage

import (
	"context"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// partRow maps sys_storage_upload_part: one recorded part of a pending claim. The ETag is the
// backend's and never leaves the server (spec §2.4).
type partRow struct {
	bun.BaseModel `bun:"table:sys_storage_upload_part"`

	ID         string    `bun:"id,pk"`
	ClaimID    string    `bun:"claim_id"`
	PartNumber int       `bun:"part_number"`
	ETag       string    `bun:"etag"`
	Size       int64     `bun:"size"`
	CreatedAt  time.Time `bun:"created_at"`
}

// partStore records parts. Re-sending a part number replaces its row (last writer wins).
type partStore struct{ d *db.DB }

// upsert records part p of claimID. A claim deleted meanwhile makes it fail with a foreign-key
// violation, which the caller answers as an unknown claim.
func (s partStore) upsert(ctx context.Context, idb bun.IDB, claimID string, p backend.Part, now time.Time) error {
	row := &partRow{ID: newID(), ClaimID: claimID, PartNumber: p.Number, ETag: p.ETag, Size: p.Size, CreatedAt: dbTime(now)}
	q := s.d.OnConflictUpdate(idb.NewInsert().Model(row), []string{"claim_id", "part_number"}, "etag", "size", "created_at")
	_, err := q.Exec(ctx)
	return err
}

// list returns the recorded parts of claimID in ascending part number.
func (partStore) list(ctx context.Context, db bun.IDB, claimID string) ([]backend.Part, error) {
	var rows []partRow
	err := db.NewSelect().Model(&rows).Where("claim_id = ?", claimID).OrderExpr("part_number ASC").Scan(ctx)
	if err != nil {
		return nil, err
	}
	parts := make([]backend.Part, len(rows))
	for i, r := range rows {
		parts[i] = backend.Part{Number: r.PartNumber, ETag: r.ETag, Size: r.Size}
	}
	return parts, nil
}

// remove forgets one part (a replacement that failed half-way leaves no stale record).
func (partStore) remove(ctx context.Context, db bun.IDB, claimID string, number int) error {
	_, err := db.NewDelete().Model((*partRow)(nil)).
		Where("claim_id = ?", claimID).Where("part_number = ?", number).Exec(ctx)
	return err
}

// clear forgets every part of claimID (spec §3: completion clears the recorded parts).
func (partStore) clear(ctx context.Context, db bun.IDB, claimID string) error {
	_, err := db.NewDelete().Model((*partRow)(nil)).Where("claim_id = ?", claimID).Exec(ctx)
	return err
}
