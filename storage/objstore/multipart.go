package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/svc-framework/svc/storage/backend"
)

// InitMultipart implements backend.Backend with CreateMultipartUpload.
func (s *Store) InitMultipart(ctx context.Context, key, contentType string) (string, error) {
	if err := backend.CheckKey(key); err != nil {
		return "", err
	}
	id, err := s.core.NewMultipartUpload(ctx, s.cfg.Bucket, key, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return "", fmt.Errorf("objstore: create multipart upload of %s: %w", key, mapErr(err))
	}
	return id, nil
}

// PutPart implements backend.Backend with UploadPart. A part of known size streams straight to
// the store (one request with that Content-Length); a part of unknown size is spooled first. A
// part sent again while an earlier transfer of it is still open supersedes it
// (backend.Transfers): the earlier one's request to the store is cancelled, so a stalled client
// cannot complete it later, and it answers backend.ErrSuperseded. Only within one process: two
// nodes receiving the same part race at the store, last writer wins, as before; if the older
// upload lands last, its ETag is not the recorded one and completion refuses the part
// (ErrInvalidPart) rather than assembling the older bytes.
func (s *Store) PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (backend.Part, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Part{}, err
	}
	if uploadID == "" {
		return backend.Part{}, fmt.Errorf("%w: empty upload id", backend.ErrSessionNotFound)
	}
	ctx, t := s.transfers.Begin(ctx, uploadID, number)
	defer t.End()
	body, size, done, err := s.sized(backend.ContextReader(ctx, r), size)
	if err != nil {
		return backend.Part{}, t.Err(err)
	}
	defer done()
	// Over TLS the payload is sent unsigned (TLS already guards its integrity) instead of with
	// the per-chunk SHA-256 signature minio-go uses on plain HTTP, which halves the throughput of
	// a local store (docs/modules/storage.md, "Benchmark").
	opts := minio.PutObjectPartOptions{DisableContentSha256: s.cfg.UseSSL}
	part, err := s.core.PutObjectPart(ctx, s.cfg.Bucket, key, uploadID, number, body, size, opts)
	if err != nil {
		return backend.Part{}, t.Err(fmt.Errorf("objstore: upload part %d of %s: %w", number, key, mapErr(err)))
	}
	// A transfer superseded after its upload went through must not be recorded: the newer one
	// replaces the part at the store (its upload starts after this one was cancelled).
	if err := t.Write(func() error { return nil }); err != nil {
		return backend.Part{}, err
	}
	return backend.Part{Number: number, ETag: strings.Trim(part.ETag, `"`), Size: size}, nil
}

// CompleteMultipart implements backend.Backend with CompleteMultipartUpload.
func (s *Store) CompleteMultipart(ctx context.Context, key, uploadID string, parts []backend.Part) (backend.Object, error) {
	if err := backend.CheckKey(key); err != nil {
		return backend.Object{}, err
	}
	if uploadID == "" {
		return backend.Object{}, fmt.Errorf("%w: empty upload id", backend.ErrSessionNotFound)
	}
	manifest := make([]minio.CompletePart, len(parts))
	for i, p := range parts {
		manifest[i] = minio.CompletePart{PartNumber: p.Number, ETag: p.ETag}
	}
	_, err := s.core.CompleteMultipartUpload(ctx, s.cfg.Bucket, key, uploadID, manifest, minio.PutObjectOptions{})
	if err != nil {
		return backend.Object{}, fmt.Errorf("objstore: complete multipart upload of %s: %w", key, mapErr(err))
	}
	return s.completedObject(ctx, key, uploadID)
}

// Completion grace: how long, and how often, CompleteMultipart looks for the object a server
// answered a completion for before it counts the session as lost.
var (
	completionGrace = 3 * time.Second
	completionPoll  = 200 * time.Millisecond
)

// completedObject stats the object a completion was answered for. A server may answer success
// before the object exists: versitygw claims a session by renaming it when an assembly starts and
// answers every later completion of that session with success while the claim is there — and a
// crash of the server mid-assembly leaves the claim for good, with no object and no session to
// complete (bench/faults found it: every retry of the completion failed). The object is looked
// for over completionGrace (a concurrent assembly finishing); still missing, the session counts
// as gone (backend.ErrSessionNotFound), so the caller decides from the object — the storage
// module answers 2217 and the client starts the upload again — instead of failing every retry
// with an internal error.
func (s *Store) completedObject(ctx context.Context, key, uploadID string) (backend.Object, error) {
	deadline := time.Now().Add(completionGrace)
	for {
		obj, err := s.Stat(ctx, key)
		if !errors.Is(err, backend.ErrNotFound) {
			return obj, err
		}
		if time.Now().After(deadline) {
			return backend.Object{}, fmt.Errorf("%w: objstore: the server answered the completion of %s (upload %s) but holds no object: %w",
				backend.ErrSessionNotFound, key, uploadID, err)
		}
		t := time.NewTimer(completionPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return backend.Object{}, ctx.Err()
		case <-t.C:
		}
	}
}

// AbortMultipart implements backend.Backend with AbortMultipartUpload; an empty uploadID lists
// the key's open uploads and aborts each.
func (s *Store) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := backend.CheckKey(key); err != nil {
		return err
	}
	if uploadID != "" {
		return s.abort(ctx, key, uploadID)
	}
	ids, err := s.sessions(ctx, key)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.abort(ctx, key, id); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) abort(ctx context.Context, key, uploadID string) error {
	err := s.core.AbortMultipartUpload(ctx, s.cfg.Bucket, key, uploadID)
	if err != nil && !errors.Is(mapErr(err), backend.ErrSessionNotFound) {
		return fmt.Errorf("objstore: abort multipart upload of %s: %w", key, mapErr(err))
	}
	return nil
}

// sessions lists the ids of the open multipart uploads of exactly key.
func (s *Store) sessions(ctx context.Context, key string) ([]string, error) {
	var ids []string
	keyMarker, idMarker := "", ""
	for {
		res, err := s.core.ListMultipartUploads(ctx, s.cfg.Bucket, key, keyMarker, idMarker, "", 1000)
		if err != nil {
			return nil, fmt.Errorf("objstore: list multipart uploads of %s: %w", key, mapErr(err))
		}
		for _, u := range res.Uploads {
			if u.Key == key {
				ids = append(ids, u.UploadID)
			}
		}
		if !res.IsTruncated || (res.NextKeyMarker == "" && res.NextUploadIDMarker == "") {
			return ids, nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

// Sessions returns the ids of the open multipart uploads of key (tests check that none leak).
func (s *Store) Sessions(ctx context.Context, key string) ([]string, error) {
	return s.sessions(ctx, key)
}
