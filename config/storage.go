package config

import (
	"fmt"
	"time"
)

// StorageProvider is the upload backend.
type StorageProvider string

// Storage providers of svc.storage.provider.
const (
	// StorageMemory keeps objects in process memory: lost on restart (default, with a warning).
	StorageMemory StorageProvider = "memory"
	// StorageFilesystem keeps objects under filesystem.root.
	StorageFilesystem StorageProvider = "filesystem"
	// StorageObjStore keeps objects in an S3-compatible object store.
	StorageObjStore StorageProvider = "objstore"
)

// Defaults of svc.storage.
const (
	defaultStorageRoot          = "./storage"
	defaultMaxUploadSize        = GiB
	defaultClaimTTL             = 24 * time.Hour
	defaultMaxPendingClaims     = 100
	defaultSweepInterval        = 5 * time.Minute
	defaultSweepBatchSize       = 200
	defaultDeleteWorkerInterval = 5 * time.Minute
	defaultDeleteBatchSize      = 100
	defaultDeleteConcurrency    = 8
	defaultDeleteMaxAttempts    = 12
	defaultDeleteLeaseWindow    = 5 * time.Minute
)

// Storage is the svc.storage section (spec §8.2, §8.3). Non-positive tunables fall back to their
// defaults.
type Storage struct {
	// Provider is svc.storage.provider: memory (default; objects lost on restart), filesystem or
	// objstore.
	Provider StorageProvider `toml:"provider"`
	// AutoMigrate is svc.storage.auto_migrate (default false): run the idempotent storage
	// migration (sys_storage_upload_claim, sys_storage_upload_part, sys_storage_pending_delete,
	// sys_storage_file) at startup.
	AutoMigrate bool `toml:"auto_migrate"`
	// ObjStore is svc.storage.objstore: settings of the objstore provider.
	ObjStore ObjStore `toml:"objstore"`
	// Filesystem is svc.storage.filesystem: settings of the filesystem provider.
	Filesystem Filesystem `toml:"filesystem"`
	// MaxUploadSize is svc.storage.max_upload_size (default 1 GiB): the largest object init_upload
	// accepts.
	MaxUploadSize Size `toml:"max_upload_size"`
	// ClaimTTL is svc.storage.claim_ttl (default 24h): the lifetime of an upload claim.
	ClaimTTL time.Duration `toml:"claim_ttl"`
	// MaxPendingClaims is svc.storage.max_pending_claims (default 100): pending claims per
	// principal.
	MaxPendingClaims int `toml:"max_pending_claims"`
	// AllowPublicUploads is svc.storage.allow_public_uploads (default false): whether
	// init_upload may place objects under pub/.
	AllowPublicUploads bool `toml:"allow_public_uploads"`
	// UploadPartRateLimit is svc.storage.upload_part_rate_limit (default 0; our addition): the
	// most upload_part calls per svc.api.rate_limit.period. 0, also for negative values, lets
	// upload_part inherit the engine default like every other storage action (spec §4.1, §8.1);
	// a large upload needs more (1 GiB is 256 parts on the filesystem provider).
	UploadPartRateLimit int `toml:"upload_part_rate_limit"`
	// SweepInterval is svc.storage.sweep_interval (default 5m): how often expired claims are swept.
	SweepInterval time.Duration `toml:"sweep_interval"`
	// SweepBatchSize is svc.storage.sweep_batch_size (default 200): claims per sweep.
	SweepBatchSize int `toml:"sweep_batch_size"`
	// OrphanRetention is svc.storage.orphan_retention (deliberately no default: 0, also for
	// negative values, disables reclamation of finalized uploads never adopted).
	OrphanRetention time.Duration `toml:"orphan_retention"`
	// DeleteWorkerInterval is svc.storage.delete_worker_interval (default 5m).
	DeleteWorkerInterval time.Duration `toml:"delete_worker_interval"`
	// DeleteBatchSize is svc.storage.delete_batch_size (default 100): queue rows per run.
	DeleteBatchSize int `toml:"delete_batch_size"`
	// DeleteConcurrency is svc.storage.delete_concurrency (default 8): parallel deletes per run.
	DeleteConcurrency int `toml:"delete_concurrency"`
	// DeleteMaxAttempts is svc.storage.delete_max_attempts (default 12): the retry budget before
	// a delete is dead-lettered.
	DeleteMaxAttempts int `toml:"delete_max_attempts"`
	// DeleteLeaseWindow is svc.storage.delete_lease_window (default 5m): how long a claimed
	// delete stays leased to one node.
	DeleteLeaseWindow time.Duration `toml:"delete_lease_window"`
}

// ObjStore is svc.storage.objstore: an S3-compatible object store.
type ObjStore struct {
	// Endpoint is svc.storage.objstore.endpoint: host[:port] of the store. Required for the
	// objstore provider.
	Endpoint string `toml:"endpoint"`
	// AccessKey is svc.storage.objstore.access_key (secret).
	AccessKey string `toml:"access_key" secret:"true"`
	// SecretKey is svc.storage.objstore.secret_key (secret).
	SecretKey string `toml:"secret_key" secret:"true"`
	// Bucket is svc.storage.objstore.bucket (default svc.app.name, itself defaulting to svc-app).
	Bucket string `toml:"bucket"`
	// Region is svc.storage.objstore.region (empty lets the client discover it).
	Region string `toml:"region"`
	// UseSSL is svc.storage.objstore.use_ssl (default false): connect with TLS.
	UseSSL bool `toml:"use_ssl"`
}

// Filesystem is svc.storage.filesystem.
type Filesystem struct {
	// Root is svc.storage.filesystem.root (default ./storage): the directory objects live under.
	Root string `toml:"root"`
	// Sync is svc.storage.filesystem.sync (default false; our addition): sync each part and each
	// completed object to disk before acknowledging it, so uploads also survive a power loss, at
	// the cost of waiting for the disk.
	Sync bool `toml:"sync"`
}

func (s *Storage) applyDefaults(appName string) {
	s.Provider = orDefault(s.Provider, StorageMemory)
	s.ObjStore.Bucket = orDefault(s.ObjStore.Bucket, orDefault(appName, defaultAppName))
	s.Filesystem.Root = orDefault(s.Filesystem.Root, defaultStorageRoot)
	s.MaxUploadSize = positive(s.MaxUploadSize, defaultMaxUploadSize)
	s.ClaimTTL = positive(s.ClaimTTL, defaultClaimTTL)
	s.MaxPendingClaims = positive(s.MaxPendingClaims, defaultMaxPendingClaims)
	s.UploadPartRateLimit = positive(s.UploadPartRateLimit, 0)
	s.SweepInterval = positive(s.SweepInterval, defaultSweepInterval)
	s.SweepBatchSize = positive(s.SweepBatchSize, defaultSweepBatchSize)
	s.OrphanRetention = positive(s.OrphanRetention, 0)
	s.DeleteWorkerInterval = positive(s.DeleteWorkerInterval, defaultDeleteWorkerInterval)
	s.DeleteBatchSize = positive(s.DeleteBatchSize, defaultDeleteBatchSize)
	s.DeleteConcurrency = positive(s.DeleteConcurrency, defaultDeleteConcurrency)
	s.DeleteMaxAttempts = positive(s.DeleteMaxAttempts, defaultDeleteMaxAttempts)
	s.DeleteLeaseWindow = positive(s.DeleteLeaseWindow, defaultDeleteLeaseWindow)
}

func (s *Storage) validate() []error {
	switch s.Provider {
	case "", StorageMemory, StorageFilesystem:
	case StorageObjStore:
		if s.ObjStore.Endpoint == "" {
			return []error{fmt.Errorf("svc.storage.objstore.endpoint: required for provider objstore: %w", ErrInvalidObjStore)}
		}
	default:
		return []error{fmt.Errorf("svc.storage.provider %q: want memory, filesystem or objstore: %w", s.Provider, ErrInvalidStorageProvider)}
	}
	return nil
}
