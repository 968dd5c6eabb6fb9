package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// initUpload opens an upload (spec §3: (none) → pending). The checks run in the original's order
// (wire-core §7.2): size limit 2205, multipart support 2206, public uploads 2207, part count
// 2208, filename 2220, principal 1100, pending-claim limit 2209.
//
// The claim row is written before the backend session is opened, so a crash between the two
// leaves a claim without a session id, which the sweeper expires and whose sessions the delete
// worker then finds and aborts by key; never a session nobody knows about.
func (s *Service) initUpload(ctx context.Context, p *rpc.Principal, in InitUploadParams) (*InitUploadResult, error) {
	switch {
	case in.Size > int64(s.cfg.MaxUploadSize):
		return nil, ErrUploadSizeExceedsLimit
	case !s.info.Multipart:
		return nil, ErrMultipartNotSupported
	case in.Public && !s.cfg.AllowPublicUploads:
		return nil, ErrPublicUploadsNotAllowed
	}
	count := PartCount(in.Size, s.info.PartSize)
	if s.info.MaxParts > 0 && count > s.info.MaxParts {
		return nil, ErrUploadTooManyParts
	}
	name, err := SanitizeFilename(in.Filename)
	if err != nil {
		return nil, err
	}
	if p.IsAnonymous() {
		return nil, rpc.ErrAccessDenied
	}
	now := s.now()
	pending, err := s.claims.countPending(ctx, s.db, p.ID, now)
	if err != nil {
		return nil, fmt.Errorf("storage: count pending claims: %w", err)
	}
	if pending >= int64(s.cfg.MaxPendingClaims) {
		return nil, ErrTooManyPendingUploads
	}
	c := &Claim{
		ID: newID(), CreatedAt: now, CreatedBy: p.ID, Key: ObjectKey(in.Public, name, now),
		Size: in.Size, ContentType: SanitizeContentType(in.ContentType, name), OriginalFilename: name,
		Status: StatusPending, Public: in.Public, PartSize: s.info.PartSize, PartCount: count,
		ExpiresAt: now.Add(s.cfg.ClaimTTL),
	}
	if err := s.openSession(ctx, c); err != nil {
		return nil, err
	}
	return &InitUploadResult{
		Key: c.Key, ClaimID: c.ID, OriginalFilename: c.OriginalFilename,
		PartSize: c.PartSize, PartCount: c.PartCount, ExpiresAt: c.ExpiresAt,
	}, nil
}

// openSession stores the claim, opens its backend session and records the session id.
func (s *Service) openSession(ctx context.Context, c *Claim) error {
	if err := s.claims.insert(ctx, s.db, c); err != nil {
		return fmt.Errorf("storage: insert claim: %w", err)
	}
	id, err := s.backend.InitMultipart(ctx, c.Key, c.ContentType)
	if err != nil {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if _, derr := s.claims.remove(cctx, s.db, c.ID, StatusPending); derr != nil {
			s.log.WarnContext(ctx, "remove claim after failed session", slog.String("claim", c.ID), slog.Any("error", derr))
		}
		return fmt.Errorf("storage: open multipart session: %w", err)
	}
	if _, err := s.claims.setUploadID(ctx, s.db, c.ID, id); err != nil {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		_ = s.backend.AbortMultipart(cctx, c.Key, id)
		return fmt.Errorf("storage: record multipart session: %w", err)
	}
	c.UploadID = id
	return nil
}

// uploadPart streams one part to the backend and records it (spec §3: pending → pending). The
// checks run in the original's order (wire-core §7.2) after the envelope checks of the handler:
// 2206, 1100, 2203, 2204, 2205, 2212, 2213, then the size rules 2214 and 2215 while streaming.
// size is the part's length when the engine knows it, else -1.
func (s *Service) uploadPart(ctx context.Context, p *rpc.Principal, claimID string, number int, body io.Reader, size int64) (*UploadPartResult, error) {
	if !s.info.Multipart {
		return nil, ErrMultipartNotSupported
	}
	c, err := s.ownedClaim(ctx, p, claimID)
	if err != nil {
		return nil, err
	}
	if err := s.checkPending(c, true); err != nil {
		return nil, err
	}
	if number > c.PartCount {
		return nil, ErrUploadPartNumberOutOfRange
	}
	final := number == c.lastPart()
	switch {
	case size > c.PartSize:
		return nil, ErrUploadPartTooLarge
	case size >= 0 && size < c.PartSize && !final, size == 0:
		return nil, ErrUploadPartTooSmall
	}
	// Every part but the last has exactly PartSize bytes, so the backend can stream it with a
	// known length; the last part's length is known only when the engine spooled it.
	want := c.PartSize
	if final {
		want = size
	}
	pr := newPartReader(body, c.PartSize, !final)
	part, err := s.backend.PutPart(ctx, c.Key, c.UploadID, number, pr, want)
	if errors.Is(err, backend.ErrSuperseded) {
		// The newer transfer owns the part number and its record: leave both alone.
		return nil, ErrUploadPartSuperseded.Wrap(err)
	}
	if verr := pr.check(err == nil); verr != nil {
		// The backend may hold a truncated copy under this number, or none: forget the number
		// so completion waits for a good one.
		if rerr := s.parts.remove(ctx, s.db, c.ID, number); rerr != nil {
			return nil, fmt.Errorf("storage: forget part: %w", rerr)
		}
		return nil, verr
	}
	if err != nil {
		return nil, s.partFailure(ctx, p, c, err)
	}
	if err := s.parts.upsert(ctx, s.db, c.ID, part, s.now()); err != nil {
		if db.IsForeignKeyViolation(err) {
			return nil, rpc.ErrAccessDenied // aborted or adopted meanwhile: the claim is gone
		}
		return nil, fmt.Errorf("storage: record part: %w", err)
	}
	return &UploadPartResult{PartNumber: number, Size: part.Size}, nil
}

// checkPending applies the checks shared by upload_part, list_parts and complete_upload on a
// claim the caller owns, in the order of wire-core §7.2: 2203 not pending, 2204 expired, 2205
// over the current size limit when sizeCap is set, 2212 no backend session. upload_part and
// complete_upload re-check the size cap; list_parts does not (its order is 2203, 2204, 2212),
// so a client can still see its parts after max_upload_size was lowered.
func (s *Service) checkPending(c *Claim, sizeCap bool) error {
	switch {
	case c.Status != StatusPending:
		return ErrClaimNotPending
	case c.expired(s.now()):
		return ErrClaimExpired
	case sizeCap && c.Size > int64(s.cfg.MaxUploadSize):
		return ErrUploadSizeExceedsLimit
	case c.UploadID == "":
		return ErrClaimNotMultipart
	}
	return nil
}

// partFailure explains a failed part write: the session may have closed because the claim was
// completed, aborted or adopted while the part streamed.
func (s *Service) partFailure(ctx context.Context, p *rpc.Principal, c *Claim, err error) error {
	if !errors.Is(err, backend.ErrSessionNotFound) {
		return fmt.Errorf("storage: write part: %w", err)
	}
	cur, cerr := s.ownedClaim(ctx, p, c.ID)
	switch {
	case cerr != nil:
		return cerr
	case cur.Status != StatusPending:
		return ErrClaimNotPending
	}
	return ErrClaimNotMultipart.Wrap(err)
}

// listParts returns the recorded parts of a pending claim. Its failures run in the order of
// wire-core §7.2: 1100, 2203, 2204, 2212; the size cap (2205) is not checked.
func (s *Service) listParts(ctx context.Context, p *rpc.Principal, claimID string) (*ListPartsResult, error) {
	c, err := s.ownedClaim(ctx, p, claimID)
	if err != nil {
		return nil, err
	}
	if err := s.checkPending(c, false); err != nil {
		return nil, err
	}
	parts, err := s.parts.list(ctx, s.db, c.ID)
	if err != nil {
		return nil, fmt.Errorf("storage: list parts: %w", err)
	}
	out := &ListPartsResult{Parts: make([]PartInfo, len(parts))}
	for i, pt := range parts {
		out.Parts[i] = PartInfo{PartNumber: pt.Number, Size: pt.Size}
	}
	return out, nil
}

// abortUpload discards a pending upload (spec §3): the claim and its parts go and the backend
// clean-up is queued in the same transaction, so abort never fails on the backend and is safe to
// retry. An unknown claim succeeds; another principal's claim is rejected (1100); an uploaded
// claim is left alone (no-op success).
func (s *Service) abortUpload(ctx context.Context, p *rpc.Principal, claimID string) error {
	c, err := s.claims.get(ctx, s.db, claimID)
	if err != nil {
		return fmt.Errorf("storage: load claim: %w", err)
	}
	if c == nil {
		return nil
	}
	if p.IsAnonymous() || c.CreatedBy != p.ID {
		return rpc.ErrAccessDenied
	}
	if c.Status != StatusPending {
		return nil
	}
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		gone, err := s.claims.remove(ctx, tx, c.ID, StatusPending)
		if err != nil || !gone {
			return err
		}
		return s.queue.enqueue(ctx, tx, c.Key, c.UploadID, ReasonAborted, s.now())
	})
}
