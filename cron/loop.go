package cron

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"
)

// minLoopWait floors the claim loop's sleep (wire-runtime §1.6).
const minLoopWait = 50 * time.Millisecond

// loop is the claim worker (a loop worker): claim, then sleep until the nearest cursor of a
// local-job schedule, at most poll_interval and at least 50 ms, or until a local mutation
// (create, update, resume, trigger_now) or a finished run wakes it. poll_interval is therefore
// how long another node's changes may take to be seen, not the precision of fires.
func (s *Service) loop(ctx context.Context) error {
	err := s.Claim(ctx)
	wait := s.cfg.PollInterval
	if err == nil {
		wait, err = s.nextWait(ctx)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-s.wake:
	}
	return err
}

// nextWait is how long the claim loop may sleep: until the earliest cursor of an enabled
// schedule of a local job, clamped to [50 ms, poll_interval].
func (s *Service) nextWait(ctx context.Context) (time.Duration, error) {
	var next sql.NullInt64
	err := s.db.NewSelect().Model((*scheduleRow)(nil)).ColumnExpr("MIN(next_fire_at_unix_ms)").
		Where("is_enabled = ?", true).Where("job_name IN (?)", bun.List(s.jobs.Names())).
		Scan(ctx, &next)
	if err != nil || !next.Valid {
		return s.cfg.PollInterval, err
	}
	d := time.UnixMilli(next.Int64).Sub(s.clock())
	return min(max(d, minLoopWait), s.cfg.PollInterval), nil
}

// Wake makes the claim loop claim now instead of at its next deadline; it never blocks.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
