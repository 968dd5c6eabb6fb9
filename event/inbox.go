package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/id"
	"github.com/uptrace/bun"
)

// Inbox row statuses (wire-runtime §2.5).
const (
	InboxProcessing = "processing"
	InboxCompleted  = "completed"
)

// InboxRow is one row of sys_event_inbox.
type InboxRow struct {
	bun.BaseModel `bun:"table:sys_event_inbox"`

	ID            string    `bun:"id,pk"`
	CreatedAt     time.Time `bun:"created_at"`
	EventID       string    `bun:"event_id"`
	ConsumerGroup string    `bun:"consumer_group"`
	Status        string    `bun:"status"`
	LockID        string    `bun:"lock_id,nullzero"`
	LockedUntil   time.Time `bun:"locked_until,nullzero"`
	CompletedAt   time.Time `bun:"completed_at,nullzero"`
}

// acquireResult is the inbox's answer for one delivery.
type acquireResult int

const (
	// acquired: this delivery holds the lease and runs the handler.
	acquired acquireResult = iota
	// alreadyCompleted: a delivery of this group already handled the event; skip and ack.
	alreadyCompleted
	// inProgress: another delivery holds an unexpired lease; redeliver later.
	inProgress
)

// inboxStore is the consumer-side deduplication store over sys_event_inbox.
type inboxStore struct {
	db *db.DB
}

// acquire takes the processing lease of (group, eventID) until `until`: a new row, or an
// existing processing row whose lease expired (a crashed consumer's), is acquired with a fresh
// lock id; a completed row or a live lease is reported as such.
func (s *inboxStore) acquire(ctx context.Context, group, eventID string, now, until time.Time) (acquireResult, string, error) {
	lockID := id.New()
	row := &InboxRow{ID: id.New(), CreatedAt: DBTime(now), EventID: eventID, ConsumerGroup: group,
		Status: InboxProcessing, LockID: lockID, LockedUntil: DBTime(until)}
	_, err := s.db.NewInsert().Model(row).Returning("NULL").Exec(ctx) // one round trip: see the insert of event/outbox
	if err == nil {
		return acquired, lockID, nil
	}
	if !db.IsUniqueViolation(err) {
		return 0, "", fmt.Errorf("event: inbox acquire %s/%s: %w", group, eventID, err)
	}
	res, err := s.db.NewUpdate().Model((*InboxRow)(nil)).
		Set("lock_id = ?", lockID).Set("locked_until = ?", DBTime(until)).
		Where("consumer_group = ?", group).Where("event_id = ?", eventID).
		Where("status = ?", InboxProcessing).
		Where("(locked_until IS NULL OR locked_until <= ?)", DBTime(now)).Exec(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("event: inbox take over %s/%s: %w", group, eventID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return acquired, lockID, nil
	}
	var status string
	err = s.db.NewSelect().Model((*InboxRow)(nil)).Column("status").
		Where("consumer_group = ?", group).Where("event_id = ?", eventID).Scan(ctx, &status)
	switch {
	case err != nil:
		return 0, "", fmt.Errorf("event: inbox read %s/%s: %w", group, eventID, err)
	case status == InboxCompleted:
		return alreadyCompleted, "", nil
	default:
		return inProgress, "", nil
	}
}

// complete marks the event handled; false means the lease was lost to another delivery.
func (s *inboxStore) complete(ctx context.Context, group, eventID, lockID string, now time.Time) (bool, error) {
	res, err := s.db.NewUpdate().Model((*InboxRow)(nil)).
		Set("status = ?", InboxCompleted).Set("completed_at = ?", DBTime(now)).
		Set("lock_id = NULL").Set("locked_until = NULL").
		Where("consumer_group = ?", group).Where("event_id = ?", eventID).Where("lock_id = ?", lockID).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("event: inbox complete %s/%s: %w", group, eventID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// release gives the lease back after a failed handler so the next delivery runs at once.
func (s *inboxStore) release(ctx context.Context, group, eventID, lockID string) error {
	_, err := s.db.NewDelete().Model((*InboxRow)(nil)).
		Where("consumer_group = ?", group).Where("event_id = ?", eventID).
		Where("lock_id = ?", lockID).Where("status = ?", InboxProcessing).Exec(ctx)
	if err != nil {
		return fmt.Errorf("event: inbox release %s/%s: %w", group, eventID, err)
	}
	return nil
}

// cleanup deletes completed rows completed before cutoff.
func (s *inboxStore) cleanup(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*InboxRow)(nil)).
		Where("status = ?", InboxCompleted).Where("completed_at < ?", cutoff).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("event: inbox cleanup: %w", err)
	}
	return res.RowsAffected()
}

// inboxMiddleware runs h at most once per (group, event id) (wire-runtime §2.5): acquired → run
// and mark completed (failure or panic → release); completed → skip (the transport acks);
// in progress → ErrInboxInProgress so the transport redelivers later. A lease lost after a
// successful handler is logged and treated as done.
func (b *Bus) inboxMiddleware(h Handler, group string) Handler {
	return func(ctx context.Context, env *Envelope) (err error) {
		now := b.now()
		res, lockID, err := b.inbox.acquire(ctx, group, env.ID, now, now.Add(b.cfg.Inbox.ProcessingLease))
		if err != nil {
			return err
		}
		switch res {
		case alreadyCompleted:
			return nil
		case inProgress:
			return fmt.Errorf("%s %s group %s: %w", env.Type, env.ID, group, ErrInboxInProgress)
		}
		defer func() {
			if r := recover(); r != nil {
				_ = b.inbox.release(context.WithoutCancel(ctx), group, env.ID, lockID)
				panic(r)
			}
		}()
		if err := h(ctx, env); err != nil {
			if rerr := b.inbox.release(context.WithoutCancel(ctx), group, env.ID, lockID); rerr != nil {
				return errors.Join(err, rerr)
			}
			return err
		}
		ok, err := b.inbox.complete(context.WithoutCancel(ctx), group, env.ID, lockID, b.now())
		if err != nil {
			return err
		}
		if !ok {
			b.log.Warn("event: inbox lease lost after the handler succeeded; treated as done", "type", env.Type, "id", env.ID, "group", group)
		}
		return nil
	}
}

// cleanupInbox is the body of the inbox.cleanup worker: it deletes the completed rows older
// than inbox.retention.
func (b *Bus) cleanupInbox(ctx context.Context) error {
	_, err := b.inbox.cleanup(ctx, DBTime(b.now().Add(-b.cfg.Inbox.Retention)))
	return err
}
