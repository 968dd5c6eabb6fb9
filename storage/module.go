package storage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/filesystem"
	"github.com/svc-framework/svc/storage/memory"
	"github.com/svc-framework/svc/storage/objstore"
)

//go:embed migrations
var migrationFiles embed.FS

// Migrations returns the module's migrations: migrations/{postgres,mysql,sqlite}/NNN_name.sql.
func Migrations() *db.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return &db.Migrations{Module: "storage", FS: sub}
}

// Options are what the composition root and host code plug into the module. Every field is
// optional.
type Options struct {
	// Backend replaces the backend chosen by svc.storage.provider.
	Backend backend.Backend
	// ACL decides who reads private files; nil uses DefaultACL with ReadPermission and
	// Permissions.
	ACL FileACL
	// ReadPermission is the default ACL's "read every file" token (default ReadPermission).
	ReadPermission string
	// Permissions checks ReadPermission for the default ACL (pass the rpc engine); nil lets only
	// uploaders and the system read private files.
	Permissions PermissionChecker
	// Events receives the storage events; nil drops them.
	Events Publisher
	// Auth authenticates private downloads (pass the rpc engine); nil treats every download as
	// unauthenticated, so only pub/ keys and what the ACL grants to nobody are served.
	Auth Authenticator
	// Errors renders proxy errors (pass the rpc engine); nil uses a built-in envelope writer
	// with the module's message catalog.
	Errors ErrorWriter
}

// Build builds the storage module and its Service from the server's dependencies. It does no
// I/O: the backend's bucket or directory is created in Start.
func Build(deps app.Deps, opts Options) (app.Module, *Service, error) {
	if deps.Config == nil || deps.DB == nil {
		return app.Module{}, nil, errors.New("storage: the configuration and the primary database are required")
	}
	cfg := effective(deps.Config.Storage)
	be := opts.Backend
	if be == nil {
		var err error
		if be, err = NewBackend(cfg, deps.Clock); err != nil {
			return app.Module{}, nil, err
		}
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	errs := opts.Errors
	if errs == nil {
		errs = envelopeWriter{msgs: deps.I18n, log: log}
	}
	s := newService(serviceDeps{cfg: cfg, db: deps.DB, backend: be, clock: deps.Clock, log: log, opts: opts, errs: errs})
	proxy := http.HandlerFunc(s.ServeFile)
	mod := app.Module{
		Name:      "storage",
		Resources: []rpc.Resource{s.Resource(), s.FileResource()},
		Routes: []app.Route{
			{Pattern: ProxyGetPattern, Handler: proxy},
			{Pattern: ProxyHeadPattern, Handler: proxy},
		},
		Migrations:  Migrations(),
		AutoMigrate: cfg.AutoMigrate,
		Workers: []app.Worker{
			{Name: "sweeper", Interval: cfg.SweepInterval, Run: s.Sweep},
			{Name: "delete", Interval: cfg.DeleteWorkerInterval, Run: s.ProcessDeletes},
		},
		Start: s.start,
		Stop:  s.stop,
		Ready: s.ready,
	}
	return mod, s, nil
}

// NewBackend builds the backend of svc.storage.provider without I/O: memory (also when the
// provider is empty), filesystem at filesystem.root, or objstore at objstore.*.
func NewBackend(cfg config.Storage, clock func() time.Time) (backend.Backend, error) {
	switch cfg.Provider {
	case "", config.StorageMemory:
		return memory.New(clock), nil
	case config.StorageFilesystem:
		return filesystem.New(cfg.Filesystem.Root, filesystem.Options{Sync: cfg.Filesystem.Sync}), nil
	case config.StorageObjStore:
		return objstore.New(objstore.Config{
			Endpoint: cfg.ObjStore.Endpoint, AccessKey: cfg.ObjStore.AccessKey, SecretKey: cfg.ObjStore.SecretKey,
			Bucket: cfg.ObjStore.Bucket, Region: cfg.ObjStore.Region, UseSSL: cfg.ObjStore.UseSSL,
		})
	}
	return nil, fmt.Errorf("storage: svc.storage.provider %q: %w", cfg.Provider, config.ErrInvalidStorageProvider)
}

// start prepares the backend (bucket, root directory) and warns about the memory provider.
func (s *Service) start(ctx context.Context) error {
	if s.info.Name == "memory" {
		s.log.WarnContext(ctx, "storage provider is memory: uploaded objects are lost when the process ends; set svc.storage.provider to filesystem or objstore")
	}
	if st, ok := s.backend.(backend.Starter); ok {
		if err := st.Start(ctx); err != nil {
			return fmt.Errorf("storage: start %s backend: %w", s.info.Name, err)
		}
	}
	return nil
}

// stop releases the filesystem root handle, if any.
func (s *Service) stop(context.Context) error {
	if c, ok := s.backend.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// ready reports whether the backend answers (GET /readyz): a Stat of a key that never exists.
func (s *Service) ready(ctx context.Context) error {
	if _, err := s.backend.Stat(ctx, "priv/.svc-readyz"); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}
