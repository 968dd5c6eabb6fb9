// Package backend is the contract between the storage module and the places objects live: the
// memory, filesystem and objstore providers implement Backend, and the storage module talks to
// nothing else. It is a package of its own so that the providers and the module can both import
// it without importing each other.
//
// Every implementation passes the shared conformance suite in package backendtest.
package backend

import (
	"context"
	"errors"
	"io"
	"time"
)

// Backend stores immutable objects by key and assembles them from multipart sessions.
//
// Keys are validated with ValidKey by every implementation before any I/O; an invalid key
// answers ErrInvalidKey. Methods are safe for concurrent use. Parts of distinct numbers of one
// session may be written concurrently; writing a part number again replaces it.
type Backend interface {
	// Info describes the provider: its name, bucket and part plan.
	Info() Info

	// Put stores r under key, replacing any object there. size is the exact length of r, or -1
	// when unknown; a reader that ends before size bytes fails the call and stores nothing.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Object, error)
	// Get opens the object, whole when rng is nil, else the bytes of rng, which the caller has
	// checked against the object's size. The returned Object describes the whole object.
	Get(ctx context.Context, key string, rng *Range) (io.ReadCloser, Object, error)
	// Stat describes the object, or answers ErrNotFound.
	Stat(ctx context.Context, key string) (Object, error)
	// Delete removes the object; a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// Copy copies the object src to dst, replacing dst.
	Copy(ctx context.Context, src, dst string) (Object, error)

	// InitMultipart opens a multipart session for key and returns its id, which is internal to
	// the server and never shown to clients.
	InitMultipart(ctx context.Context, key, contentType string) (uploadID string, err error)
	// PutPart writes part number (1-based) of the session from r. size is the exact length of r,
	// or -1 when unknown. Every part but the last of a session is exactly Info().PartSize bytes
	// and no part is larger (the storage module enforces both). It answers ErrSessionNotFound
	// when the session is gone (completed or aborted). A failed write leaves no part behind
	// under that number, or the previous one.
	PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (Part, error)
	// CompleteMultipart assembles parts, in the order given, into the object key and closes the
	// session. A part whose number or ETag does not match what the session holds answers
	// ErrInvalidPart; an unknown session answers ErrSessionNotFound. Completing a session that
	// was just completed may answer ErrSessionNotFound or, as S3 does, the same object again.
	// The object appears atomically: readers see the old state or the whole new object.
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (Object, error)
	// AbortMultipart discards a session and its parts. An unknown session is not an error, and an
	// empty uploadID aborts every session of key (used when a crash lost the session id).
	AbortMultipart(ctx context.Context, key, uploadID string) error
}

// Starter is implemented by backends that need I/O before use (creating the bucket or the root
// directory). The storage module calls Start from its own Start, never while being built.
type Starter interface {
	Start(ctx context.Context) error
}

// Info describes a backend.
type Info struct {
	// Name is the provider: "memory", "filesystem" or "objstore".
	Name string
	// Bucket is the bucket reported to clients in complete_upload (wire-core §7.4): the S3
	// bucket, or the sentinel "memory" / "filesystem".
	Bucket string
	// Multipart reports native multipart sessions. A backend without them cannot take uploads
	// (ErrCodeMultipartNotSupported, 2206).
	Multipart bool
	// PartSize is the authoritative part size in bytes (wire-core §7.1).
	PartSize int64
	// MaxParts is the largest part count of one session; 0 means unbounded.
	MaxParts int
}

// Object describes a stored object.
type Object struct {
	Key  string
	Size int64
	// ETag identifies this version of the content, without surrounding quotes.
	ETag string
	// ContentType is what the backend stored with the object; empty when it keeps none.
	ContentType  string
	LastModified time.Time
	// Metadata is the backend's own metadata, if any; user metadata is never accepted.
	Metadata map[string]string
}

// Part is one written part of a multipart session.
type Part struct {
	Number int
	// ETag identifies the part's content, without quotes. The storage module records it and
	// never shows it to clients.
	ETag string
	Size int64
}

// Range is a byte range of an object: Length bytes from Offset. Length is at least 1 and the
// range lies within the object.
type Range struct {
	Offset int64
	Length int64
}

// Errors of the contract. Implementations wrap them (with %w) so callers match with errors.Is.
var (
	// ErrNotFound: no object under the key.
	ErrNotFound = errors.New("backend: object not found")
	// ErrSessionNotFound: the multipart session does not exist or is closed.
	ErrSessionNotFound = errors.New("backend: multipart session not found")
	// ErrInvalidPart: a part of the manifest is missing or differs from what the session holds.
	ErrInvalidPart = errors.New("backend: invalid part")
	// ErrInvalidKey: the key failed ValidKey.
	ErrInvalidKey = errors.New("backend: invalid object key")
	// ErrShortBody: a reader ended before the size it was announced with.
	ErrShortBody = errors.New("backend: body shorter than its size")
	// ErrAccessDenied: the backend refused the credentials or the operation.
	ErrAccessDenied = errors.New("backend: access denied")
	// ErrBucketNotFound: the configured bucket does not exist.
	ErrBucketNotFound = errors.New("backend: bucket not found")
	// ErrMultipartUnsupported: the backend has no multipart sessions.
	ErrMultipartUnsupported = errors.New("backend: multipart uploads not supported")
)
