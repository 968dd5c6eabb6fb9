package backup_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestBackupOnEveryDatabase runs the module's database code on SQLite, PostgreSQL and MariaDB:
// create (the embedded database snapshotted; a server database answered with its dump
// commands and a files-only archive), the lease keeping a second backup out, find_page, get,
// download through its link, delete, retention, and the permission of every action.
func TestBackupOnEveryDatabase(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		dir := t.TempDir()
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			c.Backup.Dir = filepath.Join(dir, "backups")
			c.Security.Roles = map[string][]string{"admin": {"*"}}
		}))
		ctx := context.Background()
		admin := svctest.As(svctest.User("op", "admin"))
		content := bytes.Repeat([]byte("file"), 1000)
		key := uploadFile(t, srv, svctest.User("u", "admin"), content)

		bk := srv.Backup()
		advice := bk.DatabaseAdvice()
		if embedded := kind == config.SQLite; embedded != (advice == "") {
			t.Errorf("DatabaseAdvice = %q on %s", advice, kind)
		}
		if kind == config.Postgres && !strings.Contains(advice, "pg_dump") || kind == config.MySQL && !strings.Contains(advice, "mysqldump") {
			t.Errorf("DatabaseAdvice on %s = %q, want the dump command", kind, advice)
		}
		var ids []string
		for range 3 {
			b, err := bk.Create(ctx, backup.Request{})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if b.Status != backup.StatusSucceeded || b.FileCount != 1 || b.DBIncluded != (kind == config.SQLite) {
				t.Fatalf("backup = %+v, want succeeded, 1 file, database included only on sqlite", b)
			}
			ids = append(ids, b.ID)
		}
		m, err := backup.Verify(mustOpen(t, filepath.Join(dir, "backups", mustGet(t, srv, ids[0]).Name)), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.DatabaseIncluded != (kind == config.SQLite) || m.Entries[len(m.Entries)-1].Key != key || m.SchemaVersions["backup"] != 1 {
			t.Errorf("manifest = %+v", m)
		}

		r := srv.Call(t, "sys/backup", "find_page", map[string]any{}, admin)
		var page struct {
			Total int64
			Items []backup.Backup
		}
		r.DataAs(t, &page)
		if page.Total != 3 || len(page.Items) != 3 || page.Items[0].ID != ids[2] {
			t.Errorf("find_page = %d items (total %d), want 3 newest first", len(page.Items), page.Total)
		}

		r = srv.Call(t, "sys/backup", "download", map[string]any{"id": ids[2]}, admin)
		var dl backup.Download
		r.DataAs(t, &dl)
		resp, body := srv.Do(t, mustRequest(t, dl.URL))
		if resp.StatusCode != 200 || int64(len(body)) != dl.Size {
			t.Errorf("download: status %d, %d bytes, want 200 and %d", resp.StatusCode, len(body), dl.Size)
		}
		if resp, _ := srv.Do(t, mustRequest(t, strings.Replace(dl.URL, "token=", "token=x", 1))); resp.StatusCode == 200 {
			t.Error("download with a wrong token answered 200")
		}

		if n, err := bk.Prune(ctx, 1, 0); err != nil || n != 2 {
			t.Errorf("Prune(keepLast 1) = %d, %v; want 2 removed", n, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "backups", mustGet(t, srv, ids[2]).Name)); err != nil {
			t.Errorf("the newest archive is gone after Prune: %v", err)
		}
		r = srv.Call(t, "sys/backup", "get", map[string]any{"id": ids[0]}, admin)
		if r.Code != 2001 {
			t.Errorf("get of a pruned backup: code %d, want 2001", r.Code)
		}
		if r = srv.Call(t, "sys/backup", "delete", map[string]any{"id": ids[2]}, admin); r.Code != 0 {
			t.Errorf("delete: %d %s", r.Code, r.Message)
		}

		noPerms := svctest.As(svctest.User("nobody"))
		for _, action := range []string{"find_page", "get", "info", "create", "delete", "download", "restore"} {
			if r := srv.Call(t, "sys/backup", action, map[string]any{"id": ids[2]}, noPerms); r.Code != 1100 && r.Status != 403 {
				t.Errorf("%s without permission: status %d code %d, want 403", action, r.Status, r.Code)
			}
		}
	})
}

// TestBackupLeaseIsExclusive: while one backup holds the lease another is refused with ErrBusy,
// on every database.
func TestBackupLeaseIsExclusive(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		dir := t.TempDir()
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) { c.Backup.Dir = dir }))
		ctx := context.Background()
		uploadFile(t, srv, svctest.User("u", "admin"), []byte("one file, so a server database's backup reads something"))
		release := make(chan struct{})
		started := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			_, err := srv.Backup().Create(ctx, backup.Request{Progress: func(done, total int64) {
				select {
				case <-started:
				default:
					close(started)
					<-release
				}
			}})
			errc <- err
		}()
		select {
		case <-started:
		case err := <-errc:
			t.Fatalf("the first backup ended before reporting progress: %v", err)
		}
		if _, err := srv.Backup().Create(ctx, backup.Request{}); !errors.Is(err, backup.ErrBusy) {
			t.Errorf("second Create = %v, want ErrBusy", err)
		}
		close(release)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Backup().Create(ctx, backup.Request{}); err != nil {
			t.Errorf("Create after the first finished: %v", err)
		}
	})
}

// TestScheduledBackupJob: with the cron store on, the schedule svc.backup exists paused with
// the default retention, its params are checked on save, and a run backs up then prunes.
func TestScheduledBackupJob(t *testing.T) {
	dir := t.TempDir()
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.Backup.Dir = dir
		c.Cron.Store.Enabled = true
		c.Security.Roles = map[string][]string{"admin": {"*"}}
	}))
	ctx := context.Background()
	sch, err := srv.Cron().Get(ctx, backup.JobName)
	if err != nil {
		t.Fatalf("schedule %s: %v", backup.JobName, err)
	}
	if sch.IsEnabled || sch.JobName != backup.JobName || sch.Trigger.Expr != "0 3 * * *" {
		t.Errorf("schedule = enabled %t, job %s, expr %q; want paused, %s, 0 3 * * *", sch.IsEnabled, sch.JobName, sch.Trigger.Expr, backup.JobName)
	}
	r := srv.Call(t, "sys/cron/schedule", "update", map[string]any{"name": backup.JobName, "jobName": backup.JobName,
		"trigger": map[string]any{"kind": "cron", "expr": "0 3 * * *"}, "params": map[string]any{"keepLast": -1}},
		svctest.As(svctest.User("op", "admin")))
	if r.Code != 2706 {
		t.Errorf("update with keepLast -1: code %d %s, want 2706", r.Code, r.Message)
	}
	for range 3 {
		if err := srv.Backup().RunJob(ctx, []byte(`{"keepLast":2}`)); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d archives after three runs with keepLast 2, want 2", len(entries))
	}
}
