package svc

// The backup module's wiring (issue #47): what it needs of storage's backend, of cron, and of
// the other modules' migrations, adapted here so that backup imports no module.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/filesystem"
)

// backupObjects adapts a storage backend to backup.ObjectStore.
type backupObjects struct{ b backend.Backend }

var _ backup.ObjectStore = backupObjects{}

func (o backupObjects) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	rc, obj, err := o.b.Get(ctx, key, nil)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, 0, fmt.Errorf("%s: %w", key, backup.ErrObjectNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	return rc, obj.Size, nil
}

func (o backupObjects) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := o.b.Put(ctx, key, r, size, "application/octet-stream")
	return err
}

func (o backupObjects) Delete(ctx context.Context, key string) error { return o.b.Delete(ctx, key) }

// stageObjects is backup.Options.StageObjects for the filesystem provider: a filesystem backend
// rooted at the staging directory, laid out as the live root is. Nil for other providers.
func stageObjects(cfg config.Storage) func(root string) (backup.ObjectStore, error) {
	if cfg.Provider != config.StorageFilesystem {
		return nil
	}
	return func(root string) (backup.ObjectStore, error) {
		fs := filesystem.New(root, filesystem.Options{Sync: cfg.Filesystem.Sync})
		if err := fs.Start(context.Background()); err != nil {
			return nil, err
		}
		return backupObjects{b: fs}, nil
	}
}

// backupOptions wires the backup module: storage's backend, the filesystem staging store, and
// the migration versions of every module in the chain (read when a restore is verified, after
// the chain is complete).
func backupOptions(cfg *config.Config, st *storage.Service, r *Running) backup.Options {
	return backup.Options{
		Objects:      backupObjects{b: st.Backend()},
		StageObjects: stageObjects(cfg.Storage),
		Known: func() map[string]int {
			v, _ := db.LatestVersions(r.db.Kind, migrationSets(r.modules, true)...)
			return v
		},
	}
}

// cronWithBackup adds the job svc.backup to the host's cron options, with its default schedule:
// every day at 03:00 UTC, created paused (an operator resumes it on the Cron page), misfires
// skipped, never two at once.
func cronWithBackup(opts cron.Options, b *backup.Service) cron.Options {
	job := backupJob{JobHandler: cron.Job(backup.JobName, func(ctx context.Context, e cron.Execution) error {
		return b.RunJob(ctx, e.Params)
	})}
	off := false
	opts.Jobs = append(append([]cron.JobHandler(nil), opts.Jobs...), cron.WithDefaultSchedule(job, cron.Spec{
		Trigger: cron.Trigger{Kind: cron.KindCron, Expr: "0 3 * * *", Timezone: "UTC"},
		Params:  json.RawMessage(`{"keepLast":7,"keepDays":30}`), MisfirePolicy: cron.MisfireSkip,
		ConcurrencyPolicy: cron.ConcurrencyForbid, Enabled: &off,
	}))
	return opts
}

// backupJob is svc.backup with its params check and description for the Cron page.
type backupJob struct{ cron.JobHandler }

func (backupJob) CheckParams(params json.RawMessage) error {
	_, err := backup.ParseJobParams(params)
	return err
}

func (backupJob) DescribeParams() cron.ParamsDoc {
	return cron.ParamsDoc{Schema: backup.JobParamsSchema, Example: backup.JobParamsExample}
}

// KnownSchema answers the newest migration version of every built-in module this server's
// options include (host modules aside): what `svc restore` checks an archive against without
// opening the database.
func (s *Server) KnownSchema() (map[string]int, error) {
	sets := []db.Migrations{*event.Migrations(), *security.Migrations(), *storage.Migrations(), *cron.Migrations(),
		*backup.Migrations()}
	if s.opts.integration != nil {
		sets = append(sets, *integration.Migrations())
	}
	if s.opts.approval != nil {
		sets = append(sets, *approval.Migrations())
	}
	return db.LatestVersions(s.cfg.DataSources[config.PrimaryDataSource].Type, sets...)
}

// BackupService builds the server's modules on its data sources without starting them and
// calls fn with the backup module (`svc backup`): the backup tables are migrated first.
func (s *Server) BackupService(ctx context.Context, fn func(*backup.Service) error) error {
	data, err := openData(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer data.close(context.WithoutCancel(ctx))
	r, err := s.build(data)
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx, r.db, *backup.Migrations()); err != nil {
		return err
	}
	return fn(r.backup)
}

// RestoreOptions are backup.RestoreOptions for this server's configuration: the embedded
// database path, the filesystem root or the storage backend, the key and KnownSchema. open
// reads the archive.
func (s *Server) RestoreOptions(open func(ctx context.Context) (io.ReadCloser, error)) (backup.RestoreOptions, error) {
	known, err := s.KnownSchema()
	if err != nil {
		return backup.RestoreOptions{}, err
	}
	o := backup.RestoreOptions{Open: open, Known: known, Now: s.clock}
	if k := s.cfg.Backup.EncryptionKey; k != "" {
		if o.Key, err = config.DecodeBackupKey(k); err != nil {
			return o, err
		}
	}
	o.DatabasePath = db.EmbeddedPath(s.cfg.DataSources[config.PrimaryDataSource])
	if stage := stageObjects(s.cfg.Storage); stage != nil {
		o.StorageRoot, o.StageObjects = s.cfg.Storage.Filesystem.Root, stage
	} else if s.cfg.Storage.Provider == config.StorageObjStore {
		b, err := storage.NewBackend(s.cfg.Storage, s.clock)
		if err != nil {
			return o, err
		}
		// The bucket is created when missing (a restore onto a fresh configuration), and an
		// unreachable store fails here, before anything is replaced.
		if st, ok := b.(backend.Starter); ok {
			if err := st.Start(context.Background()); err != nil {
				return o, fmt.Errorf("restore: storage: %w", err)
			}
		}
		o.Objects = backupObjects{b: b}
	}
	return o, nil
}
