package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// Backoff of failed deletes: deleteBackoffBase · 2^(attempts−1), at most deleteBackoffMax.
const (
	deleteBackoffBase = 30 * time.Second
	deleteBackoffMax  = time.Hour
)

// Error classes recorded on failed deletes and sent with EventDeleteDeadLetter.
const (
	deleteErrAccessDenied    = "access_denied"
	deleteErrBucketNotFound  = "bucket_not_found"
	deleteErrSessionNotFound = "session_not_found"
	deleteErrTransient       = "transient"
)

// ProcessDeletes is the body of the delete worker (every svc.storage.delete_worker_interval). It
// leases up to delete_batch_size due rows of the queue for delete_lease_window and works through
// them with delete_concurrency goroutines. For each row it aborts the multipart session when
// there may be one (a session id, or an aborted or expired upload), deletes the object (a
// missing object counts as deleted), then removes the row, marks the registry record deleted and
// publishes EventFileDeleted in one transaction. A failure is retried after an exponential
// backoff; the delete_max_attempts-th failure drops the row and publishes
// EventDeleteDeadLetter.
//
// The lease makes the worker safe on any number of nodes: rows are claimed with FOR UPDATE SKIP
// LOCKED and finished only by the run holding the lease. ProcessDeletes is exported so tests
// and operators can run it on demand.
func (s *Service) ProcessDeletes(ctx context.Context) error {
	token := newID()
	var rows []pendingDelete
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rows, err = s.queue.lease(ctx, s.db, tx, s.now(), s.cfg.DeleteBatchSize, s.cfg.DeleteLeaseWindow, token)
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: lease deletes: %w", err)
	}
	sem := make(chan struct{}, max(1, s.cfg.DeleteConcurrency))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, row := range rows {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.deleteOne(ctx, row); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deleteOne removes one leased row's object and records the outcome.
func (s *Service) deleteOne(ctx context.Context, row pendingDelete) error {
	if err := s.removeObject(ctx, row); err != nil {
		return s.deleteFailed(ctx, row, err)
	}
	now := s.now()
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		mine, err := s.queue.finish(ctx, tx, row.ID, row.LeaseToken)
		if err != nil || !mine {
			return err
		}
		if err := s.files.markDeleted(ctx, tx, row.ObjectKey, row.Reason, now); err != nil {
			return err
		}
		return s.publish(ctx, tx, EventFileDeleted, FileDeleted{FileKey: row.ObjectKey, Reason: row.Reason})
	})
}

// removeObject aborts the row's session when there may be one, then deletes the object.
func (s *Service) removeObject(ctx context.Context, row pendingDelete) error {
	if row.UploadID != "" || row.Reason == ReasonAborted || row.Reason == ReasonClaimExpired {
		if err := s.backend.AbortMultipart(ctx, row.ObjectKey, row.UploadID); err != nil {
			return fmt.Errorf("abort session: %w", err)
		}
	}
	if err := s.backend.Delete(ctx, row.ObjectKey); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete object: %w", err)
	}
	return nil
}

// deleteFailed schedules a retry, or dead-letters the row when its attempts are spent.
func (s *Service) deleteFailed(ctx context.Context, row pendingDelete, cause error) error {
	attempts := row.Attempts + 1
	class := classifyDeleteError(cause)
	log := s.log.With(slog.String("key", row.ObjectKey), slog.String("reason", row.Reason),
		slog.Int("attempts", attempts), slog.Any("error", cause))
	if attempts >= s.cfg.DeleteMaxAttempts {
		err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			mine, err := s.queue.finish(ctx, tx, row.ID, row.LeaseToken)
			if err != nil || !mine {
				return err
			}
			return s.publish(ctx, tx, EventDeleteDeadLetter, DeleteDeadLetter{
				PendingDeleteID: row.ID, FileKey: row.ObjectKey, Reason: row.Reason,
				Attempts: attempts, LastError: class,
			})
		})
		log.ErrorContext(ctx, "delete dead-lettered")
		return err
	}
	next := s.now().Add(deleteBackoff(attempts))
	log.WarnContext(ctx, "delete failed, will retry", slog.Time("next_attempt_at", next))
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := s.queue.retry(ctx, tx, row.ID, row.LeaseToken, attempts, next, class)
		return err
	})
}

// deleteBackoff is the wait after the attempts-th failure.
func deleteBackoff(attempts int) time.Duration {
	d := deleteBackoffBase
	for i := 1; i < attempts && d < deleteBackoffMax; i++ {
		d *= 2
	}
	return min(d, deleteBackoffMax)
}

func classifyDeleteError(err error) string {
	switch {
	case errors.Is(err, backend.ErrAccessDenied):
		return deleteErrAccessDenied
	case errors.Is(err, backend.ErrBucketNotFound):
		return deleteErrBucketNotFound
	case errors.Is(err, backend.ErrSessionNotFound):
		return deleteErrSessionNotFound
	}
	return deleteErrTransient
}
