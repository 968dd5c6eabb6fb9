package storage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/filesystem"
	"github.com/svc-framework/svc/storage/memory"
	"github.com/svc-framework/svc/storage/objstore"
)

//go:embed migrations
var migrationFiles embed.FS

//go:embed messages
var messageFiles embed.FS

// Migrations returns the module's migrations: migrations/{postgres,mysql,sqlite}/NNN_name.sql.
func Migrations() *db.Migrations {
	return db.EmbeddedMigrations("storage", migrationFiles)
}

// Messages returns the module's message catalog: messages/<lang>/storage.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// Options are what host code plugs into the module. Every field is optional. The download
// proxy's authenticator, error renderer and permission checker come from app.API (the rpc
// engine).
type Options struct {
	// Backend replaces the backend chosen by svc.storage.provider.
	Backend backend.Backend
	// ACL decides who reads private files; nil uses DefaultACL with ReadPermission and the
	// engine's permission check (app.API.Permissions).
	ACL FileACL
	// ReadPermission is the default ACL's "read every file" token (default ReadPermission).
	ReadPermission string
	// Events receives the storage events; nil publishes them on the server's event bus
	// (app.Platform.Events, BusPublisher), or drops them when there is none.
	Events Publisher
}

// New builds the storage Service from the server's dependencies: the configuration (defaults
// already applied by config), the primary database, the backend of svc.storage.provider unless
// opts.Backend replaces it, and from the engine (api.Auth, api.Errors, api.Permissions) the
// download proxy's authentication, error envelope and default ACL check. A nil api.Auth treats
// every download as unauthenticated; a nil api.Errors renders with the module's own envelope
// writer. It does no I/O: the backend's bucket or directory is created in Start.
func New(deps app.Platform, api app.API, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil {
		return nil, errors.New("storage: the configuration and the primary database are required")
	}
	be := opts.Backend
	if be == nil {
		var err error
		if be, err = NewBackend(deps.Config.Storage, deps.Clock); err != nil {
			return nil, err
		}
	}
	if opts.Events == nil && deps.Events != nil {
		// wire-core §7.8: storage events commit with the change that makes them true, so the
		// bus must route them to a transactional transport; a wrong routing fails startup.
		if err := deps.Events.RequireTransactional(EventPattern); err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		opts.Events = BusPublisher(deps.Events)
	}
	d := serviceDeps{cfg: deps.Config.Storage, db: deps.DB, backend: be, clock: deps.Clock, log: deps.Logger, opts: opts}
	if api.Auth != nil {
		d.auth = api.Auth
	}
	if api.Permissions != nil {
		d.perms = api.Permissions
	}
	if api.Errors != nil {
		d.errs = api.Errors
	} else {
		d.errs = envelopeWriter{msgs: deps.I18n, log: deps.Logger}
	}
	s := newService(d)
	if err := registerMetrics(deps.Metrics, deps.Events, s); err != nil {
		return nil, fmt.Errorf("storage: metrics: %w", err)
	}
	return s, nil
}

// Module lists what the module adds to the server: sys/storage and sys/storage/file, the
// download proxy routes, the migrations, the sweeper and delete workers and the backend's start
// and readiness checks.
func (s *Service) Module() app.Module {
	proxy := http.HandlerFunc(s.ServeFile)
	return app.Module{
		Name:      "storage",
		Resources: []rpc.Resource{s.Resource(), s.FileResource()},
		Routes: []app.Route{
			{Pattern: ProxyGetPattern, Handler: proxy},
			{Pattern: ProxyHeadPattern, Handler: proxy},
		},
		Messages:    Messages(),
		Migrations:  Migrations(),
		AutoMigrate: s.cfg.AutoMigrate,
		Workers: []app.Worker{
			{Name: "sweeper", Interval: s.cfg.SweepInterval, Run: s.Sweep},
			{Name: "delete", Interval: s.cfg.DeleteWorkerInterval, Run: s.ProcessDeletes},
		},
		Start: s.start,
		Stop:  s.stop,
		Ready: s.ready,
	}
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
