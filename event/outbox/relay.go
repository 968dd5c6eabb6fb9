package outbox

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// maxBackoff caps the relay's per-step retry delay (wire-runtime §2.4).
const maxBackoff = time.Hour

// announceGap is the least time between two NOTIFYs of one node's announcer.
const announceGap = 10 * time.Millisecond

// lease is how long a claimed row stays with its relay: max(relay_interval × lease_multiplier,
// min_lease). A row whose lease expired is claimed again (a crashed relay's rows are taken over).
func (o *Transport) lease() time.Duration {
	return max(o.cfg.RelayInterval*time.Duration(o.cfg.LeaseMultiplier), o.cfg.MinLease)
}

// backoff is the delay after the n-th failure: 2^n seconds, capped at one hour.
func backoff(n int) time.Duration {
	if n >= 12 { // 2^12 s > 1 h
		return maxBackoff
	}
	return min(time.Duration(1<<n)*time.Second, maxBackoff)
}

// RelayOnce claims one batch of due rows, forwards them to the sink and marks the forwarded
// ones completed, returning how many it claimed. Tests call it directly; the relay loop uses
// relayBatch, which defers the completion to its next claim.
func (o *Transport) RelayOnce(ctx context.Context) (int, error) {
	n, done, err := o.relayBatch(ctx, o.db, nil)
	return n, errors.Join(err, o.complete(ctx, o.db, done))
}

// relayBatch marks prev completed, claims a batch and forwards it (wire-runtime §2.4 steps 1–3),
// returning the number claimed and the ids forwarded, which the caller completes (with its next
// claim, or by complete). When the claim fails, prev is returned as still to complete.
func (o *Transport) relayBatch(ctx context.Context, idb bun.IDB, prev []string) (int, []string, error) {
	rows, err := o.claimAfter(ctx, idb, prev)
	if err != nil {
		return 0, prev, err
	}
	done, err := o.forwardRows(ctx, idb, rows, nil)
	return len(rows), done, err
}

// forwardRows forwards rows, leased to this relay, to the sink (steps 2–3), appending the ids
// forwarded to done and recording each failure.
func (o *Transport) forwardRows(ctx context.Context, idb bun.IDB, rows []event.OutboxRow, done []string) ([]string, error) {
	var errs []error
	forwarded := 0
	for i := range rows {
		row := &rows[i]
		pctx, cancel := context.WithTimeout(ctx, o.publishTimeout)
		err := o.forward(pctx, envelope(row))
		cancel()
		if err == nil {
			done = append(done, row.ID)
			forwarded++
			continue
		}
		o.metrics.CountRelayFailure()
		if ferr := o.fail(ctx, idb, row, err); ferr != nil {
			errs = append(errs, ferr)
		}
	}
	o.metrics.CountRelayed(int64(forwarded))
	return done, errors.Join(errs...)
}

// completeQuery marks the rows done (still processing: a row whose lease was taken over is left
// to its new relay) completed.
func (o *Transport) completeQuery(idb bun.IDB, done []string) *bun.UpdateQuery {
	return idb.NewUpdate().Model((*event.OutboxRow)(nil)).
		Set("status = ?", event.OutboxCompleted).Set("processed_at = ?", event.DBTime(o.now())).
		Set("retry_after = NULL").Set("last_error = NULL").
		Where("id IN (?)", bun.List(done)).Where("status = ?", event.OutboxProcessing)
}

// complete marks done completed in one statement.
func (o *Transport) complete(ctx context.Context, idb bun.IDB, done []string) error {
	if len(done) == 0 {
		return nil
	}
	if _, err := o.completeQuery(idb, done).Exec(ctx); err != nil {
		return fmt.Errorf("event: outbox complete: %w", err)
	}
	return nil
}

// claim leases the next batch of due rows (tests use it to play a relay that crashes after
// claiming).
func (o *Transport) claim(ctx context.Context) ([]event.OutboxRow, error) {
	return o.claimAfter(ctx, o.db, nil)
}

// claimAfter marks done completed and leases up to batch_size due rows — new, failed and due,
// or processing with an expired lease — oldest first, skipping rows other relays hold locked
// (wire-runtime §2.4 step 1). On PostgreSQL both are one statement, so a relay under load
// spends one round trip and one commit per batch; MySQL (no UPDATE … RETURNING) and SQLite
// complete, then select and update in a transaction.
func (o *Transport) claimAfter(ctx context.Context, idb bun.IDB, done []string) ([]event.OutboxRow, error) {
	var rows []event.OutboxRow
	var err error
	if o.db.UpdateReturning() {
		rows, err = o.claimReturning(ctx, idb, done)
	} else if err = o.complete(ctx, idb, done); err == nil {
		rows, err = o.claimInTx(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("event: outbox claim: %w", err)
	}
	return rows, nil
}

// due restricts q to the rows a relay may claim now, oldest first, at most batch_size.
func (o *Transport) due(q *bun.SelectQuery, now time.Time) *bun.SelectQuery {
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("(status = ? AND retry_after IS NULL)", event.OutboxPending).
			WhereOr("(status = ? AND retry_count < ? AND retry_after <= ?)", event.OutboxFailed, o.cfg.MaxRetries, now).
			WhereOr("(status = ? AND retry_count < ? AND retry_after <= ?)", event.OutboxProcessing, o.cfg.MaxRetries, now)
	}).OrderExpr("created_at, id").Limit(int64(o.cfg.BatchSize))
}

// leaseQuery sets the claimed rows' status and lease.
func (o *Transport) leaseQuery(idb bun.IDB, now time.Time) *bun.UpdateQuery {
	return idb.NewUpdate().Model((*event.OutboxRow)(nil)).
		Set("status = ?", event.OutboxProcessing).Set("retry_after = ?", event.DBTime(now.Add(o.lease())))
}

// outboxColumns are the columns of OutboxRow, for RETURNING.
const outboxColumns = "id, created_at, event_id, event_type, source, trace_id, span_id, correlation_id, headers, " +
	"payload, status, retry_count, last_error, processed_at, retry_after, occurred_at"

// claimReturning is claimAfter on PostgreSQL: WITH done AS (UPDATE … completed) UPDATE … SET
// processing WHERE id = ANY(ARRAY(SELECT … FOR UPDATE SKIP LOCKED)) RETURNING … (ANY(ARRAY())
// keeps the outer update on the primary key; IN (SELECT) lets the planner hash-join a scan of
// the whole table, completed rows included). The ids being completed
// are excluded from the claim (one statement must not update a row twice).
func (o *Transport) claimReturning(ctx context.Context, idb bun.IDB, done []string) ([]event.OutboxRow, error) {
	now := event.DBTime(o.now())
	sub := o.due(idb.NewSelect().Model((*event.OutboxRow)(nil)).Column("id"), now)
	q := o.leaseQuery(idb, now)
	if len(done) > 0 {
		sub = sub.Where("id NOT IN (?)", bun.List(done))
		q = q.With("done", o.completeQuery(idb, done))
	}
	var rows []event.OutboxRow
	err := q.Where("id = ANY(ARRAY(?))", o.db.ForUpdateSkipLocked(sub)).Returning(outboxColumns).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b event.OutboxRow) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return rows, nil
}

// claimInTx is claimAfter on MySQL/MariaDB (FOR UPDATE SKIP LOCKED) and SQLite (an immediate
// transaction): select the due rows, then lease them, in one transaction.
func (o *Transport) claimInTx(ctx context.Context) ([]event.OutboxRow, error) {
	var rows []event.OutboxRow
	now := event.DBTime(o.now())
	err := o.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := o.db.ForUpdateSkipLocked(o.due(tx.NewSelect().Model(&rows), now)).Scan(ctx); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, len(rows))
		for i := range rows {
			ids[i] = rows[i].ID
		}
		_, err := o.leaseQuery(tx, now).Where("id IN (?)", bun.List(ids)).Exec(ctx)
		return err
	})
	return rows, err
}

// fail records a failed forward (wire-runtime §2.4 step 3): the count goes up and the row waits
// 2^count s (capped at 1 h); at max_retries the event is forwarded once to svc-dlq.<type> with
// the svc.dlq header and the row becomes dead, or, if that forward fails too, stays failed with
// its old count so it is claimed again.
func (o *Transport) fail(ctx context.Context, idb bun.IDB, row *event.OutboxRow, cause error) error {
	now := event.DBTime(o.now())
	n := row.RetryCount + 1
	status, count := event.OutboxFailed, n
	var processed any
	lastErr := cleanError(cause.Error())
	if n >= o.cfg.MaxRetries {
		if dlqErr := o.deadLetter(ctx, row); dlqErr != nil {
			count = row.RetryCount
			lastErr = cleanError(cause.Error() + "; dead letter: " + dlqErr.Error())
		} else {
			status, processed = event.OutboxDead, now
			o.metrics.CountDeadLettered()
		}
	}
	q := idb.NewUpdate().Model((*event.OutboxRow)(nil)).
		Set("status = ?", status).Set("retry_count = ?", count).Set("last_error = ?", lastErr).
		Where("id = ?", row.ID).Where("status = ?", event.OutboxProcessing)
	if status == event.OutboxDead {
		q = q.Set("processed_at = ?", processed).Set("retry_after = NULL")
	} else {
		q = q.Set("retry_after = ?", event.DBTime(now.Add(backoff(n))))
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("event: outbox record failure of %s: %w", row.EventID, err)
	}
	o.log.Warn("event: outbox forward failed", "type", row.EventType, "id", row.EventID, "attempt", n, "status", status, "err", lastErr)
	return nil
}

// deadLetter forwards row to svc-dlq.<type> on the sink, marked with the svc.dlq header.
func (o *Transport) deadLetter(ctx context.Context, row *event.OutboxRow) error {
	env := envelope(row)
	env.Type = event.DeadLetterPrefix + row.EventType
	env.Payload = event.RawPayload{Type: env.Type, Body: env.Payload.(event.RawPayload).Body}
	env.Headers = event.CloneHeaders(env.Headers, event.HeaderDeadLetter, "1")
	ctx, cancel := context.WithTimeout(ctx, o.publishTimeout)
	defer cancel()
	return o.forward(ctx, env)
}

// forward hands env to the sink: an in-process sink runs its handlers now (the row completes
// only once they succeeded), a stream sink appends it.
func (o *Transport) forward(ctx context.Context, env *event.Envelope) error {
	if d, ok := o.sink.(event.Deliverer); ok {
		return d.DeliverNow(ctx, env)
	}
	return o.sink.Publish(ctx, env)
}

// Cleanup deletes completed rows processed more than completed_ttl ago; dead rows are kept.
func (o *Transport) Cleanup(ctx context.Context) (int64, error) {
	cutoff := event.DBTime(o.now().Add(-o.cfg.CompletedTTL))
	res, err := o.db.NewDelete().Model((*event.OutboxRow)(nil)).
		Where("status = ?", event.OutboxCompleted).Where("processed_at < ?", cutoff).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("event: outbox cleanup: %w", err)
	}
	return res.RowsAffected()
}

// relayLoop is the body of the relay worker, a loop until ctx ends: it relays at once, then every
// relay_interval and at once when woken (a local commit or a PostgreSQL notification), and keeps
// claiming while batches come back non-empty; each claim also completes the batch before it.
// While it runs, PublishTx hands this node's rows over to it; when ctx ends it closes the
// hand-over and gives back the rows still waiting in it.
func (o *Transport) relayLoop(ctx context.Context) error {
	o.local.Store(true) // cleared below before the hand-over is released
	timer := time.NewTimer(0)
	defer timer.Stop()
	sess := &relaySession{o: o}
	defer sess.drop()
	for {
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-o.wake:
		}
		if ctx.Err() != nil { // stopping wins over a pending wake-up
			o.local.Store(false)
			o.releaseHanded(context.WithoutCancel(ctx), sess)
			return nil
		}
		o.drain(ctx, sess)
		timer.Reset(o.cfg.RelayInterval)
	}
}

// releaseHanded gives the rows still waiting in the hand-over back to every relay (pending, no
// lease) when the relay stops, so a restarted or another node relays them at once rather than
// after their lease. A row handed over after this (a commit racing the stop) or not released (an
// error) is taken over when its lease expires.
func (o *Transport) releaseHanded(ctx context.Context, sess *relaySession) {
	o.handMu.Lock()
	rows := o.handed
	o.handed = nil
	o.handMu.Unlock()
	if len(rows) == 0 {
		return
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	idb, err := sess.get(ctx)
	if err == nil {
		_, err = idb.NewUpdate().Model((*event.OutboxRow)(nil)).
			Set("status = ?", event.OutboxPending).Set("retry_after = NULL").
			Where("id IN (?)", bun.List(ids)).Where("status = ?", event.OutboxProcessing).Exec(ctx)
	}
	if err != nil {
		o.log.Warn("event: outbox relay: handed-over rows not released; their lease will expire", "rows", len(ids), "err", err)
		return
	}
	o.notify()
}

// drain relays batches until one comes back empty or ctx ends, then completes what is left.
// Each round forwards a batch of the rows handed over by local commits, then completes the
// forwarded rows and claims due ones in one claim (on PostgreSQL one statement). A batch in
// flight finishes even when Stop cancels ctx: its rows would otherwise wait for their lease to
// expire. The relay's statements go through sess.
func (o *Transport) drain(ctx context.Context, sess *relaySession) {
	run := context.WithoutCancel(ctx)
	var done []string
	for {
		idb, err := sess.get(run)
		n := 0
		if err == nil {
			var ferr error
			done, ferr = o.forwardRows(run, idb, o.takeHanded(), done)
			n, done, err = o.relayBatch(run, idb, done)
			err = errors.Join(ferr, err)
			if n == 0 && o.hasHanded() { // more commits came in while this round ran
				n = 1
			}
		}
		if err != nil {
			sess.drop()
			if ctx.Err() == nil {
				o.log.Error("event: outbox relay", "err", err)
			}
		}
		if n == 0 || ctx.Err() != nil {
			break
		}
	}
	idb, err := sess.get(run)
	if err == nil {
		err = o.complete(run, idb, done)
	}
	if err != nil {
		sess.drop()
		o.log.Error("event: outbox relay", "err", err)
	}
}

// relaySession is the connection the relay loop writes through (and the announcer notifies
// through: a session of its own). Where the database has the setting (db.DB.AsyncCommitConn,
// PostgreSQL) it is a session of its own with synchronous_commit off: the relay's commits (one per batch) do not wait for
// the WAL flush, so a claim is one round trip without an fsync in the commit → handler path,
// and the relay asks for no flushes of its own. What a database crash can lose is the last
// fraction of a second of relay state changes, never an event: a lost claim or completion
// leaves the row due again and the event is delivered again (at-least-once; the inbox
// de-duplicates); a lost failure record costs one more attempt (a lost "dead" one, a second
// dead-letter forward). The publishers' inserts commit with the caller's settings. The session
// never returns to the pool with the setting: after an error it is discarded (db.DiscardConn).
// Other dialects use the pool.
type relaySession struct {
	o    *Transport
	conn *bun.Conn
}

// get returns the session, opening it when needed.
func (s *relaySession) get(ctx context.Context) (bun.IDB, error) {
	if s.conn != nil {
		return s.conn, nil
	}
	conn, err := s.o.db.AsyncCommitConn(ctx)
	switch {
	case err != nil:
		return nil, err
	case conn == nil: // no such setting: the pool
		return s.o.db, nil
	}
	s.conn = conn
	return s.conn, nil
}

// drop discards the session's connection (not back to the pool, which must not get its
// setting); the next get opens another.
func (s *relaySession) drop() {
	if s.conn != nil {
		db.DiscardConn(s.conn)
		s.conn = nil
	}
}

// listen is the body of the PostgreSQL listener worker: it holds one pooled connection that
// LISTENs on the channel and wakes the relay on NOTIFY of other nodes' commits, until ctx ends
// or the connection fails (the worker runtime runs it again after its back-off).
func (o *Transport) listen(ctx context.Context) error {
	return o.db.Listen(ctx, o.channel, func(payload string) {
		if payload != o.node { // our own commits woke us already
			select {
			case o.wake <- struct{}{}:
			default:
			}
		}
	})
}

// announce sends one NOTIFY per burst of local commits (PostgreSQL only), outside any
// transaction, so the relays of the other nodes wake within milliseconds of a commit here. It
// sends at most one per announceGap: a NOTIFY is a transaction of its own (PostgreSQL gives it a
// transaction id and a commit record), and one per commit would double the commits of a busy
// publisher. It sends through a session like the relay's, with synchronous_commit off, so the
// NOTIFY's commit does not wait for a WAL flush either: a notification lost in a database crash
// only leaves the other relays to their next relay_interval poll.
func (o *Transport) announce(ctx context.Context) error {
	gap := time.NewTimer(0)
	defer gap.Stop()
	sess := &relaySession{o: o}
	defer sess.drop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-o.tell:
		}
		idb, err := sess.get(ctx)
		if err == nil {
			err = db.Notify(ctx, idb, o.channel, o.node)
		}
		if err != nil {
			sess.drop()
			if ctx.Err() == nil {
				o.log.Warn("event: outbox notify", "err", err)
			}
		}
		gap.Reset(announceGap)
		select {
		case <-ctx.Done():
			return nil
		case <-gap.C:
		}
	}
}

// Workers are the relay (a loop), on PostgreSQL the listener and the announcer (loops), and the
// cleanup (every cleanup_interval).
func (o *Transport) Workers() []event.Worker {
	ws := []event.Worker{{Name: "relay", Run: o.relayLoop}}
	if o.db.Notifies() {
		ws = append(ws, event.Worker{Name: "listener", Run: o.listen}, event.Worker{Name: "announcer", Run: o.announce})
	}
	return append(ws, event.Worker{Name: "cleanup", Interval: o.cfg.CleanupInterval, Run: func(ctx context.Context) error {
		_, err := o.Cleanup(ctx)
		return err
	}})
}
