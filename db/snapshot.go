package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/svc-framework/svc/config"
	"modernc.org/sqlite"
)

// ErrSnapshotUnsupported answers Snapshot on a server database (PostgreSQL, MySQL/MariaDB):
// their own tools own backups (DumpCommand).
var ErrSnapshotUnsupported = errors.New("db: online snapshots are taken of the embedded database only")

// Embedded reports whether d is the embedded database (a SQLite file at d.Path), the one svc
// can snapshot and restore by itself.
func (d *DB) Embedded() bool { return d.Kind == config.SQLite }

// Snapshot writes a transactionally consistent copy of the embedded database to path (which must
// not exist) while other connections keep writing. It uses SQLite's online backup API
// (sqlite3_backup_step) in one step: the step holds one read transaction on the source for the
// whole copy, so the copy is the database as of that transaction's start — writers go on
// appending to the WAL meanwhile and are never restarted or waited for — and the pages are
// copied as they are (no row is rewritten, unlike VACUUM INTO). The copy is written without a
// journal and without fsync: it is a staging file that the caller reads once and removes (a
// crash leaves a file that nothing accepts as an archive). It never copies the file itself. A
// server database answers ErrSnapshotUnsupported.
func (d *DB) Snapshot(ctx context.Context, path string) error {
	if !d.Embedded() {
		return ErrSnapshotUnsupported
	}
	if err := d.snapshot(ctx, path); err != nil {
		return fmt.Errorf("db: snapshot of %q: %w", d.Name, err)
	}
	return nil
}

// backuper is the modernc driver connection's online backup entry point.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

func (d *DB) snapshot(ctx context.Context, path string) error {
	if strings.ContainsAny(path, "?#") {
		return fmt.Errorf("path %q: must not contain ? or #", path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s exists", path)
	}
	conn, err := d.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		b, ok := dc.(backuper)
		if !ok {
			return fmt.Errorf("driver connection %T has no online backup", dc)
		}
		bk, err := b.NewBackup(path + "?_pragma=journal_mode(off)&_pragma=synchronous(off)")
		if err != nil {
			return err
		}
		// Step(-1) copies every page under one read lock: one consistent point, never restarted.
		_, err = bk.Step(-1)
		if ferr := bk.Finish(); err == nil {
			err = ferr
		}
		return err
	})
}

// IntegrityCheck runs SQLite's PRAGMA integrity_check on the embedded database and fails with
// its first complaint; a server database is not checked (nil).
func (d *DB) IntegrityCheck(ctx context.Context) error {
	if !d.Embedded() {
		return nil
	}
	var res string
	if err := d.DB.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("db: integrity check of %q: %w", d.Name, err)
	}
	if res != "ok" {
		return fmt.Errorf("db: integrity check of %q: %s", d.Name, res)
	}
	return nil
}

// OpenFile opens the embedded database file at path (a snapshot, a restored copy) with the
// settings of the primary's kind; the file is created when missing.
func OpenFile(ctx context.Context, name, path string) (*DB, error) {
	return Open(ctx, name, config.DataSource{Type: config.SQLite, Path: path})
}

// DumpCommand is the command that backs up a server data source with the database's own tool
// (pg_dump or mysqldump, the password left to the tool's prompt or environment); empty for the
// embedded kind, which svc snapshots itself.
func DumpCommand(ds config.DataSource) string {
	switch ds.Type {
	case config.Postgres:
		cmd := "pg_dump --format=custom --host=" + hostOr(ds.Host, "127.0.0.1") + " --port=" + portOr(ds.Port, 5432) +
			" --username=" + ds.User + " --file=svc-" + ds.Database + ".dump"
		if ds.Schema != "" {
			cmd += " --schema=" + ds.Schema
		}
		return cmd + " " + ds.Database
	case config.MySQL:
		return "mysqldump --single-transaction --routines --host=" + hostOr(ds.Host, "127.0.0.1") + " --port=" +
			portOr(ds.Port, 3306) + " --user=" + ds.User + " -p --result-file=svc-" + ds.Database + ".sql " + ds.Database
	}
	return ""
}

// RestoreCommand is the matching restore command of DumpCommand (pg_restore or mysql).
func RestoreCommand(ds config.DataSource) string {
	switch ds.Type {
	case config.Postgres:
		return "pg_restore --clean --if-exists --host=" + hostOr(ds.Host, "127.0.0.1") + " --username=" + ds.User +
			" --dbname=" + ds.Database + " svc-" + ds.Database + ".dump"
	case config.MySQL:
		return "mysql --host=" + hostOr(ds.Host, "127.0.0.1") + " --user=" + ds.User + " -p " + ds.Database +
			" < svc-" + ds.Database + ".sql"
	}
	return ""
}

// EmbeddedPath answers the database file of an embedded (SQLite) data source, or "" for a
// server database.
func EmbeddedPath(ds config.DataSource) string {
	if ds.Type == config.SQLite {
		return ds.Path
	}
	return ""
}
