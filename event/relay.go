package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// maxBackoff caps the relay's per-step retry delay (wire-runtime §2.4).
const maxBackoff = time.Hour

// listenRetry is how long the PostgreSQL listener waits before reconnecting after an error.
const listenRetry = 5 * time.Second

// lease is how long a claimed row stays with its relay: max(relay_interval × lease_multiplier,
// min_lease). A row whose lease expired is claimed again (a crashed relay's rows are taken over).
func (o *outboxTransport) lease() time.Duration {
	return max(o.cfg.RelayInterval*time.Duration(o.cfg.LeaseMultiplier), o.cfg.MinLease)
}

// backoff is the delay after the n-th failure: 2^n seconds, capped at one hour.
func backoff(n int) time.Duration {
	if n >= 12 { // 2^12 s > 1 h
		return maxBackoff
	}
	return min(time.Duration(1<<n)*time.Second, maxBackoff)
}

// RelayOnce claims one batch of due rows and forwards them to the sink, returning how many it
// claimed. The relay loop calls it every relay_interval and at once when woken; tests call it
// directly.
func (o *outboxTransport) RelayOnce(ctx context.Context) (int, error) {
	rows, err := o.claim(ctx)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	var done []string
	var errs []error
	for i := range rows {
		row := &rows[i]
		pctx, cancel := context.WithTimeout(ctx, o.b.cfg.PublishTimeout)
		err := o.forward(pctx, row.envelope())
		cancel()
		if err == nil {
			done = append(done, row.ID)
			continue
		}
		o.b.metrics.relayFailures.Add(1)
		if ferr := o.fail(ctx, row, err); ferr != nil {
			errs = append(errs, ferr)
		}
	}
	o.b.metrics.relayed.Add(int64(len(done)))
	if len(done) > 0 {
		now := dbTime(o.b.now())
		_, err := o.db.NewUpdate().Model((*OutboxRow)(nil)).
			Set("status = ?", OutboxCompleted).Set("processed_at = ?", now).
			Set("retry_after = NULL").Set("last_error = NULL").
			Where("id IN (?)", bun.In(done)).Where("status = ?", OutboxProcessing).Exec(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("event: outbox complete: %w", err))
		}
	}
	return len(rows), errors.Join(errs...)
}

// claim selects up to batch_size due rows — new, failed and due, or processing with an expired
// lease — oldest first, skipping rows other relays hold locked, and leases them, in one
// transaction (wire-runtime §2.4 step 1).
func (o *outboxTransport) claim(ctx context.Context) ([]OutboxRow, error) {
	var rows []OutboxRow
	now := dbTime(o.b.now())
	until := dbTime(now.Add(o.lease()))
	err := o.db.RunInTx(ctx, txOptions(o.db), func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model(&rows).
			Where("(status = ? AND retry_after IS NULL)", OutboxPending).
			WhereOr("(status = ? AND retry_count < ? AND retry_after <= ?)", OutboxFailed, o.cfg.MaxRetries, now).
			WhereOr("(status = ? AND retry_count < ? AND retry_after <= ?)", OutboxProcessing, o.cfg.MaxRetries, now).
			OrderExpr("created_at, id").Limit(int64(o.cfg.BatchSize))
		if err := o.db.ForUpdateSkipLocked(q).Scan(ctx); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, len(rows))
		for i := range rows {
			ids[i] = rows[i].ID
		}
		_, err := tx.NewUpdate().Model((*OutboxRow)(nil)).
			Set("status = ?", OutboxProcessing).Set("retry_after = ?", until).
			Where("id IN (?)", bun.In(ids)).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("event: outbox claim: %w", err)
	}
	return rows, nil
}

// fail records a failed forward (wire-runtime §2.4 step 3): the count goes up and the row waits
// 2^count s (capped at 1 h); at max_retries the event is forwarded once to svc-dlq.<type> with
// the svc.dlq header and the row becomes dead, or, if that forward fails too, stays failed with
// its old count so it is claimed again.
func (o *outboxTransport) fail(ctx context.Context, row *OutboxRow, cause error) error {
	now := dbTime(o.b.now())
	n := row.RetryCount + 1
	status, count := OutboxFailed, n
	var processed any
	lastErr := cleanError(cause.Error())
	if n >= o.cfg.MaxRetries {
		if dlqErr := o.deadLetter(ctx, row); dlqErr != nil {
			count = row.RetryCount
			lastErr = cleanError(cause.Error() + "; dead letter: " + dlqErr.Error())
		} else {
			status, processed = OutboxDead, now
			o.b.metrics.deadLettered.Add(1)
		}
	}
	q := o.db.NewUpdate().Model((*OutboxRow)(nil)).
		Set("status = ?", status).Set("retry_count = ?", count).Set("last_error = ?", lastErr).
		Where("id = ?", row.ID).Where("status = ?", OutboxProcessing)
	if status == OutboxDead {
		q = q.Set("processed_at = ?", processed).Set("retry_after = NULL")
	} else {
		q = q.Set("retry_after = ?", dbTime(now.Add(backoff(n))))
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("event: outbox record failure of %s: %w", row.EventID, err)
	}
	o.b.log.Warn("event: outbox forward failed", "type", row.EventType, "id", row.EventID, "attempt", n, "status", status, "err", lastErr)
	return nil
}

// deadLetter forwards row to svc-dlq.<type> on the sink, marked with the svc.dlq header.
func (o *outboxTransport) deadLetter(ctx context.Context, row *OutboxRow) error {
	env := row.envelope()
	env.Type = DeadLetterPrefix + row.EventType
	env.Payload = RawPayload{Type: env.Type, Body: env.Payload.(RawPayload).Body}
	env.Headers = cloneHeaders(env.Headers, HeaderDeadLetter, "1")
	ctx, cancel := context.WithTimeout(ctx, o.b.cfg.PublishTimeout)
	defer cancel()
	return o.forward(ctx, env)
}

// forward hands env to the sink: an in-process sink runs its handlers now (the row completes
// only once they succeeded), a stream sink appends it.
func (o *outboxTransport) forward(ctx context.Context, env *Envelope) error {
	if m, ok := o.sink.(*memoryTransport); ok {
		return m.deliverNow(ctx, env)
	}
	return o.sink.publish(ctx, env)
}

// Cleanup deletes completed rows processed more than completed_ttl ago; dead rows are kept.
func (o *outboxTransport) Cleanup(ctx context.Context) (int64, error) {
	cutoff := dbTime(o.b.now().Add(-o.cfg.CompletedTTL))
	res, err := o.db.NewDelete().Model((*OutboxRow)(nil)).
		Where("status = ?", OutboxCompleted).Where("processed_at < ?", cutoff).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("event: outbox cleanup: %w", err)
	}
	return res.RowsAffected()
}

// relayLoop runs RelayOnce every relay_interval, at once when woken (a local commit or a
// PostgreSQL notification), and again without waiting while batches come back full.
func (o *outboxTransport) relayLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-o.wake:
		}
		for {
			// A batch in flight finishes even when Stop cancels ctx: its rows would otherwise
			// wait for their lease to expire.
			n, err := o.RelayOnce(context.WithoutCancel(ctx))
			if err != nil && ctx.Err() == nil {
				o.b.log.Error("event: outbox relay", "err", err)
			}
			if n < o.cfg.BatchSize || err != nil || ctx.Err() != nil {
				break
			}
		}
		timer.Reset(o.cfg.RelayInterval)
	}
}

// listen wakes the relay on NOTIFY of other nodes' (and this node's) commits (PostgreSQL only).
// It holds one pooled connection; on error it retries after listenRetry.
func (o *outboxTransport) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := o.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		o.b.log.Warn("event: outbox listener", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

func (o *outboxTransport) listenOnce(ctx context.Context) error {
	conn, err := o.db.DB.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection %T is not pgx", dc)
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, `LISTEN "`+o.channel+`"`); err != nil {
			return err
		}
		defer func() { _, _ = pc.Exec(context.WithoutCancel(ctx), `UNLISTEN "`+o.channel+`"`) }()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			if n.Payload != o.node { // our own commits woke us already
				select {
				case o.wake <- struct{}{}:
				default:
				}
			}
		}
	})
}

// announce sends one NOTIFY per batch of local commits (PostgreSQL only), outside any
// transaction, so the relays of the other nodes wake within milliseconds of a commit here.
func (o *outboxTransport) announce(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.tell:
		}
		if _, err := o.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", o.channel, o.node); err != nil && ctx.Err() == nil {
			o.b.log.Warn("event: outbox notify", "err", err)
		}
	}
}

// startWorkers starts the outbox relay, listener and cleanup, the inbox cleanup and the stream
// workers, all ended by ctx.
func (b *Bus) startWorkers(ctx context.Context) {
	if o := b.outbox; o != nil {
		o.wg.Go(func() { o.relayLoop(ctx) })
		if o.db.Kind == config.Postgres {
			o.wg.Go(func() { o.listen(ctx) })
			o.wg.Go(func() { o.announce(ctx) })
		}
		b.every(ctx, o.cfg.CleanupInterval, "outbox cleanup", func(ctx context.Context) error {
			_, err := o.Cleanup(ctx)
			return err
		})
	}
	if b.inbox != nil {
		b.every(ctx, b.cfg.Inbox.CleanupInterval, "inbox cleanup", func(ctx context.Context) error {
			_, err := b.inbox.cleanup(ctx, dbTime(b.now().Add(-b.cfg.Inbox.Retention)))
			return err
		})
	}
	b.startStreamWorkers(ctx)
}

// every runs fn each interval until ctx ends, logging errors.
func (b *Bus) every(ctx context.Context, interval time.Duration, name string, fn func(context.Context) error) {
	b.workers.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := fn(ctx); err != nil && ctx.Err() == nil {
					b.log.Error("event: "+name, "err", err)
				}
			}
		}
	})
}
