package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
)

// completeUpload assembles a pending upload (spec §3: pending → uploaded). The checks run in the
// original's order (wire-core §7.2): 1100, the idempotent fast path for an uploaded claim, 2203,
// 2204, 2205, 2212, 2206, 2216 recorded parts ≠ 1..partCount, 2217 session gone and no object,
// 2218 assembled size ≠ declared; and 2204 when the claim expired while its object was assembled
// (expiredWhileAssembling).
//
// The manifest is rebuilt from the server's own part records. Their sizes are summed before the
// backend is asked to assemble anything, so a size mismatch (2218) leaves the claim, its session
// and its parts exactly as they were: the client may re-send the wrong part and complete again.
// Completion is safe to repeat after a crash at any point: a session already assembled answers
// "not found" and the object is then taken from Stat.
func (s *Service) completeUpload(ctx context.Context, p *rpc.Principal, claimID string) (*CompleteUploadResult, error) {
	c, err := s.ownedClaim(ctx, p, claimID)
	if err != nil {
		return nil, err
	}
	if c.Status == StatusUploaded {
		obj, err := s.backend.Stat(ctx, c.Key)
		if err != nil {
			return nil, s.missingObject(err)
		}
		return s.completeResult(c, obj), nil
	}
	if err := s.checkPending(c, true); err != nil {
		return nil, err
	}
	if !s.info.Multipart {
		return nil, ErrMultipartNotSupported
	}
	parts, err := s.parts.list(ctx, s.db, c.ID)
	if err != nil {
		return nil, fmt.Errorf("storage: list parts: %w", err)
	}
	if !contiguous(parts, c.PartCount) {
		return nil, ErrUploadPartsIncomplete
	}
	if total := sumSizes(parts); total != c.Size {
		return nil, ErrUploadSizeMismatch
	}
	obj, err := s.assemble(ctx, c, parts)
	if err != nil {
		return nil, err
	}
	if err := s.registerUpload(ctx, c); err != nil {
		if errors.Is(err, errClaimGone) {
			return nil, s.expiredWhileAssembling(ctx, c)
		}
		return nil, fmt.Errorf("storage: register upload: %w", err)
	}
	return s.completeResult(c, obj), nil
}

// expiredWhileAssembling answers a completion whose claim went while its object was assembled:
// the sweeper of a node whose clock runs ahead, or a completion slower than sweep_interval (an
// object store cut mid-request), found the claim expired and no object yet, released the claim
// and queued its key claim_expired. Answering the object would hand the client a key the delete
// worker removes moments later (bench/faults, MariaDB seed 4547: a completed upload downloaded as
// 2201). The completion answers 2204 instead and deletes the object it assembled: the worker may
// have run before the object existed, and the key, planned for this claim alone, names nothing
// anyone else holds.
func (s *Service) expiredWhileAssembling(ctx context.Context, c *Claim) error {
	cctx, cancel := cleanupContext(ctx)
	defer cancel()
	if err := s.backend.Delete(cctx, c.Key); err != nil && !isNotFound(err) {
		s.log.ErrorContext(ctx, "delete object of a claim expired while completing", slog.String("claim", c.ID), slog.Any("error", err))
	}
	s.log.WarnContext(ctx, "claim expired while its upload was completed", slog.String("claim", c.ID))
	return ErrClaimExpired
}

// assemble asks the backend to complete the session and checks the object it made.
func (s *Service) assemble(ctx context.Context, c *Claim, parts []backend.Part) (backend.Object, error) {
	obj, err := s.backend.CompleteMultipart(ctx, c.Key, c.UploadID, parts)
	switch {
	case errors.Is(err, backend.ErrSessionNotFound):
		// Completed by an earlier call that did not live to record it: the object tells.
		if obj, err = s.backend.Stat(ctx, c.Key); err != nil {
			return backend.Object{}, s.missingObject(err)
		}
	case errors.Is(err, backend.ErrInvalidPart):
		// A recorded part no longer matches the session (it was replaced or lost): the client
		// must send it again.
		return backend.Object{}, ErrUploadPartsIncomplete.Wrap(err)
	case err != nil:
		return backend.Object{}, fmt.Errorf("storage: complete multipart upload: %w", err)
	}
	if obj.Size != c.Size {
		// Defensive: the records said the sizes add up, the backend disagrees. Leave nothing
		// half-written behind.
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if derr := s.backend.Delete(cctx, c.Key); derr != nil {
			s.log.ErrorContext(ctx, "delete object of mismatched size", slog.String("claim", c.ID), slog.Any("error", derr))
		}
		return backend.Object{}, ErrUploadSizeMismatch
	}
	return obj, nil
}

// missingObject maps a failed Stat after the session closed: no object is 2217.
func (s *Service) missingObject(err error) error {
	if isNotFound(err) {
		return ErrUploadObjectNotFound
	}
	return fmt.Errorf("storage: stat object: %w", err)
}

func (s *Service) completeResult(c *Claim, obj backend.Object) *CompleteUploadResult {
	return &CompleteUploadResult{
		Bucket: s.info.Bucket, Key: c.Key, ETag: obj.ETag, Size: obj.Size, ContentType: c.ContentType,
		LastModified: obj.LastModified, Metadata: obj.Metadata, OriginalFilename: c.OriginalFilename,
	}
}

// contiguous reports whether parts (ascending) are exactly 1..count.
func contiguous(parts []backend.Part, count int) bool {
	if len(parts) != count {
		return false
	}
	for i, p := range parts {
		if p.Number != i+1 {
			return false
		}
	}
	return true
}

func sumSizes(parts []backend.Part) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}
