// Package objstore is the storage backend for S3-compatible object stores, through minio-go.
// Uploads use the store's native multipart sessions (minio.Core): a part goes from the request
// body to the store in one streamed request when its length is known, and through a temporary
// file when it is not (only a final part can be of unknown length), so no part is ever held in
// memory.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/svc-framework/svc/storage/backend"
)

// PartSize is the part size of the objstore backend (wire-core §7.1: 16 MiB).
const PartSize = 16 << 20

// MinPartSize is the smallest part S3 accepts for a part that is not the last.
const MinPartSize = 5 << 20

// MaxParts is the largest part count of an S3 multipart upload (wire-core §7.1).
const MaxParts = 10000

var (
	_ backend.Backend = (*Store)(nil)
	_ backend.Starter = (*Store)(nil)
)

// Config locates the object store (svc.storage.objstore).
type Config struct {
	// Endpoint is host[:port]; an http:// or https:// prefix is accepted and selects TLS.
	Endpoint string
	// AccessKey and SecretKey are the credentials.
	AccessKey, SecretKey string
	// Bucket holds every object; Start creates it when missing.
	Bucket string
	// Region is the signing region; empty lets the client discover it.
	Region string
	// UseSSL connects with TLS.
	UseSSL bool
	// PartSize overrides PartSize (at least MinPartSize).
	PartSize int64
	// SpoolDir holds temporary files of parts of unknown length (default os.TempDir()).
	SpoolDir string
	// Transport replaces the HTTP transport (tests); nil uses minio-go's default.
	Transport http.RoundTripper
}

// Store is a backend.Backend over an S3-compatible object store. Build it with New (no I/O) and
// call Start before use.
type Store struct {
	cfg  Config
	core *minio.Core

	once      sync.Once
	startErr  error
	transfers backend.Transfers // the open transfer of each part: the newest wins
}

// NormalizeEndpoint accepts an endpoint as host[:port] or as an http:// or https:// URL and
// returns host[:port] for the client, with useSSL turned on by an https:// scheme and otherwise
// left as given. A trailing slash is dropped.
func NormalizeEndpoint(endpoint string, useSSL bool) (string, bool) {
	switch {
	case strings.HasPrefix(endpoint, "https://"):
		endpoint, useSSL = strings.TrimPrefix(endpoint, "https://"), true
	case strings.HasPrefix(endpoint, "http://"):
		endpoint = strings.TrimPrefix(endpoint, "http://")
	}
	return strings.TrimSuffix(endpoint, "/"), useSSL
}

// New checks cfg and builds the client; it does no I/O.
func New(cfg Config) (*Store, error) {
	cfg.Endpoint, cfg.UseSSL = NormalizeEndpoint(cfg.Endpoint, cfg.UseSSL)
	if cfg.Endpoint == "" {
		return nil, errors.New("objstore: endpoint is required")
	}
	if cfg.Bucket == "" {
		return nil, errors.New("objstore: bucket is required")
	}
	if cfg.PartSize <= 0 {
		cfg.PartSize = PartSize
	}
	if cfg.PartSize < MinPartSize {
		return nil, fmt.Errorf("objstore: part size %d below the S3 minimum %d", cfg.PartSize, MinPartSize)
	}
	core, err := minio.NewCore(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    cfg.UseSSL,
		Region:    cfg.Region,
		Transport: cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: client for %s: %w", cfg.Endpoint, err)
	}
	return &Store{cfg: cfg, core: core}, nil
}

// Start makes sure the bucket exists, creating it when missing.
func (s *Store) Start(ctx context.Context) error {
	s.once.Do(func() { s.startErr = s.ensureBucket(ctx) })
	return s.startErr
}

func (s *Store) ensureBucket(ctx context.Context) error {
	ok, err := s.core.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("objstore: bucket %s: %w", s.cfg.Bucket, mapErr(err))
	}
	if ok {
		return nil
	}
	err = s.core.MakeBucket(ctx, s.cfg.Bucket, minio.MakeBucketOptions{Region: s.cfg.Region})
	if err != nil {
		if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil // created concurrently by another node
		}
		return fmt.Errorf("objstore: create bucket %s: %w", s.cfg.Bucket, mapErr(err))
	}
	return nil
}

// Info implements backend.Backend.
func (s *Store) Info() backend.Info {
	return backend.Info{Name: "objstore", Bucket: s.cfg.Bucket, Multipart: true, PartSize: s.cfg.PartSize, MaxParts: MaxParts}
}

// Put implements backend.Backend. A body of unknown length is spooled to a temporary file first.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	body, size, done, err := s.sized(r, size)
	if err != nil {
		return backend.Object{}, err
	}
	defer done()
	_, err = s.core.PutObject(ctx, s.cfg.Bucket, key, body, size, "", "", minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return backend.Object{}, fmt.Errorf("objstore: put %s: %w", key, mapErr(err))
	}
	return s.Stat(ctx, key)
}

// sized returns r with a known length: r itself (held to exactly size bytes) when size >= 0,
// else a temporary copy of it. done removes the copy.
func (s *Store) sized(r io.Reader, size int64) (io.Reader, int64, func(), error) {
	if size >= 0 {
		return backend.ExactReader(r, size), size, func() {}, nil
	}
	f, err := os.CreateTemp(s.cfg.SpoolDir, "svc-objstore-*")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("objstore: spool: %w", err)
	}
	done := func() { _ = f.Close(); _ = os.Remove(f.Name()) }
	n, err := backend.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		done()
		return nil, 0, nil, fmt.Errorf("objstore: spool: %w", err)
	}
	return f, n, done, nil
}

// Get implements backend.Backend in one request.
func (s *Store) Get(ctx context.Context, key string, rng *backend.Range) (io.ReadCloser, backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return nil, backend.Object{}, err
	}
	var opts minio.GetObjectOptions
	if rng != nil {
		if rng.Offset < 0 || rng.Length < 1 {
			return nil, backend.Object{}, fmt.Errorf("objstore: invalid range %d+%d", rng.Offset, rng.Length)
		}
		if err := opts.SetRange(rng.Offset, rng.Offset+rng.Length-1); err != nil {
			return nil, backend.Object{}, err
		}
	}
	body, info, header, err := s.core.GetObject(ctx, s.cfg.Bucket, key, opts)
	if err != nil {
		return nil, backend.Object{}, fmt.Errorf("objstore: get %s: %w", key, mapErr(err))
	}
	obj := toObject(key, info)
	if total, ok := rangeTotal(header.Get("Content-Range")); ok {
		obj.Size = total
	}
	return body, obj, nil
}

// rangeTotal reads the complete length from a Content-Range value "bytes a-b/total".
func rangeTotal(v string) (int64, bool) {
	_, total, ok := strings.Cut(v, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil
}

// Stat implements backend.Backend.
func (s *Store) Stat(ctx context.Context, key string) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	info, err := s.core.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return backend.Object{}, fmt.Errorf("objstore: stat %s: %w", key, mapErr(err))
	}
	return toObject(key, info), nil
}

func toObject(key string, info minio.ObjectInfo) backend.Object {
	return backend.Object{
		Key:          key,
		Size:         info.Size,
		ETag:         strings.Trim(info.ETag, `"`),
		ContentType:  info.ContentType,
		LastModified: info.LastModified.UTC(),
	}
}

// Delete implements backend.Backend (S3 answers success for a missing key).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := backend.CheckKey(key); err != nil {
		return err
	}
	if err := s.core.RemoveObject(ctx, s.cfg.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(mapErr(err), backend.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("objstore: delete %s: %w", key, mapErr(err))
	}
	return nil
}

// Copy implements backend.Backend with a server-side copy.
func (s *Store) Copy(ctx context.Context, src, dst string) (backend.Object, error) {
	if err := backend.CheckKey(src); err != nil {
		return backend.Object{}, err
	}
	if err := backend.CheckKey(dst); err != nil {
		return backend.Object{}, err
	}
	_, err := s.core.Client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: s.cfg.Bucket, Object: dst},
		minio.CopySrcOptions{Bucket: s.cfg.Bucket, Object: src})
	if err != nil {
		return backend.Object{}, fmt.Errorf("objstore: copy %s to %s: %w", src, dst, mapErr(err))
	}
	return s.Stat(ctx, dst)
}

// mapErr maps S3 error codes onto the backend's sentinel errors, keeping the original.
func mapErr(err error) error {
	resp := minio.ToErrorResponse(err)
	var sentinel error
	switch resp.Code {
	case "NoSuchKey", "NotFound":
		sentinel = backend.ErrNotFound
	case "NoSuchUpload":
		sentinel = backend.ErrSessionNotFound
	case "InvalidPart", "InvalidPartOrder", "EntityTooSmall":
		sentinel = backend.ErrInvalidPart
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch":
		sentinel = backend.ErrAccessDenied
	case "NoSuchBucket":
		sentinel = backend.ErrBucketNotFound
	default:
		if resp.StatusCode == http.StatusNotFound {
			sentinel = backend.ErrNotFound
		}
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}
