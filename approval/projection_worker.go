package approval

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// EventInstanceBindingFailed is published, outside any transaction, each time the eventual
// worker fails to apply a projection (wire-approval §10).
const EventInstanceBindingFailed = "approval.instance.binding_failed"

// BindingFailedEvent is the payload of approval.instance.binding_failed: the owner instance's
// InstanceEventBase plus the trigger (started, completed, returned, withdrawn, resubmitted), the
// desired status, the business table and the error.
type BindingFailedEvent struct {
	InstanceEvent
	Trigger       string `json:"trigger"`
	Status        string `json:"status"`
	BusinessTable string `json:"businessTable"`
	ErrorMessage  string `json:"errorMessage"`
}

// projectionLease is how long a claim keeps a projection from the other workers; a worker that
// dies after claiming leaves the row to the next scan after the lease.
const projectionLease = time.Minute

// Backoff of failed applies: 1 s doubling per attempt, at most 1 h.
const (
	projectionBackoffMin = time.Second
	projectionBackoffMax = time.Hour
)

// backoff is the delay before attempt n+1 after n failed attempts (n ≥ 1).
func backoff(n int) time.Duration {
	d := projectionBackoffMin
	for i := 1; i < n && d < projectionBackoffMax; i++ {
		d *= 2
	}
	return min(d, projectionBackoffMax)
}

// ScanProjections is the eventual worker's scan (every svc.approval.business_binding.scan_interval
// on every node): it claims up to batch_size due projections and applies the latest revision of
// each in its own transaction; a failure is recorded with backoff and published as
// approval.instance.binding_failed. It returns how many projections it applied.
func (s *Service) ScanProjections(ctx context.Context) (int, error) {
	ids, err := s.ClaimProjections(ctx)
	if err != nil {
		return 0, err
	}
	applied := 0
	for _, id := range ids {
		ok, err := s.ApplyProjection(ctx, id)
		if err != nil {
			s.projectionFailed(ctx, id, err)
			continue
		}
		if ok {
			applied++
		}
	}
	return applied, nil
}

// dueWhere is the condition of a projection a worker may claim (args: dueArgs): pending or
// failed with its next attempt due, or processing with its lease run out.
const dueWhere = "((status IN (?) AND (next_attempt_at IS NULL OR next_attempt_at <= ?)) OR (status = ? AND lease_until <= ?))"

func dueArgs(now crud.Time) []any {
	return []any{bun.List([]string{ProjectionPending, ProjectionFailed}), now, ProjectionProcessing, now}
}

// ClaimProjections leases up to batch_size due projections to this worker and returns their ids:
// FOR UPDATE SKIP LOCKED on PostgreSQL and MySQL so concurrent workers take disjoint rows, and a
// conditional UPDATE (status processing, lease_until = now + 1 min) on every dialect — on SQLite
// the write lock serialises the claims.
func (s *Service) ClaimProjections(ctx context.Context) ([]string, error) {
	now := crud.NewTime(s.clock())
	var ids []string
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model((*Projection)(nil)).Column("id").Where(dueWhere, dueArgs(now)...).
			OrderExpr("next_attempt_at").Limit(int64(s.cfg.BusinessBinding.BatchSize))
		q = s.db.ForUpdateSkipLocked(q)
		if err := q.Scan(ctx, &ids); err != nil || len(ids) == 0 {
			return err
		}
		u := tx.NewUpdate().Model((*Projection)(nil)).Set("status = ?", ProjectionProcessing).
			Set("lease_until = ?", crud.NewTime(now.Add(projectionLease))).Set("updated_at = ?", now).
			Where("id IN (?)", bun.List(ids)).Where(dueWhere, dueArgs(now)...)
		_, err := u.Exec(ctx)
		return err
	})
	return ids, err
}

// lockProjection reads projection id for update (SQLite: under the write lock).
func (s *Service) lockProjection(ctx context.Context, tx bun.IDB, id string) (*Projection, error) {
	p := new(Projection)
	if err := s.db.ForUpdate(tx.NewSelect().Model(p).Where("id = ?", id)).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrBindingProjectionNotFound
		}
		return nil, err
	}
	return p, nil
}

// ApplyProjection applies projection id's latest desired revision in one transaction with the
// row locked: nothing when that revision is applied already (another worker, or a worker whose
// lease ran out, got there first — each revision is written once), else the CAS-fenced UPDATE and
// the applied revision, owner and time. It reports whether it wrote the business record; an
// error leaves the row as it was.
func (s *Service) ApplyProjection(ctx context.Context, id string) (bool, error) {
	applied := false
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		p, err := s.lockProjection(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.clock().UTC()
		p.UpdatedAt, p.UpdatedBy = crud.NewTime(now), systemOperator.ID
		if p.AppliedRevision >= p.DesiredRevision {
			if p.Status == ProjectionApplied {
				return nil
			}
			p.Status, p.LeaseUntil, p.NextAttemptAt = ProjectionApplied, crud.Time{}, crud.Time{}
		} else {
			if err := applyProjection(ctx, tx, p, now); err != nil {
				return err
			}
			applied = true
		}
		_, err = tx.NewUpdate().Model(p).Column(projectionState...).WherePK().Exec(ctx)
		return err
	})
	return applied, err
}

// projectionFailed records a failed apply of projection id: attempt_count + 1, status failed,
// the next attempt after the backoff, the error; then publishes approval.instance.binding_failed
// (not transactional). Nothing is recorded when the revision got applied meanwhile.
func (s *Service) projectionFailed(ctx context.Context, id string, cause error) {
	var p *Projection
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if p, err = s.lockProjection(ctx, tx, id); err != nil || p.AppliedRevision >= p.DesiredRevision {
			p = nil
			return err
		}
		now := s.clock().UTC()
		msg := cause.Error()
		p.AttemptCount++
		p.Status, p.NextAttemptAt, p.LeaseUntil, p.LastError = ProjectionFailed, crud.NewTime(now.Add(backoff(p.AttemptCount))), crud.Time{}, &msg
		p.UpdatedAt, p.UpdatedBy = crud.NewTime(now), systemOperator.ID
		_, err = tx.NewUpdate().Model(p).Column("attempt_count", "status", "next_attempt_at", "lease_until", "last_error",
			"updated_at", "updated_by").WherePK().Exec(ctx)
		return err
	})
	s.log.Warn("approval binding apply failed", slog.String("projection", id), slog.Any("error", cause))
	if err != nil {
		s.log.Error("approval binding failure not recorded", slog.String("projection", id), slog.Any("error", err))
	}
	if p != nil {
		s.publishBindingFailed(ctx, p, cause)
	}
}

// publishBindingFailed publishes approval.instance.binding_failed for p's owner instance.
func (s *Service) publishBindingFailed(ctx context.Context, p *Projection, cause error) {
	inst := new(Instance)
	if err := s.db.NewSelect().Model(inst).Where("id = ?", p.OwnerInstanceID).Scan(ctx); err != nil {
		s.log.Error("approval binding_failed: owner instance", slog.String("instance", p.OwnerInstanceID), slog.Any("error", err))
		return
	}
	e := BindingFailedEvent{InstanceEvent: inst.event(s.clock().UTC()), Trigger: s.bindingTrigger(ctx, p), Status: p.DesiredStatus,
		BusinessTable: p.Binding.TableName, ErrorMessage: cause.Error()}
	if err := s.events.Publish(ctx, event.Named{Type: EventInstanceBindingFailed, Payload: e}); err != nil {
		s.log.Error("approval binding_failed publish", slog.String("instance", inst.ID), slog.Any("error", err))
	}
}

// bindingTrigger is the BindingTrigger of p's desired status (triggerOf), running counting as
// resubmitted when the owner has been resubmitted.
func (s *Service) bindingTrigger(ctx context.Context, p *Projection) string {
	resubmitted := false
	if p.DesiredStatus == InstanceRunning {
		n, err := s.db.NewSelect().Model((*ActionLog)(nil)).Where("instance_id = ?", p.OwnerInstanceID).
			Where("action = ?", ActionResubmit).Count(ctx)
		resubmitted = err == nil && n > 0
	}
	return triggerOf(p.DesiredStatus, resubmitted)
}

// triggerOf is the BindingTrigger of a desired status: completed for a final status, returned,
// withdrawn, and for running resubmitted or started.
func triggerOf(status string, resubmitted bool) string {
	switch status {
	case InstanceReturned, InstanceWithdrawn:
		return status
	case InstanceRunning:
		if resubmitted {
			return "resubmitted"
		}
		return "started"
	}
	return "completed"
}
