package storage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/storage/filesystem"
	"github.com/svc-framework/svc/storage/memory"
	"github.com/svc-framework/svc/storage/objstore"
)

// TestBuild checks the module value and that New does no I/O.
func TestBuild(t *testing.T) {
	cfg := config.Default()
	root := filepath.Join(t.TempDir(), "files")
	cfg.Storage.Provider = config.StorageFilesystem
	cfg.Storage.Filesystem.Root = root
	cfg.Storage.AutoMigrate = true
	var logs bytes.Buffer
	deps := app.Platform{Config: cfg, DB: testservice.OpenDB(t, testservice.DataSource(t, config.SQLite)), Clock: time.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	svc, err := New(deps, app.API{}, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mod := svc.Module()
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("New created the root directory (it must do no I/O): %v", err)
	}
	var names []string
	for _, r := range mod.Resources {
		for _, op := range r.Ops {
			names = append(names, r.Name+"."+op.Action)
		}
	}
	want := "sys/storage.init_upload sys/storage.upload_part sys/storage.list_parts sys/storage.complete_upload sys/storage.abort_upload sys/storage/file.resolve sys/storage/file.find_page sys/storage/file.delete"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("operations = %s, want %s", got, want)
	}
	if len(mod.Routes) != 2 || mod.Routes[0].Pattern != "GET /storage/files/{key...}" || mod.Routes[1].Pattern != "HEAD /storage/files/{key...}" {
		t.Errorf("routes = %+v", mod.Routes)
	}
	if mod.Name != "storage" || !mod.AutoMigrate || mod.Migrations == nil || mod.Migrations.Module != "storage" {
		t.Errorf("module = %+v", mod)
	}
	if len(mod.Workers) != 2 || mod.Workers[0].Interval != 5*time.Minute || mod.Workers[1].Interval != 5*time.Minute {
		t.Errorf("workers = %+v, want sweeper and delete every 5m", mod.Workers)
	}
	if pending, err := db.Pending(context.Background(), deps.DB, *mod.Migrations); err != nil || len(pending) != 1 {
		t.Errorf("pending migrations = %v, %v; want 001_init", pending, err)
	}
	if err := mod.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Errorf("Start did not create the root: %v", err)
	}
	if err := mod.Ready(context.Background()); err != nil {
		t.Errorf("Ready: %v", err)
	}
	if err := mod.Stop(context.Background()); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if svc.Backend().Info().Name != "filesystem" {
		t.Errorf("backend = %s, want filesystem", svc.Backend().Info().Name)
	}
	if strings.Contains(logs.String(), "memory") {
		t.Errorf("memory warning logged for the filesystem provider: %s", logs.String())
	}
}

// TestMemoryWarning checks the startup warning of the default provider.
func TestMemoryWarning(t *testing.T) {
	cfg := config.Default()
	var logs bytes.Buffer
	deps := app.Platform{Config: cfg, DB: testservice.OpenDB(t, testservice.DataSource(t, config.SQLite)),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	svc, err := New(deps, app.API{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod := svc.Module()
	if err := mod.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "lost") {
		t.Errorf("no warning about the memory provider: %q", logs.String())
	}
}

// TestNewBackend checks the provider switch and the objstore bucket default chain.
func TestNewBackend(t *testing.T) {
	cfg := config.Default().Storage
	for p, want := range map[config.StorageProvider]string{"": "memory", config.StorageMemory: "memory", config.StorageFilesystem: "filesystem"} {
		cfg.Provider = p
		b, err := NewBackend(cfg, nil)
		if err != nil || b.Info().Name != want {
			t.Errorf("NewBackend(%q) = %v, %v; want %s", p, b, err, want)
		}
	}
	cfg.Provider = config.StorageObjStore
	cfg.ObjStore.Endpoint = "127.0.0.1:1"
	b, err := NewBackend(cfg, nil)
	if err != nil || b.Info().Bucket != "svc-app" || b.Info().PartSize != objstore.PartSize {
		t.Errorf("objstore backend = %+v, %v; want bucket svc-app", b, err)
	}
	cfg.Provider = "ftp"
	if _, err := NewBackend(cfg, nil); !errors.Is(err, config.ErrInvalidStorageProvider) {
		t.Errorf("unknown provider error = %v", err)
	}
	if (memory.New(nil)).Info().PartSize != 64<<10 || filesystem.New("x", filesystem.Options{}).Info().PartSize != 4<<20 {
		t.Errorf("part sizes differ from wire-core §7.1")
	}
}
