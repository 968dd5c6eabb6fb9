package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/filesystem"
	"github.com/svc-framework/svc/svctest"
)

// goT lets load goroutines use svctest's helpers: a fatal failure is reported and ends only the
// goroutine (runtime.Goexit runs its deferred calls), never the test goroutine's FailNow.
type goT struct{ testing.TB }

func (g goT) Fatal(args ...any)                 { g.Error(args...); runtime.Goexit() }
func (g goT) Fatalf(format string, args ...any) { g.Errorf(format, args...); runtime.Goexit() }
func (g goT) FailNow()                          { g.Fail(); runtime.Goexit() }

// newServer starts an embedded-default server: SQLite, filesystem storage and backups in a
// temporary directory.
func newServer(t *testing.T, mutate ...func(*config.Config)) (*svctest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	srv := svctest.New(t, svctest.WithCheapHashing(), svctest.WithConfig(func(c *config.Config) {
		c.Storage.Provider = config.StorageFilesystem
		c.Storage.Filesystem.Root = filepath.Join(dir, "storage")
		c.Backup.Dir = filepath.Join(dir, "backups")
		c.Security.LoginRateLimit = 1 << 20
		c.API.RateLimit.Max = 1 << 20
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		for _, m := range mutate {
			m(c)
		}
	}))
	return srv, dir
}

// uploadFile stores content through the /api upload lifecycle and answers its key.
func uploadFile(t testing.TB, srv *svctest.Server, p *rpc.Principal, content []byte) string {
	t.Helper()
	as := svctest.As(p)
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "f.bin", "size": len(content), "contentType": "application/octet-stream"}, as)
	if r.Code != 0 {
		t.Fatalf("init_upload: %d %s", r.Code, r.Message)
	}
	var plan storage.InitUploadResult
	r.DataAs(t, &plan)
	r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "f.bin", Content: bytes.NewReader(content)}}, as)
	if r.Code != 0 {
		t.Fatalf("upload_part: %d %s", r.Code, r.Message)
	}
	if r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, as); r.Code != 0 {
		t.Fatalf("complete_upload: %d %s", r.Code, r.Message)
	}
	return plan.Key
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// load runs logins and uploads on workers goroutines until stop is closed; it records the
// sha256 of every upload by key.
type load struct {
	ops    atomic.Int64
	hashes sync.Map
	wg     sync.WaitGroup
}

func startLoad(t *testing.T, srv *svctest.Server, users []string, stop <-chan struct{}) *load {
	l := &load{}
	for i, u := range users {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			gt := goT{t}
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			p := svctest.User("load-"+u, "admin")
			for {
				select {
				case <-stop:
					return
				default:
				}
				srv.Login(gt, u, "Correct-Horse-9")
				content := make([]byte, 1+rng.IntN(64<<10))
				for j := range content {
					content[j] = byte(rng.Uint32())
				}
				l.hashes.Store(uploadFile(gt, srv, p, content), sum(content))
				l.ops.Add(1)
			}
		}()
	}
	return l
}

// TestBackupUnderLoadRestores is the proof of issue #47: a backup taken while logins and
// uploads run restores into a fresh directory whose database passes SQLite's integrity check
// and whose every file row has its file with the uploaded bytes.
func TestBackupUnderLoadRestores(t *testing.T) {
	srv, _ := newServer(t)
	ctx := context.Background()
	var users []string
	for i := range 3 {
		name := fmt.Sprintf("loader%d", i)
		if _, err := srv.Security().Store().Create(ctx, name, name, "Correct-Horse-9", nil); err != nil {
			t.Fatal(err)
		}
		users = append(users, name)
	}
	seeded := map[string]string{}
	for i := range 10 {
		content := bytes.Repeat([]byte{byte(i)}, 1000*(i+1))
		seeded[uploadFile(t, srv, svctest.User("seed", "admin"), content)] = sum(content)
	}
	stop := make(chan struct{})
	l := startLoad(t, srv, users, stop)
	svctest.Eventually(t, 30*time.Second, func() bool { return l.ops.Load() >= 5 }, "load running")
	b, err := srv.Backup().Create(ctx, backup.Request{})
	during := l.ops.Load()
	svctest.Eventually(t, 30*time.Second, func() bool { return l.ops.Load() >= during+3 }, "load still running after the backup")
	close(stop)
	l.wg.Wait()
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if b.Status != backup.StatusSucceeded || b.FileCount < int64(len(seeded)) {
		t.Fatalf("backup = %s with %d files, want succeeded with at least %d", b.Status, b.FileCount, len(seeded))
	}

	fresh := t.TempDir()
	res := restoreInto(t, srv, b.Location, fresh)
	if res.Aside != "" {
		t.Errorf("Aside = %q, want none in a fresh directory", res.Aside)
	}
	d, err := db.OpenFile(ctx, "restored", filepath.Join(fresh, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity check: %v", err)
	}
	fs := filesystem.New(filepath.Join(fresh, "storage"), filesystem.Options{})
	if err := fs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := d.QueryContext(ctx, "SELECT object_key, size FROM sys_storage_file WHERE status <> 'deleted'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var key string
		var size int64
		if err := rows.Scan(&key, &size); err != nil {
			t.Fatal(err)
		}
		n++
		rc, _, err := fs.Get(ctx, key, nil)
		if err != nil {
			t.Errorf("file %s: %v", key, err)
			continue
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		want, ok := seeded[key]
		if !ok {
			v, _ := l.hashes.Load(key)
			want, _ = v.(string)
		}
		if int64(len(got)) != size || sum(got) != want {
			t.Errorf("file %s: %d bytes sha256 %s, want %d bytes sha256 %s", key, len(got), sum(got), size, want)
		}
	}
	if n != int(b.FileCount) {
		t.Errorf("restored file rows = %d, archive files = %d", n, b.FileCount)
	}
	if total := len(seeded) + int(l.ops.Load()); n >= total {
		t.Errorf("restored %d files of %d uploaded: uploads after the snapshot point must not be in it", n, total)
	}
	var logins int
	if err := d.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys_backup").Scan(&logins); err != nil || logins == 0 {
		t.Errorf("restored sys_backup rows = %d, %v; want the backup's own row", logins, err)
	}
}

// restoreInto restores the archive at path into dir as `svc restore` would for a configuration
// whose database and storage root live there.
func restoreInto(t *testing.T, srv *svctest.Server, path, dir string) *backup.RestoreResult {
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
	res, err := backup.Restore(context.Background(), o)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return res
}

// TestRestoreRefusesTamperedArchiveAndRunningServer: a byte changed in an archive is refused
// without touching the target's data, and so is a restore onto the database of a running server.
func TestRestoreRefusesTamperedArchiveAndRunningServer(t *testing.T) {
	srv, _ := newServer(t)
	ctx := context.Background()
	uploadFile(t, srv, svctest.User("u1", "admin"), bytes.Repeat([]byte("x"), 5000))
	b, err := srv.Backup().Create(ctx, backup.Request{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(b.Location)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/3] ^= 1
	tampered := filepath.Join(t.TempDir(), "tampered.tar")
	if err := os.WriteFile(tampered, data, 0o600); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "svc.db"), []byte("current data"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := *srv.Config()
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(target, "svc.db")}}
	cfg.Storage.Filesystem.Root = filepath.Join(target, "storage")
	other, err := svc.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := other.RestoreOptions(func(context.Context) (io.ReadCloser, error) { return os.Open(tampered) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx, o); !errors.Is(err, backup.ErrArchiveCorrupt) && !errors.Is(err, backup.ErrArchivePartial) {
		t.Errorf("Restore(tampered) = %v, want a corrupt-archive refusal", err)
	}
	if got, _ := os.ReadFile(filepath.Join(target, "svc.db")); string(got) != "current data" {
		t.Errorf("target database = %q after a refused restore, want it untouched", got)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 2 { // svc.db and its lock file
		t.Errorf("target holds %d entries after a refused restore, want svc.db and svc.db.lock", len(entries))
	}

	// The running server holds its database's lock: a restore onto it is refused.
	live := *srv.Config()
	running, err := svc.New(&live)
	if err != nil {
		t.Fatal(err)
	}
	o, err = running.RestoreOptions(func(context.Context) (io.ReadCloser, error) { return os.Open(b.Location) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx, o); !errors.Is(err, backup.ErrServerRunning) {
		t.Errorf("Restore onto a running server = %v, want ErrServerRunning", err)
	}

	// The /api restore verifies and answers the steps; the tampered bytes on disk are refused.
	r := srv.Call(t, "sys/backup", "restore", map[string]any{"id": b.ID}, svctest.As(svctest.User("op", "admin")))
	if r.Code != 0 {
		t.Fatalf("restore of the intact archive: %d %s", r.Code, r.Message)
	}
	if err := os.WriteFile(b.Location, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r = srv.Call(t, "sys/backup", "restore", map[string]any{"id": b.ID}, svctest.As(svctest.User("op", "admin")))
	if r.Code != backup.ErrCodeArchiveInvalid {
		t.Errorf("restore of the tampered archive: code %d %s, want %d", r.Code, r.Message, backup.ErrCodeArchiveInvalid)
	}
}

func mustGet(t *testing.T, srv *svctest.Server, id string) *backup.Backup {
	t.Helper()
	b, err := srv.Backup().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRequest(t *testing.T, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
