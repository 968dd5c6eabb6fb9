package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// Environment of the crash child: the data directory of the parent's server.
const childDirEnv = "SVC_BACKUP_CRASH_CHILD_DIR"

// TestBackupCrashChild is the child of TestBackupKilledMidwayLeavesNoArchive: it takes a backup
// of the parent's data directory and reports progress on stdout, pausing at its first report so
// the parent kills it in the middle.
func TestBackupCrashChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		return // run directly, not as the child: nothing to do (the parent test does the checking)
	}
	cfg := svctest.Config(t, config.SQLite)
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(dir, "svc.db")}}
	cfg.Storage.Provider = config.StorageFilesystem
	cfg.Storage.Filesystem.Root = filepath.Join(dir, "storage")
	cfg.Backup.Dir = filepath.Join(dir, "backups")
	srv, err := svc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = srv.BackupService(context.Background(), func(s *backup.Service) error {
		_, err := s.Create(context.Background(), backup.Request{Progress: func(done, total int64) {
			if done > 0 && done < total {
				fmt.Printf("progress %d %d\n", done, total)
				time.Sleep(10 * time.Second) // the parent kills the process here
			}
		}})
		return err
	})
	t.Fatalf("the backup ended (%v): the parent should have killed it", err)
}

// TestBackupKilledMidwayLeavesNoArchive: a backup process killed by SIGKILL in the middle
// leaves no archive under a final name, the partial file it left is refused by Verify and
// Restore (the current data untouched), and its lease keeps other backups out until it expires.
func TestBackupKilledMidwayLeavesNoArchive(t *testing.T) {
	srv, dir := newServer(t)
	for i := range 8 {
		uploadFile(t, srv, svctest.User("u", "admin"), bytes.Repeat([]byte{byte(i)}, 512<<10))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackupCrashChild$", "-test.v")
	cmd.Env = svctest.ChildEnv(childDirEnv + "=" + dir)
	// The svctest data source is in its own temp dir; point the child at the server's file.
	dbPath := srv.Config().DataSources[config.PrimaryDataSource].Path
	if err := os.Symlink(dbPath, filepath.Join(dir, "svc.db")); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	progressed := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "progress ") {
				progressed <- true
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-progressed:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the child never reported progress")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	entries, err := os.ReadDir(filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	var partial string
	for _, e := range entries {
		switch {
		case strings.HasSuffix(e.Name(), ".partial"):
			partial = filepath.Join(dir, "backups", e.Name())
		case strings.HasPrefix(e.Name(), ".staging-"):
		default:
			t.Errorf("archive %s exists after the backup was killed", e.Name())
		}
	}
	if partial == "" {
		t.Fatal("no partial file: the child was killed before writing (the test proves nothing)")
	}
	if _, err := backup.Verify(mustOpen(t, partial), nil, nil); !errors.Is(err, backup.ErrArchivePartial) {
		t.Errorf("Verify(partial) = %v, want ErrArchivePartial", err)
	}
	target := t.TempDir()
	res, err := restoreAttempt(t, srv, partial, target)
	if err == nil || res != nil {
		t.Errorf("Restore(partial) = %v, %v; want a refusal", res, err)
	}
	if _, err := os.Stat(filepath.Join(target, "svc.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused restore created the target database (%v)", err)
	}
	if _, err := srv.Backup().Create(context.Background(), backup.Request{}); !errors.Is(err, backup.ErrBusy) {
		t.Errorf("Create while the killed backup's lease is valid = %v, want ErrBusy", err)
	}
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// restoreAttempt runs a restore of path into dir and answers its outcome.
func restoreAttempt(t *testing.T, srv *svctest.Server, path, dir string) (*backup.RestoreResult, error) {
	t.Helper()
	cfg := *srv.Config()
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(dir, "svc.db")}}
	cfg.Storage.Filesystem.Root = filepath.Join(dir, "storage")
	other, err := svc.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := other.RestoreOptions(func(context.Context) (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	return backup.Restore(context.Background(), o)
}
