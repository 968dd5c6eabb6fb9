package backup

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Statuses of a backup.
const (
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Triggers of a backup.
const (
	TriggerManual   = "manual"   // sys/backup create
	TriggerSchedule = "schedule" // the cron job svc.backup
	TriggerCLI      = "cli"      // svc backup
)

// Backup is one archive as sys/backup answers it (and the row of sys_backup).
type Backup struct {
	bun.BaseModel `bun:"table:sys_backup"`

	ID          string `bun:"id,pk" json:"id"`
	Name        string `bun:"name" json:"name"`
	Destination string `bun:"destination" json:"destination"`
	// Location is the archive's path (folder) or storage key (storage).
	Location   string `bun:"location" json:"location"`
	Status     string `bun:"status" json:"status"`
	Error      string `bun:"error" json:"error,omitempty"`
	Size       int64  `bun:"size" json:"size"`
	FileCount  int64  `bun:"file_count" json:"fileCount"`
	DBIncluded bool   `bun:"db_included" json:"databaseIncluded"`
	Encrypted  bool   `bun:"encrypted" json:"encrypted"`
	Trigger    string `bun:"trigger_kind" json:"trigger"`
	CreatedBy  string `bun:"created_by" json:"createdBy"`
	NodeID     string `bun:"node_id" json:"nodeId"`
	// StartedAtUnixMs is the snapshot point; FinishedAtUnixMs is 0 while running.
	StartedAtUnixMs  int64 `bun:"started_at_unix_ms" json:"startedAtUnixMs"`
	FinishedAtUnixMs int64 `bun:"finished_at_unix_ms" json:"finishedAtUnixMs"`

	DownloadToken          string `bun:"download_token" json:"-"`
	DownloadExpiresUnixMsV int64  `bun:"download_expires_unix_ms" json:"-"`
}

// store reads and writes sys_backup and the lease row of sys_backup_lease.
type store struct {
	db bun.IDB
}

func (s store) insert(ctx context.Context, b *Backup) error {
	_, err := s.db.NewInsert().Model(b).Exec(ctx)
	return err
}

// finish records the outcome of a running backup.
func (s store) finish(ctx context.Context, b *Backup) error {
	_, err := s.db.NewUpdate().Model(b).Column("status", "error", "size", "file_count", "db_included", "finished_at_unix_ms").
		WherePK().Where("status = ?", StatusRunning).Exec(ctx)
	return err
}

// get answers the backup of id, or crud's not-found error.
func (s store) get(ctx context.Context, id string) (*Backup, error) {
	b := new(Backup)
	err := s.db.NewSelect().Model(b).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rpc.ErrRecordNotFound
	}
	return b, err
}

func (s store) delete(ctx context.Context, id string) error {
	_, err := s.db.NewDelete().Model((*Backup)(nil)).Where("id = ?", id).Exec(ctx)
	return err
}

// page answers one page of backups, newest first, optionally of one status.
func (s store) page(ctx context.Context, status string, m crud.Meta) ([]Backup, int64, error) {
	var rows []Backup
	q := s.db.NewSelect().Model(&rows).OrderExpr("started_at_unix_ms DESC, id DESC")
	if status != "" {
		q = q.Where("status = ?", status)
	}
	n, err := q.Limit(int64(m.Size)).Offset(int64((m.Page - 1) * m.Size)).ScanAndCount(ctx)
	return rows, n, err
}

// succeeded answers every succeeded backup, newest first (retention works on them).
func (s store) succeeded(ctx context.Context) ([]Backup, error) {
	var rows []Backup
	err := s.db.NewSelect().Model(&rows).Where("status = ?", StatusSucceeded).OrderExpr("started_at_unix_ms DESC, id DESC").Scan(ctx)
	return rows, err
}

// failRunningExcept marks every running backup but keep failed: called by the holder of the
// lease, no other backup can be alive (a process killed mid-backup left its row running).
func (s store) failRunningExcept(ctx context.Context, keep string, now int64) error {
	_, err := s.db.NewUpdate().Model((*Backup)(nil)).Set("status = ?", StatusFailed).
		Set("error = ?", "interrupted: the process ended before the backup finished").Set("finished_at_unix_ms = ?", now).
		Where("status = ?", StatusRunning).Where("id <> ?", keep).Exec(ctx)
	return err
}

// setDownload stores the hash of a download token and its expiry.
func (s store) setDownload(ctx context.Context, id, token string, expires int64) error {
	_, err := s.db.NewUpdate().Model((*Backup)(nil)).Set("download_token = ?", tokenHash(token)).
		Set("download_expires_unix_ms = ?", expires).Where("id = ?", id).Exec(ctx)
	return err
}

// byToken answers the succeeded backup whose unexpired download token is token.
func (s store) byToken(ctx context.Context, id, token string, now int64) (*Backup, error) {
	b := new(Backup)
	err := s.db.NewSelect().Model(b).Where("id = ?", id).Where("download_token = ?", tokenHash(token)).
		Where("download_expires_unix_ms > ?", now).Where("status = ?", StatusSucceeded).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rpc.ErrRecordNotFound
	}
	return b, err
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// acquire takes the cluster-wide backup lease for holder until expires, when it is free or
// expired; it answers whether it did. One conditional UPDATE, so two nodes never both win.
func (s store) acquire(ctx context.Context, holder string, now, expires int64) (bool, error) {
	res, err := s.db.NewUpdate().Table("sys_backup_lease").Set("holder = ?", holder).Set("expires_unix_ms = ?", expires).
		Where("name = 'backup'").Where("(holder = '' OR expires_unix_ms < ? OR holder = ?)", now, holder).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("backup: lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// release frees the lease if holder still has it.
func (s store) release(ctx context.Context, holder string) error {
	_, err := s.db.NewUpdate().Table("sys_backup_lease").Set("holder = ''").Set("expires_unix_ms = 0").
		Where("name = 'backup'").Where("holder = ?", holder).Exec(ctx)
	return err
}

// schemaVersions answers the highest applied migration of every module.
func schemaVersions(ctx context.Context, db bun.IDB) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, "SELECT module, MAX(version) FROM svc_schema_migrations GROUP BY module")
	if err != nil {
		return nil, fmt.Errorf("backup: schema versions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]int{}
	for rows.Next() {
		var m string
		var v int
		if err := rows.Scan(&m, &v); err != nil {
			return nil, err
		}
		out[m] = v
	}
	return out, rows.Err()
}

// objectRef is an object a database state references: a registered file that is not deleted,
// or an uploaded claim not yet registered.
type objectRef struct {
	Key  string
	Size int64
}

// referencedObjects reads storage's tables (sys_storage_file, sys_storage_upload_claim) in db:
// the objects whose rows the database holds. Deleted files are left out (their object is queued
// for deletion); pending claims too (their multipart sessions are not objects yet). A database
// without storage's tables references nothing.
func referencedObjects(ctx context.Context, db bun.IDB) ([]objectRef, error) {
	rows, err := db.QueryContext(ctx, `SELECT object_key, size FROM sys_storage_file WHERE status <> 'deleted'
UNION SELECT object_key, size FROM sys_storage_upload_claim WHERE status = 'uploaded' ORDER BY 1`)
	if err != nil {
		if exists, _ := tableExists(ctx, db, "sys_storage_file"); !exists {
			return nil, nil
		}
		return nil, fmt.Errorf("backup: referenced objects: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []objectRef
	for rows.Next() {
		var r objectRef
		if err := rows.Scan(&r.Key, &r.Size); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// tableExists probes a table with a query every dialect answers.
func tableExists(ctx context.Context, db bun.IDB, table string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE 1 = 0").Scan(&n)
	return err == nil, err
}
