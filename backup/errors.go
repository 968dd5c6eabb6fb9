package backup

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the backup module (ours, issue #47). All are answered with HTTP 200.
const (
	ErrCodeBusy              = 2950
	ErrCodeArchiveInvalid    = 2951
	ErrCodeBackupNotFinished = 2953
)

// Error templates of the /api operations, compared with errors.Is.
var (
	// ErrBusy: another backup is running on some node (2950).
	ErrBusy = rpc.NewError(ErrCodeBusy, http.StatusOK, "backup_busy")
	// ErrArchiveInvalid: the archive failed verification; {{reason}} says why (2951).
	ErrArchiveInvalid = rpc.NewError(ErrCodeArchiveInvalid, http.StatusOK, "backup_archive_invalid")
	// ErrBackupNotFinished: download or restore of a backup that is running or failed (2953).
	ErrBackupNotFinished = rpc.NewError(ErrCodeBackupNotFinished, http.StatusOK, "backup_not_finished")
)

// Reasons an archive is refused; Verify and Restore wrap them, ErrArchiveInvalid carries them.
var (
	// ErrArchivePartial: the archive ends before its trailer (a backup that was killed).
	ErrArchivePartial = errors.New("partial archive")
	// ErrArchiveCorrupt: a checksum, size, manifest or trailer does not match.
	ErrArchiveCorrupt = errors.New("corrupt archive")
	// ErrArchiveTooNew: the archive's format or a module's schema version is newer than this
	// binary's.
	ErrArchiveTooNew = errors.New("archive newer than this binary")
	// ErrWrongKey: the archive was encrypted with another svc.backup.encryption_key.
	ErrWrongKey = errors.New("the archive was encrypted with another key")
	// ErrKeyRequired: the archive is encrypted and svc.backup.encryption_key is empty.
	ErrKeyRequired = errors.New("the archive is encrypted: set svc.backup.encryption_key")
	// ErrServerRunning: restore found a server holding the data directory.
	ErrServerRunning = errors.New("a server is running on this database")
	// ErrObjectNotFound: the object store has no object of the key (ObjectStore.Open).
	ErrObjectNotFound = errors.New("object not found")
)
