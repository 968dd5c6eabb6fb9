package storage

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the storage module (wire-core §7.9). All are answered with HTTP 200.
const (
	ErrCodeInvalidFileKey           = 2200
	ErrCodeFileNotFound             = 2201
	ErrCodeFailedToGetFile          = 2202
	ErrCodeClaimNotPending          = 2203
	ErrCodeClaimExpired             = 2204
	ErrCodeUploadSizeExceedsLimit   = 2205
	ErrCodeMultipartNotSupported    = 2206
	ErrCodePublicUploadsNotAllowed  = 2207
	ErrCodeUploadTooManyParts       = 2208
	ErrCodeTooManyPendingUploads    = 2209
	ErrCodeUploadRequiresMultipart  = 2210
	ErrCodeUploadRequiresFile       = 2211
	ErrCodeClaimNotMultipart        = 2212
	ErrCodeUploadPartNumberOutOfRng = 2213
	ErrCodeUploadPartTooLarge       = 2214
	ErrCodeUploadPartTooSmall       = 2215
	ErrCodeUploadPartsIncomplete    = 2216
	ErrCodeUploadObjectNotFound     = 2217
	ErrCodeUploadSizeMismatch       = 2218
	ErrCodeAbortFailed              = 2219
	ErrCodeInvalidFilename          = 2220
)

func storageError(code int, key string) *rpc.Error {
	return rpc.NewError(code, http.StatusOK, key)
}

// Error templates of the storage module (wire-core §7.9), compared with errors.Is.
var (
	// ErrInvalidFileKey (2200): the download proxy got a malformed key.
	ErrInvalidFileKey = storageError(ErrCodeInvalidFileKey, "storage_invalid_file_key")
	// ErrFileNotFound (2201): the download proxy found no object under the key.
	ErrFileNotFound = storageError(ErrCodeFileNotFound, "storage_file_not_found")
	// ErrFailedToGetFile (2202): the backend or the file ACL failed.
	ErrFailedToGetFile = storageError(ErrCodeFailedToGetFile, "storage_failed_to_get_file")
	// ErrClaimNotPending (2203): the claim is already uploaded.
	ErrClaimNotPending = storageError(ErrCodeClaimNotPending, "storage_claim_not_pending")
	// ErrClaimExpired (2204): the claim is past its expiresAt.
	ErrClaimExpired = storageError(ErrCodeClaimExpired, "storage_claim_expired")
	// ErrUploadSizeExceedsLimit (2205): the size is over svc.storage.max_upload_size.
	ErrUploadSizeExceedsLimit = storageError(ErrCodeUploadSizeExceedsLimit, "storage_upload_size_exceeds_limit")
	// ErrMultipartNotSupported (2206): the backend has no multipart sessions.
	ErrMultipartNotSupported = storageError(ErrCodeMultipartNotSupported, "storage_multipart_not_supported")
	// ErrPublicUploadsNotAllowed (2207): public = true while svc.storage.allow_public_uploads is off.
	ErrPublicUploadsNotAllowed = storageError(ErrCodePublicUploadsNotAllowed, "storage_public_uploads_not_allowed")
	// ErrUploadTooManyParts (2208): the part count is over the backend's maximum.
	ErrUploadTooManyParts = storageError(ErrCodeUploadTooManyParts, "storage_upload_too_many_parts")
	// ErrTooManyPendingUploads (2209): the principal holds max_pending_claims pending claims.
	ErrTooManyPendingUploads = storageError(ErrCodeTooManyPendingUploads, "storage_too_many_pending_uploads")
	// ErrUploadRequiresMultipart (2210): upload_part was sent as JSON.
	ErrUploadRequiresMultipart = storageError(ErrCodeUploadRequiresMultipart, "storage_upload_requires_multipart")
	// ErrUploadRequiresFile (2211): upload_part has no file part named "file".
	ErrUploadRequiresFile = storageError(ErrCodeUploadRequiresFile, "storage_upload_requires_file")
	// ErrClaimNotMultipart (2212): the claim has no backend session.
	ErrClaimNotMultipart = storageError(ErrCodeClaimNotMultipart, "storage_claim_not_multipart")
	// ErrUploadPartNumberOutOfRange (2213): partNumber is above partCount.
	ErrUploadPartNumberOutOfRange = storageError(ErrCodeUploadPartNumberOutOfRng, "storage_upload_part_number_out_of_range")
	// ErrUploadPartTooLarge (2214): the part is larger than partSize.
	ErrUploadPartTooLarge = storageError(ErrCodeUploadPartTooLarge, "storage_upload_part_too_large")
	// ErrUploadPartTooSmall (2215): a part other than the last is smaller than partSize.
	ErrUploadPartTooSmall = storageError(ErrCodeUploadPartTooSmall, "storage_upload_part_too_small")
	// ErrUploadPartsIncomplete (2216): the recorded parts are not exactly 1..partCount.
	ErrUploadPartsIncomplete = storageError(ErrCodeUploadPartsIncomplete, "storage_upload_parts_incomplete")
	// ErrUploadObjectNotFound (2217): the session is gone and no object was assembled.
	ErrUploadObjectNotFound = storageError(ErrCodeUploadObjectNotFound, "storage_object_not_found")
	// ErrUploadSizeMismatch (2218): the assembled size differs from the declared size.
	ErrUploadSizeMismatch = storageError(ErrCodeUploadSizeMismatch, "storage_upload_size_mismatch")
	// ErrAbortFailed (2219) is declared for completeness of the code table only: abort_upload
	// queues the backend clean-up and never fails on the backend (wire-core §10 #5).
	ErrAbortFailed = storageError(ErrCodeAbortFailed, "storage_abort_failed")
	// ErrInvalidFilename (2220): the filename is empty, ".", ".." or has control characters.
	ErrInvalidFilename = storageError(ErrCodeInvalidFilename, "storage_invalid_filename")
)

// ErrUploadPartSuperseded answers an upload_part whose transfer was overtaken by a newer one of
// the same part (issue #11: the client's uploader re-sent the part while this transfer stalled):
// nothing of this transfer is stored or recorded, the newer one stands. The original has no such
// case; svc answers HTTP 409 with code 1900, the code the original gives every status it does
// not map (wire-core §1.5). The client that sent it has normally given up on it already.
var ErrUploadPartSuperseded = rpc.NewError(rpc.CodeUnknown, http.StatusConflict, "storage_upload_part_superseded")

// ErrClaimNotFound is returned by the adoption API when a key is not an uploaded claim of the
// principal. It is a plain error, as in the original (wire-core §2.4): a host maps it to its own
// business error; left unmapped it answers 500/1900.
var ErrClaimNotFound = errors.New("storage: claim not found")

// ErrAccessDenied is returned by the adoption API (Adopt, Replace) for a nil or anonymous
// principal. It is a plain error without a code, as in the original (wire-core §7.8), not
// rpc.ErrAccessDenied: adoption is host code, and a host maps it to its own business error;
// left unmapped it answers 500/1900.
var ErrAccessDenied = errors.New("storage: access denied")
