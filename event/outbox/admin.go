package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/svc-framework/svc/event"
)

var _ event.DeadLetterAdmin = (*Transport)(nil)

// Replay implements event.DeadLetterAdmin. The one conditional UPDATE … WHERE status = 'dead'
// is the claim: it sets the row processing with a fresh count and the relay's lease, so of two
// replays racing only one forwards, and the relay (which claims no dead row, and no processing
// row before its lease expires) does not forward it too. The forward and its record are the
// relay's own (forwardRows): on success the row is completed, on failure it is failed with
// count 1 and the relay retries it after its back-off (dead again at once when max_retries is
// 1). A replay that dies mid-way leaves the row leased; any relay takes it over when the lease
// expires (at-least-once, as after a relay crash).
func (o *Transport) Replay(ctx context.Context, id string) (event.ReplayResult, error) {
	now := event.DBTime(o.now())
	res, err := o.db.NewUpdate().Model((*event.OutboxRow)(nil)).
		Set("status = ?", event.OutboxProcessing).Set("retry_count = 0").
		Set("retry_after = ?", event.DBTime(now.Add(o.lease()))).Set("processed_at = NULL").
		Where("id = ?", id).Where("status = ?", event.OutboxDead).Exec(ctx)
	if err != nil {
		return event.ReplayResult{}, fmt.Errorf("event: outbox replay %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return event.ReplayResult{}, fmt.Errorf("event: outbox replay %s: %w", id, err)
	}
	row, err := event.LoadOutboxRow(ctx, o.db, id)
	if err != nil || n == 0 {
		return event.ReplayResult{Outcome: event.ReplayNotDead, Row: row}, err
	}
	if row.Status != event.OutboxProcessing { // another statement changed it between the two
		return event.ReplayResult{Outcome: event.ReplayNotDead, Row: row}, nil
	}
	done, ferr := o.forwardRows(ctx, o.db, []event.OutboxRow{row}, nil)
	err = errors.Join(ferr, o.complete(ctx, o.db, done))
	if err != nil {
		return event.ReplayResult{}, err
	}
	o.log.Info("event: outbox dead letter replayed", "type", row.EventType, "id", row.EventID, "delivered", len(done) == 1)
	if row, err = event.LoadOutboxRow(ctx, o.db, id); err != nil {
		return event.ReplayResult{}, err
	}
	out := event.ReplayResult{Outcome: event.ReplayFailed, Row: row}
	if len(done) == 1 {
		out.Outcome = event.ReplayDelivered
	}
	return out, nil
}

// Discard implements event.DeadLetterAdmin: DELETE … WHERE status = 'dead'.
func (o *Transport) Discard(ctx context.Context, id string) (bool, error) {
	res, err := o.db.NewDelete().Model((*event.OutboxRow)(nil)).
		Where("id = ?", id).Where("status = ?", event.OutboxDead).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("event: outbox discard %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
