package backup

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

//go:embed migrations
var migrationFiles embed.FS

//go:embed messages
var messageFiles embed.FS

// Migrations returns the module's migrations: sys_backup and sys_backup_lease.
func Migrations() *db.Migrations { return db.EmbeddedMigrations("backup", migrationFiles) }

// Messages returns the module's message catalog: messages/<lang>/backup.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// Lease timing: a backup holds the cluster-wide lease for leaseTTL and renews it every
// leaseRenew, so a node that died frees it within leaseTTL.
const (
	leaseTTL   = 2 * time.Minute
	leaseRenew = 30 * time.Second
)

// ObjectStore is what the module needs of the storage backend (the composition root adapts
// storage's backend.Backend): read the objects a snapshot references, and hold archives when
// svc.backup.destination is "storage".
type ObjectStore interface {
	// Open reads the object of key and its size; a missing object answers ErrObjectNotFound.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Put stores r (size bytes, or -1 when unknown) under key, atomically.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Delete removes the object of key; a missing object is not an error.
	Delete(ctx context.Context, key string) error
}

// Options wire the module to the rest of the server.
type Options struct {
	// Objects is the storage backend; nil archives no files (and the storage destination fails).
	Objects ObjectStore
	// StageObjects opens an object store rooted at a directory, for a restore that stages the
	// filesystem provider's objects before swapping them in; nil when storage is not on the
	// filesystem (objects are then written to Objects after verification).
	StageObjects func(root string) (ObjectStore, error)
	// Known answers the newest migration version of every module this binary has; a restore
	// refuses an archive whose schema is newer. Called when a restore runs.
	Known func() map[string]int
	// NodeID names this process in the lease and the rows (default: host name and pid).
	NodeID string
}

// Service is the backup module.
type Service struct {
	cfg    config.Backup
	full   *config.Config
	db     *db.DB
	log    *slog.Logger
	clock  func() time.Time
	opts   Options
	key    []byte
	perms  app.PermissionChecker
	errs   app.ErrorRenderer
	auth   app.Authenticator
	wg     sync.WaitGroup
	stop   context.CancelFunc
	runCtx context.Context
	lock   *dirLock
}

// New builds the module from the platform and, for its download route, the engine's API part
// (no I/O).
func New(deps app.Platform, api app.API, opts Options) (*Service, error) {
	var key []byte
	if k := deps.Config.Backup.EncryptionKey; k != "" {
		var err error
		if key, err = config.DecodeBackupKey(k); err != nil {
			return nil, fmt.Errorf("svc.backup.encryption_key: %w", err)
		}
	}
	if opts.NodeID == "" {
		host, _ := os.Hostname()
		opts.NodeID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: deps.Config.Backup, full: deps.Config, db: deps.DB, log: deps.Logger, clock: deps.Clock, opts: opts,
		key: key, perms: api.Permissions, errs: api.Errors, auth: api.Auth, runCtx: ctx, stop: cancel}, nil
}

// Module lists what the module adds to the server.
func (s *Service) Module() app.Module {
	return app.Module{
		Name:        "backup",
		Resources:   []rpc.Resource{s.Resource()},
		Routes:      []app.Route{{Pattern: DownloadPattern, Handler: http.HandlerFunc(s.serveDownload)}},
		Messages:    Messages(),
		Migrations:  Migrations(),
		AutoMigrate: true,
		Start:       s.start,
		Stop:        s.shutdown,
	}
}

// start takes the data directory's lock file (so `svc restore` can tell a server is running).
func (s *Service) start(ctx context.Context) error {
	if !s.db.Embedded() {
		return nil
	}
	l, err := lockDir(s.db.Path)
	if err != nil {
		// Another process holds it (a second server on the same file): restore is refused all
		// the same, which is what the lock is for.
		s.log.DebugContext(ctx, "backup: data directory lock not taken", "err", err)
		return nil
	}
	s.lock = l
	return nil
}

// shutdown cancels running backups, waits for them and releases the lock file.
func (s *Service) shutdown(ctx context.Context) error {
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if s.lock != nil {
		s.lock.release()
	}
	return nil
}

// Progress reports bytes archived of the expected total (both grow as objects are opened).
type Progress func(done, total int64)

// Request describes one backup.
type Request struct {
	// Destination overrides svc.backup.destination ("folder" or "storage").
	Destination string
	// Dir overrides svc.backup.dir for the folder destination.
	Dir string
	// Trigger and CreatedBy are recorded on the row.
	Trigger   string
	CreatedBy string
	// Progress, when set, is called as bytes are written.
	Progress Progress
}

// Create takes a backup now and waits for it: one consistent point in time of the embedded
// database (an online snapshot) and the objects its rows reference, or of the objects only on
// a server database. Another backup running anywhere answers ErrBusy.
func (s *Service) Create(ctx context.Context, req Request) (*Backup, error) {
	b, dst, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	return b, s.run(ctx, b, dst, req.Progress)
}

// Start takes a backup in the background and answers its running row at once; the backup
// stops when the server stops. Another backup running anywhere answers ErrBusy.
func (s *Service) Start(ctx context.Context, req Request) (*Backup, error) {
	b, dst, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	row := *b
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		lowerPriority() // this goroutine's thread is discarded when it ends
		if err := s.run(s.runCtx, b, dst, nil); err != nil {
			s.log.Error("backup failed", "id", b.ID, "err", err)
		}
	}()
	return &row, nil
}

// begin takes the lease and records the running row.
func (s *Service) begin(ctx context.Context, req Request) (*Backup, destination, error) {
	dst, err := s.destination(req)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock().UTC()
	id := rpc.NewID()
	st := store{db: s.db}
	ok, err := st.acquire(ctx, id, now.UnixMilli(), now.Add(leaseTTL).UnixMilli())
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, ErrBusy
	}
	name := "svc-backup-" + now.Format("20060102T150405Z") + "-" + id[len(id)-8:] + ".tar"
	if s.key != nil {
		name += ".enc"
	}
	b := &Backup{ID: id, Name: name, Destination: dst.kind(), Location: dst.location(name), Status: StatusRunning,
		Encrypted: s.key != nil, DBIncluded: s.db.Embedded(), Trigger: orDefault(req.Trigger, TriggerManual),
		CreatedBy: orDefault(req.CreatedBy, "system"), NodeID: s.opts.NodeID, StartedAtUnixMs: now.UnixMilli()}
	if dst.kind() == config.BackupToFolder || s.db.Embedded() {
		s.removeLeftovers(ctx)
	}
	err = st.failRunningExcept(ctx, id, now.UnixMilli())
	if err == nil {
		err = st.insert(ctx, b)
	}
	if err != nil {
		_ = st.release(context.WithoutCancel(ctx), id)
		return nil, nil, fmt.Errorf("backup: record: %w", err)
	}
	return b, dst, nil
}

// run writes the archive of b and records the outcome; it releases the lease.
func (s *Service) run(ctx context.Context, b *Backup, dst destination, progress Progress) (err error) {
	st := store{db: s.db}
	stopRenew := s.renew(ctx, b.ID)
	defer func() {
		stopRenew()
		bg := context.WithoutCancel(ctx)
		b.FinishedAtUnixMs = s.clock().UnixMilli()
		if err != nil {
			b.Status, b.Error = StatusFailed, clip(err.Error())
		} else {
			b.Status = StatusSucceeded
		}
		if ferr := st.finish(bg, b); ferr != nil && err == nil {
			err = ferr
		}
		_ = st.release(bg, b.ID)
	}()
	w, err := dst.create(ctx, b.Name)
	if err != nil {
		return err
	}
	var ph Phases
	m, size, err := s.write(ctx, b, w, progress, &ph)
	if err != nil {
		w.abort()
		return err
	}
	t := time.Now()
	if err := w.commit(); err != nil {
		return err
	}
	ph.Sync = time.Since(t)
	b.Size, b.FileCount = size, int64(len(m.Entries))
	if m.DatabaseIncluded {
		b.FileCount--
	}
	s.log.InfoContext(ctx, "backup succeeded", append([]any{"id", b.ID, "bytes", size}, ph.logAttrs()...)...)
	return nil
}

// renew extends the lease every leaseRenew until the returned stop is called.
func (s *Service) renew(ctx context.Context, holder string) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(leaseRenew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				now := s.clock()
				if _, err := (store{db: s.db}).acquire(ctx, holder, now.UnixMilli(), now.Add(leaseTTL).UnixMilli()); err != nil {
					s.log.WarnContext(ctx, "backup: lease renewal failed", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Get answers the backup of id (rpc.ErrRecordNotFound when unknown).
func (s *Service) Get(ctx context.Context, id string) (*Backup, error) {
	return store{db: s.db}.get(ctx, id)
}

// Delete removes the archive of id and its row; a running backup answers ErrBackupNotFinished.
func (s *Service) Delete(ctx context.Context, id string) error {
	b, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if b.Status == StatusRunning {
		return ErrBackupNotFinished
	}
	if b.Status == StatusSucceeded {
		dst, err := s.destination(Request{Destination: b.Destination})
		if err != nil {
			return err
		}
		if err := dst.remove(ctx, b.Location); err != nil {
			return fmt.Errorf("backup: delete %s: %w", b.Name, err)
		}
	}
	return store{db: s.db}.delete(ctx, id)
}

// Open reads the archive of a succeeded backup.
func (s *Service) Open(ctx context.Context, b *Backup) (io.ReadCloser, int64, error) {
	if b.Status != StatusSucceeded {
		return nil, 0, ErrBackupNotFinished
	}
	dst, err := s.destination(Request{Destination: b.Destination})
	if err != nil {
		return nil, 0, err
	}
	return dst.open(ctx, b.Location)
}

// Prune applies retention to succeeded backups, newest first: one is removed when it is beyond
// the newest keepLast (keepLast > 0) or older than keepDays days (keepDays > 0). The newest
// succeeded backup is always kept. It answers how many were removed.
func (s *Service) Prune(ctx context.Context, keepLast, keepDays int) (int, error) {
	rows, err := store{db: s.db}.succeeded(ctx)
	if err != nil {
		return 0, err
	}
	cutoff := s.clock().Add(-time.Duration(keepDays) * 24 * time.Hour).UnixMilli()
	removed := 0
	for i, b := range rows {
		if i == 0 {
			continue
		}
		if (keepLast > 0 && i >= keepLast) || (keepDays > 0 && b.StartedAtUnixMs < cutoff) {
			if err := s.Delete(ctx, b.ID); err != nil {
				return removed, err
			}
			removed++
		}
	}
	return removed, nil
}

// Config answers the module's configuration (svc.backup).
func (s *Service) Config() config.Backup { return s.cfg }

// DatabaseAdvice is what an operator of a server database is told: its own tools own
// backups, with the commands; empty on the embedded database.
func (s *Service) DatabaseAdvice() string {
	if s.db.Embedded() {
		return ""
	}
	ds := s.full.DataSources[config.PrimaryDataSource]
	return fmt.Sprintf("The primary database is %s: its own tools own its backups, svc archives the uploaded files only.\n"+
		"  back up:  %s\n  restore:  %s", s.db.SystemName(), db.DumpCommand(ds), db.RestoreCommand(ds))
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// clip bounds an error kept on a row.
func clip(s string) string {
	if len(s) > 2000 {
		s = strings.ToValidUTF8(s[:2000], "")
	}
	return s
}

// stagingDir is where a backup stages its snapshot: beside the folder destination.
func (s *Service) stagingDir(id string) string {
	return filepath.Join(s.cfg.Dir, ".staging-"+id)
}

var errNoObjects = errors.New("backup: the storage destination needs the storage module")

// removeLeftovers deletes what a backup killed midway left in svc.backup.dir (its staging
// directory and its .partial archive). Only the lease holder calls it, so none is in use.
func (s *Service) removeLeftovers(ctx context.Context) {
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".staging-") || (strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".partial")) {
			if err := os.RemoveAll(filepath.Join(s.cfg.Dir, n)); err != nil {
				s.log.WarnContext(ctx, "backup: leftover not removed", "path", n, "err", err)
			}
		}
	}
}
