package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Defaults of svc.backup (ours, issue #47).
const (
	defaultBackupDir           = "./data/backups"
	defaultBackupStoragePrefix = "backups"
)

// Destinations of svc.backup.destination.
const (
	// BackupToFolder writes archives into svc.backup.dir.
	BackupToFolder = "folder"
	// BackupToStorage writes archives into the storage backend (svc.storage.provider) under
	// svc.backup.storage_prefix, so S3 holds them when storage is on S3.
	BackupToStorage = "storage"
)

// BackupKeyBytes is the length of svc.backup.encryption_key once decoded (AES-256).
const BackupKeyBytes = 32

// Backup is the svc.backup section (ours, issue #47): where the backup module writes its
// archives and how it encrypts them. The schedule and retention are not here: they are the
// params of the cron schedule svc.backup (docs/operations.md).
type Backup struct {
	// Destination is svc.backup.destination (default "folder"): "folder" writes archives into
	// Dir, "storage" into the storage backend under StoragePrefix.
	Destination string `toml:"destination"`
	// Dir is svc.backup.dir (default ./data/backups): the folder destination, and where the
	// storage destination stages nothing (archives stream straight to the backend).
	Dir string `toml:"dir"`
	// StoragePrefix is svc.backup.storage_prefix (default "backups"): the key prefix of archives
	// in the storage backend.
	StoragePrefix string `toml:"storage_prefix"`
	// EncryptionKey is svc.backup.encryption_key (default empty: archives are not encrypted):
	// 32 bytes as 64 hex digits or standard base64. With a key every new archive is encrypted
	// with AES-256-GCM in 1 MiB chunks (backup/doc.go); restore needs the same key.
	EncryptionKey string `toml:"encryption_key" secret:"true"`
}

func (b *Backup) applyDefaults() {
	b.Destination = orDefault(strings.ToLower(strings.TrimSpace(b.Destination)), BackupToFolder)
	b.Dir = orDefault(b.Dir, defaultBackupDir)
	b.StoragePrefix = orDefault(strings.Trim(b.StoragePrefix, "/"), defaultBackupStoragePrefix)
}

// validate checks the destination and the key's form (never printing the key).
func (b *Backup) validate() []error {
	var errs []error
	if d := strings.ToLower(strings.TrimSpace(b.Destination)); d != "" && d != BackupToFolder && d != BackupToStorage {
		errs = append(errs, fmt.Errorf("svc.backup.destination %q: folder or storage: %w", b.Destination, ErrInvalidBackup))
	}
	if b.EncryptionKey != "" {
		if _, err := DecodeBackupKey(b.EncryptionKey); err != nil {
			errs = append(errs, fmt.Errorf("svc.backup.encryption_key: %w", err))
		}
	}
	return errs
}

// DecodeBackupKey decodes svc.backup.encryption_key: 64 hex digits or base64 of 32 bytes. The
// error never contains the key.
func DecodeBackupKey(s string) ([]byte, error) {
	if k, err := hex.DecodeString(s); err == nil && len(k) == BackupKeyBytes {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) == BackupKeyBytes {
		return k, nil
	}
	return nil, fmt.Errorf("want %d bytes as hex or base64: %w", BackupKeyBytes, ErrInvalidBackup)
}
