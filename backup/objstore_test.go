package backup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/svctest"
)

// TestBackupToObjectStore runs the storage destination on the real S3 server: with storage on
// objstore and svc.backup.destination = "storage", an encrypted archive of the embedded database
// and the bucket's files is written into the bucket under the prefix, downloads whole through
// /api and verifies with the key; a restore into a fresh directory and a fresh bucket writes
// every file back byte-equal; delete removes the archive's object.
func TestBackupToObjectStore(t *testing.T) {
	live, target := svctest.S3(t), svctest.S3(t)
	t.Cleanup(func() { svctest.RemoveBucket(t, live); svctest.RemoveBucket(t, target) })
	const hexKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	srv, _ := newServer(t, func(c *config.Config) {
		c.Storage.Provider = config.StorageObjStore
		c.Storage.ObjStore = live.ObjStore()
		c.Backup.Destination = config.BackupToStorage
		c.Backup.EncryptionKey = hexKey
	})
	ctx := context.Background()
	admin := svctest.User("op", "admin")
	files := map[string][]byte{}
	for i, size := range []int{1, 70_000} {
		content := bytes.Repeat([]byte{byte('a' + i)}, size)
		files[uploadFile(t, srv, admin, content)] = content
	}

	b, err := srv.Backup().Create(ctx, backup.Request{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if b.Status != backup.StatusSucceeded || b.Destination != config.BackupToStorage || !b.Encrypted || !b.DBIncluded || b.FileCount != 2 {
		t.Fatalf("backup = %+v, want a succeeded, encrypted storage archive with the database and 2 files", b)
	}
	if want := "backups/" + b.Name; b.Location != want {
		t.Errorf("location = %q, want %q", b.Location, want)
	}
	liveObjects := objects(t, live)
	if _, err := read(ctx, liveObjects, b.Location); err != nil {
		t.Fatalf("the archive's object in the bucket: %v", err)
	}

	var dl backup.Download
	srv.Call(t, "sys/backup", "download", map[string]any{"id": b.ID}, svctest.As(admin)).DataAs(t, &dl)
	resp, archive := srv.Do(t, mustRequest(t, dl.URL))
	if resp.StatusCode != 200 || int64(len(archive)) != b.Size {
		t.Fatalf("download: status %d, %d bytes, want 200 and %d", resp.StatusCode, len(archive), b.Size)
	}
	key, _ := config.DecodeBackupKey(hexKey)
	if _, err := backup.Verify(bytes.NewReader(archive), nil, nil); err == nil {
		t.Error("an encrypted archive verified without its key")
	}
	m, err := backup.Verify(bytes.NewReader(archive), key, nil)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	listed := 0
	for _, e := range m.Entries {
		if _, ok := files[e.Key]; ok {
			listed++
		}
	}
	if listed != len(files) {
		t.Errorf("the manifest lists %d of the %d files", listed, len(files))
	}

	// Restore into a fresh directory whose storage is another bucket: every file arrives there.
	cfg := *srv.Config()
	dir := t.TempDir()
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(dir, "svc.db")}}
	cfg.Storage.ObjStore = target.ObjStore()
	other, err := svc.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := other.RestoreOptions(func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(archive)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := backup.Restore(ctx, o)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if res.Objects != len(files) {
		t.Errorf("restored %d objects, want %d", res.Objects, len(files))
	}
	targetObjects := objects(t, target)
	for k, want := range files {
		got, err := read(ctx, targetObjects, k)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("restored %s: %d bytes, %v; want %d equal bytes", k, len(got), err, len(want))
		}
	}

	if r := srv.Call(t, "sys/backup", "delete", map[string]any{"id": b.ID}, svctest.As(admin)); r.Code != 0 {
		t.Fatalf("delete: %d %s", r.Code, r.Message)
	}
	if _, err := read(ctx, liveObjects, b.Location); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("the archive's object after delete: %v, want not found", err)
	}
}

// objects opens the test bucket of s3 as the storage module does.
func objects(t *testing.T, s3 svctest.S3Config) backend.Backend {
	t.Helper()
	b, err := storage.NewBackend(config.Storage{Provider: config.StorageObjStore, ObjStore: s3.ObjStore()}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read answers the whole object of key.
func read(ctx context.Context, b backend.Backend, key string) ([]byte, error) {
	rc, _, err := b.Get(ctx, strings.TrimPrefix(key, "/"), nil)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
