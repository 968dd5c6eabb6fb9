package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/uptrace/bun"
)

// Sweep is the body of the sweeper worker (every svc.storage.sweep_interval). It handles one
// batch (sweep_batch_size) of each:
//
//   - expired pending claims, past expires_at by more than sweep_interval (a grace period for
//     a complete_upload in flight): when the backend holds the whole object (a completion the
//     server did not live to record) the claim is recovered to uploaded and registered; else the
//     claim goes and its object and session are queued for deletion with reason claim_expired
//     (a completion still in flight then answers 2204 and deletes what it assembled: the grace
//     is measured on this node's clock, and a completion may outlast it);
//   - when svc.storage.orphan_retention > 0, uploaded claims never adopted, past expires_at by
//     more than orphan_retention: the claim goes and the object is queued with reason orphaned.
//
// Every change is conditional on the claim's state in one transaction, so any number of nodes
// can sweep at once and each claim is handled once. Sweep is exported so tests and operators
// can run it on demand.
func (s *Service) Sweep(ctx context.Context) error {
	now := s.now()
	expired, err := s.claims.expiring(ctx, s.db, StatusPending, now.Add(-s.cfg.SweepInterval), s.cfg.SweepBatchSize)
	if err != nil {
		return fmt.Errorf("storage: sweep: %w", err)
	}
	var errs []error
	for _, c := range expired {
		if err := s.sweepExpired(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	if s.cfg.OrphanRetention > 0 {
		errs = append(errs, s.reclaimOrphans(ctx))
	}
	return errors.Join(errs...)
}

// sweepExpired recovers or expires one pending claim.
func (s *Service) sweepExpired(ctx context.Context, c *Claim) error {
	obj, err := s.backend.Stat(ctx, c.Key)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("storage: sweep %s: %w", c.ID, err) // try again next sweep
	}
	if err == nil && obj.Size == c.Size {
		if err := s.registerUpload(ctx, c); errors.Is(err, errClaimGone) {
			return nil // another node's sweep released it, or its owner aborted it: queued already
		} else if err != nil {
			return fmt.Errorf("storage: recover %s: %w", c.ID, err)
		}
		s.log.InfoContext(ctx, "recovered a completed upload", slog.String("claim", c.ID))
		if c.UploadID != "" {
			// A backend that kept its session next to the object (a crash between the two
			// steps of completion) is tidied; a session already closed is not an error.
			if err := s.backend.AbortMultipart(ctx, c.Key, c.UploadID); err != nil {
				s.log.WarnContext(ctx, "abort session of a recovered upload", slog.String("claim", c.ID), slog.Any("error", err))
			}
		}
		return nil
	}
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		gone, err := s.claims.remove(ctx, tx, c.ID, StatusPending)
		if err != nil || !gone {
			return err
		}
		return s.queue.enqueue(ctx, tx, c.Key, c.UploadID, ReasonClaimExpired, s.now())
	})
}

// reclaimOrphans queues uploads that were completed but never adopted.
func (s *Service) reclaimOrphans(ctx context.Context) error {
	now := s.now()
	orphans, err := s.claims.expiring(ctx, s.db, StatusUploaded, now.Add(-s.cfg.OrphanRetention), s.cfg.SweepBatchSize)
	if err != nil {
		return fmt.Errorf("storage: reclaim orphans: %w", err)
	}
	var errs []error
	for _, c := range orphans {
		err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			gone, err := s.claims.remove(ctx, tx, c.ID, StatusUploaded)
			if err != nil || !gone {
				return err
			}
			return s.queue.enqueue(ctx, tx, c.Key, "", ReasonOrphaned, now)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("storage: reclaim %s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}
