package cron

import (
	"context"
	"errors"
	"fmt"
	"github.com/svc-framework/svc/db"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// journalTimeout bounds the write of a run's outcome, also at shutdown (wire-runtime §1.8).
const journalTimeout = 10 * time.Second

// journalWriters bounds the outcome writes a node runs at once (db pools keep 10 idle
// connections; a burst of finishing runs above that would open and close connections).
const journalWriters = 8

// finishAttempts bounds the transactions that try to journal a run's outcome.
const finishAttempts = 5

// maxErrorBytes bounds crn_run.error (wire-runtime §1.3).
const maxErrorBytes = 2000

// sweepLimit bounds the schedules one recovery sweep takes over (wire-runtime §1.9).
const sweepLimit = 100

// start executes a claimed run in its own goroutine.
func (s *Service) start(st started) {
	s.mu.Lock()
	s.inflight[st.run.ID] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.inflight, st.run.ID)
			s.mu.Unlock()
			s.Wake() // a slot is free
		}()
		s.execute(st)
	}()
}

// execute runs the handler under the run's timeout and journals the outcome: succeeded, failed
// (error, panic, decode failure or timeout — a passed deadline outranks a nil result) or
// canceled at shutdown, which queues a recovery fire when the schedule recovers.
func (s *Service) execute(st started) {
	r := st.run
	timeout := st.timeout
	if timeout <= 0 {
		timeout = s.cfg.RunTimeout
	}
	ctx, cancel := s.runCtx, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	err := s.call(ctx, Execution{RunID: r.ID, ScheduleID: r.ScheduleID, ScheduleName: r.ScheduleName,
		JobName: r.JobName, ScheduledAt: r.ScheduledAt, Params: st.params})
	status, msg := StatusSucceeded, ""
	switch {
	case errors.Is(context.Cause(ctx), errShutdown):
		status, msg = StatusCanceled, errShutdown.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status, msg = StatusFailed, fmt.Sprintf("cron store: run timed out after %s", timeout)
	case err != nil:
		status, msg = StatusFailed, err.Error()
	}
	s.finish(r, status, clip(msg), st.recovers)
}

// call runs the handler, turning a panic into an error.
func (s *Service) call(ctx context.Context, e Execution) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cron store: job panicked: job %q: %v", e.JobName, v)
			s.log.Error("cron job panicked", slog.String("job", e.JobName), slog.String("run", e.RunID), slog.Any("panic", v))
		}
	}()
	h := s.jobs.Get(e.JobName)
	if h == nil {
		return fmt.Errorf("cron store: job %q is not registered", e.JobName)
	}
	return h.Execute(ctx, e)
}

// finish journals the outcome, guarded by status = running; a canceled run of a recovering
// schedule queues its recovery fire in the same transaction. A deadlock or lock timeout against
// a concurrent claim (MariaDB picks victims freely) or a busy SQLite would leave the row running
// until takeover, so the write is retried while the time allows.
func (s *Service) finish(r *Run, status Status, msg string, recovers bool) {
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	now := ms(s.clock())
	select { // bound concurrent writes below the pool's idle connections: no connection churn
	case s.journalSlots <- struct{}{}:
		defer func() { <-s.journalSlots }()
	case <-ctx.Done():
	}
	journaled, err := s.writeOutcome(ctx, r, status, msg, recovers, now)
	for attempt := 1; err != nil && attempt < finishAttempts && ctx.Err() == nil; attempt++ {
		time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		journaled, err = s.writeOutcome(ctx, r, status, msg, recovers, now)
	}
	if err != nil {
		s.log.Error("cron run outcome not journaled", slog.String("run", r.ID), slog.String("status", string(status)), slog.Any("error", err))
		return
	}
	if journaled {
		s.metrics.ended(r.JobName, status)
	}
	if status == StatusFailed && journaled {
		s.publishRun(ctx, EventRunFailed, runRowOf(r), msg)
	}
}

// writeOutcome is one attempt of finish: a single guarded UPDATE, or a transaction that also
// queues the recovery fire of a canceled run. false when the run was no longer running.
func (s *Service) writeOutcome(ctx context.Context, r *Run, status Status, msg string, recovers bool, now time.Time) (bool, error) {
	var ok bool
	var err error
	if status == StatusCanceled && recovers {
		err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if ok, err = finishRun(ctx, tx, r.ID, status, msg, r.StartedAt, now); err != nil || !ok {
				return err
			}
			return insertRequest(ctx, tx, r.ScheduleID, requestRecovery, r.ScheduledAt, r.ID)
		})
	} else {
		ok, err = finishRun(ctx, s.db, r.ID, status, msg, r.StartedAt, now)
	}
	if err == nil && !ok {
		s.log.Warn("cron run outcome discarded: the run was taken over", slog.String("run", r.ID), slog.String("status", string(status)))
	}
	return ok, err
}

// Heartbeat is the heartbeat worker's body: it stamps every run this node executes alive.
func (s *Service) Heartbeat(ctx context.Context) error {
	s.mu.Lock()
	ids := make([]string, 0, len(s.inflight))
	for id := range s.inflight {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	return heartbeat(ctx, s.db, ids, ms(s.clock()))
}

// Sweep is the recovery worker's body (wire-runtime §1.9): it locks up to 100 schedules that
// have running rows without a heartbeat for abandoned_after, re-checks them under the lock, marks
// the stale ones abandoned and queues recovery fires for schedules that recover. Rows whose
// schedule was deleted are abandoned too.
func (s *Service) Sweep(ctx context.Context) error {
	now := ms(s.clock())
	var abandoned []runRow
	err := s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		abandoned = nil
		ids, err := staleScheduleIDs(ctx, tx, now.Add(-s.cfg.AbandonedAfter), sweepLimit)
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err := lockSchedules(ctx, s.db, tx, ids)
		if err != nil {
			return err
		}
		_, took, err := s.takeOver(ctx, tx, rows, now)
		if err != nil {
			return err
		}
		orphans, err := s.abandonOrphans(ctx, tx, ids, rows, now)
		abandoned = append(took, orphans...)
		return err
	})
	if db.IsBusy(err) {
		return nil
	}
	for i := range abandoned {
		s.publishRun(ctx, EventRunAbandoned, &abandoned[i], "")
	}
	return err
}

// abandonOrphans ends the stale running rows of schedules that no longer exist.
func (s *Service) abandonOrphans(ctx context.Context, tx bun.Tx, ids []string, locked []scheduleRow, now time.Time) ([]runRow, error) {
	exists := make(map[string]bool, len(locked))
	for i := range locked {
		exists[locked[i].ID] = true
	}
	var gone []string
	for _, id := range ids {
		if !exists[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	var n int
	if err := tx.NewSelect().Model((*scheduleRow)(nil)).ColumnExpr("COUNT(*)").Where("id IN (?)", bun.List(gone)).Scan(ctx, &n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, nil // some are only locked by another node: leave them to it
	}
	rows, err := runningRuns(ctx, s.db, tx, gone)
	if err != nil {
		return nil, err
	}
	var took []runRow
	for i := range rows {
		if !s.stale(&rows[i], now) {
			continue
		}
		ok, err := s.abandon(ctx, tx, &rows[i], false, now)
		if err != nil {
			return nil, err
		}
		if ok {
			took = append(took, rows[i])
		}
	}
	return took, nil
}

// clip bounds an error message to 2000 bytes of valid UTF-8.
func clip(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) <= maxErrorBytes {
		return msg
	}
	cut := maxErrorBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

// pruneInterval is how often a node prunes the journal when run_retention is set.
const pruneInterval = time.Hour

// Prune is the pruner's body (wire-runtime §1.9): it deletes terminal runs that finished more
// than run_retention ago. It is idempotent, so every node may run it without coordination.
func (s *Service) Prune(ctx context.Context) error {
	if s.cfg.RunRetention <= 0 {
		return nil
	}
	cutoff := ms(s.clock()).Add(-s.cfg.RunRetention)
	_, err := s.db.NewDelete().Model((*runRow)(nil)).
		Where("status <> ?", StatusRunning).Where("finished_at_unix_ms < ?", cutoff.UnixMilli()).Exec(ctx)
	return err
}
