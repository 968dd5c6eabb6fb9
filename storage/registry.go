package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// File statuses of the registry (wire-core §7.5).
const (
	FileStatusUploaded = "uploaded"
	FileStatusClaimed  = "claimed"
	FileStatusDeleted  = "deleted"
)

// File is a registry record (table sys_storage_file): what the server knows about a completed
// upload. Records outlive their objects, marked deleted.
type File struct {
	ID               string
	Key              string
	OriginalFilename string
	ContentType      string
	Size             int64
	Public           bool
	Status           string
	UploadedBy       string    // the uploader's principal id
	UploadedAt       time.Time // when the upload started (claim creation)
	ClaimedAt        time.Time // zero unless adopted
	DeletedAt        time.Time // zero unless deleted
	DeleteReason     string
}

// fileRow maps sys_storage_file.
type fileRow struct {
	bun.BaseModel `bun:"table:sys_storage_file"`

	ID               string     `bun:"id,pk"`
	CreatedAt        time.Time  `bun:"created_at"`
	CreatedBy        string     `bun:"created_by"`
	ObjectKey        string     `bun:"object_key"`
	OriginalFilename string     `bun:"original_filename"`
	ContentType      string     `bun:"content_type"`
	Size             int64      `bun:"size"`
	Public           bool       `bun:"public"`
	Status           string     `bun:"status"`
	StartedAt        time.Time  `bun:"started_at"`
	ClaimedAt        *time.Time `bun:"claimed_at"`
	DeletedAt        *time.Time `bun:"deleted_at"`
	DeleteReason     string     `bun:"delete_reason"`
}

func (r *fileRow) file() File {
	f := File{
		ID: r.ID, Key: r.ObjectKey, OriginalFilename: r.OriginalFilename, ContentType: r.ContentType,
		Size: r.Size, Public: r.Public, Status: r.Status, UploadedBy: r.CreatedBy,
		UploadedAt: r.StartedAt.UTC(), DeleteReason: r.DeleteReason,
	}
	if r.ClaimedAt != nil {
		f.ClaimedAt = r.ClaimedAt.UTC()
	}
	if r.DeletedAt != nil {
		f.DeletedAt = r.DeletedAt.UTC()
	}
	return f
}

// registry is the file registry store.
type registry struct{}

// record registers a completed claim as an uploaded file. Recording the same claim twice keeps
// the first record (completion is idempotent).
func (registry) record(ctx context.Context, db bun.IDB, c *Claim, now time.Time) error {
	row := &fileRow{
		ID: c.ID, CreatedAt: dbTime(now), CreatedBy: c.CreatedBy, ObjectKey: c.Key,
		OriginalFilename: c.OriginalFilename, ContentType: c.ContentType, Size: c.Size, Public: c.Public,
		Status: FileStatusUploaded, StartedAt: dbTime(c.CreatedAt),
	}
	_, err := db.NewInsert().Model(row).Ignore().Exec(ctx)
	return err
}

// markClaimed moves uploaded records of keys to claimed (adoption).
func (registry) markClaimed(ctx context.Context, db bun.IDB, keys []string, now time.Time) error {
	_, err := db.NewUpdate().Model((*fileRow)(nil)).
		Set("status = ?", FileStatusClaimed).Set("claimed_at = ?", dbTime(now)).
		Where("object_key IN (?)", bun.List(keys)).Where("status = ?", FileStatusUploaded).
		Exec(ctx)
	return err
}

// markDeleted records that the object of key is gone, and why.
func (registry) markDeleted(ctx context.Context, db bun.IDB, key, reason string, now time.Time) error {
	_, err := db.NewUpdate().Model((*fileRow)(nil)).
		Set("status = ?", FileStatusDeleted).Set("deleted_at = ?", dbTime(now)).Set("delete_reason = ?", reason).
		Where("object_key = ?", key).Where("status <> ?", FileStatusDeleted).
		Exec(ctx)
	return err
}

// lookup returns the record of key, or ok=false.
func (registry) lookup(ctx context.Context, db bun.IDB, key string) (File, bool, error) {
	var row fileRow
	err := db.NewSelect().Model(&row).Where("object_key = ?", key).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	return row.file(), true, nil
}

// lookupMany returns the records of keys by key; unknown keys are absent.
func (registry) lookupMany(ctx context.Context, db bun.IDB, keys []string) (map[string]File, error) {
	var rows []fileRow
	if err := db.NewSelect().Model(&rows).Where("object_key IN (?)", bun.List(keys)).Scan(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]File, len(rows))
	for i := range rows {
		out[rows[i].ObjectKey] = rows[i].file()
	}
	return out, nil
}
