package cron

import (
	"cmp"
	"context"
	"fmt"
	"github.com/svc-framework/svc/db"
	"log/slog"
	"slices"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// maxBatchesPerTick bounds the claim transactions of one Claim call (wire-runtime §1.6).
const maxBatchesPerTick = 32

// started is a run the claim journaled running, to execute after commit.
type started struct {
	run      *Run
	params   []byte
	timeout  time.Duration
	recovers bool
}

// Claim is the claim worker's body: up to 32 claim transactions while they make progress, each
// over at most min(batch_size, free slots of max_concurrent) schedules; the runs they journal
// start after their commit. On SQLite a busy database rolls the batch back and Claim returns
// nil: the next tick retries.
func (s *Service) Claim(ctx context.Context) error {
	if len(s.jobs.Names()) == 0 {
		return nil
	}
	for range maxBatchesPerTick {
		free := s.freeSlots()
		if free <= 0 {
			return nil
		}
		runs, progress, err := s.claimBatch(ctx, min(s.cfg.BatchSize, free))
		if db.IsBusy(err) {
			s.log.DebugContext(ctx, "cron claim: database busy, retrying next tick")
			return nil
		}
		if err != nil {
			return fmt.Errorf("cron: claim: %w", err)
		}
		for _, r := range runs {
			s.metrics.fired(r.run)
			s.start(r)
		}
		if !progress {
			return nil
		}
	}
	return nil
}

// freeSlots is max_concurrent minus the runs in flight; zero once Stop began.
func (s *Service) freeSlots() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return 0
	}
	return s.cfg.MaxConcurrent - len(s.inflight)
}

// claimBatch is one claim transaction (wire-runtime §1.6): lock candidate schedules (those with
// waiting requests, then due ones), take over their stale running rows, lock their requests,
// decide every schedule, journal, consume requests and move cursors. progress reports whether
// anything was written.
func (s *Service) claimBatch(ctx context.Context, n int) (runs []started, progress bool, err error) {
	now := ms(s.clock())
	var abandoned []runRow
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		runs, progress, abandoned = nil, false, nil
		cands, err := s.candidates(ctx, tx, now, n)
		if err != nil || len(cands) == 0 {
			return err
		}
		ids := make([]string, len(cands))
		for i := range cands {
			ids[i] = cands[i].ID
		}
		live, took, err := s.takeOver(ctx, tx, cands, now)
		abandoned = took
		if err != nil {
			return err
		}
		reqs, err := pendingRequests(ctx, s.db, tx, ids)
		if err != nil {
			return err
		}
		budget := n
		var journal []*runRow  // the batch's new crn_run rows, inserted at once at the end
		var moves []cursorMove // and its cursor moves, one UPDATE
		for i := range cands {
			c := claim{s: s, tx: tx, now: now, row: &cands[i], live: live[cands[i].ID], budget: &budget, pending: &journal, moves: &moves}
			for _, r := range reqs {
				if r.ScheduleID == cands[i].ID {
					c.reqs = append(c.reqs, r)
				}
			}
			if err := c.decide(ctx); err != nil {
				return err
			}
			runs = append(runs, c.runs...)
			progress = progress || c.wrote
		}
		progress = progress || len(took) > 0
		if err := moveCursors(ctx, tx, moves); err != nil {
			return err
		}
		return insertRuns(ctx, tx, journal)
	})
	if err != nil {
		return nil, false, err
	}
	for i := range abandoned {
		s.publishRun(ctx, EventRunAbandoned, &abandoned[i], "")
	}
	return runs, progress, nil
}

// candidates locks up to n schedules: first those with waiting requests, then due ones.
func (s *Service) candidates(ctx context.Context, tx bun.Tx, now time.Time, n int) ([]scheduleRow, error) {
	jobs := s.jobs.Names()
	withReqs, err := requestSchedules(ctx, s.db, tx, jobs, n)
	if err != nil {
		return nil, err
	}
	if len(withReqs) >= n {
		return withReqs, nil
	}
	skip := make([]string, len(withReqs))
	for i := range withReqs {
		skip[i] = withReqs[i].ID
	}
	due, err := dueSchedules(ctx, s.db, tx, jobs, now, n-len(withReqs), skip)
	return append(withReqs, due...), err
}

// takeOver locks the running rows of the candidates, marks the stale ones abandoned (with a
// recovery request when their schedule recovers) and counts the live ones per schedule. It
// returns the rows it abandoned, whose events go out after commit.
func (s *Service) takeOver(ctx context.Context, tx bun.Tx, cands []scheduleRow, now time.Time) (map[string]int, []runRow, error) {
	ids := make([]string, len(cands))
	recovers := make(map[string]bool, len(cands))
	for i := range cands {
		ids[i] = cands[i].ID
		recovers[cands[i].ID] = cands[i].Recover
	}
	rows, err := runningRuns(ctx, s.db, tx, ids)
	if err != nil {
		return nil, nil, err
	}
	live := make(map[string]int)
	var took []runRow
	for i := range rows {
		if !s.stale(&rows[i], now) {
			live[rows[i].ScheduleID]++
			continue
		}
		ok, err := s.abandon(ctx, tx, &rows[i], recovers[rows[i].ScheduleID], now)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			took = append(took, rows[i])
		}
	}
	return live, took, nil
}

// stale reports a running row without a heartbeat for abandoned_after.
func (s *Service) stale(r *runRow, now time.Time) bool {
	return r.HeartbeatAtUnixMs == nil || now.Sub(time.UnixMilli(*r.HeartbeatAtUnixMs)) > s.cfg.AbandonedAfter
}

// abandon marks a stale run abandoned and, when the schedule recovers, queues a recovery fire
// at the run's logical time (wire-runtime §1.9).
func (s *Service) abandon(ctx context.Context, tx bun.IDB, r *runRow, recovers bool, now time.Time) (bool, error) {
	ok, err := abandonRun(ctx, tx, r.ID, now, now.Add(-s.cfg.AbandonedAfter))
	if err != nil || !ok {
		return ok, err
	}
	s.log.WarnContext(ctx, "cron run abandoned", slog.String("run", r.ID), slog.String("schedule", r.ScheduleName),
		slog.String("run_node", r.NodeID))
	if recovers {
		err = insertRequest(ctx, tx, r.ScheduleID, requestRecovery, time.UnixMilli(r.ScheduledAtUnixMs), r.ID)
	}
	return true, err
}

// claim decides one locked schedule inside a claim transaction.
type claim struct {
	s      *Service
	tx     bun.Tx
	now    time.Time
	row    *scheduleRow
	reqs   []fireRequest
	live   int
	budget *int
	// pending collects the rows the batch inserts in one statement before commit; nothing in
	// the transaction reads them back.
	pending *[]*runRow
	moves   *[]cursorMove

	runs     []started
	consumed []string
	wrote    bool
}

// event is one thing due for a schedule: its regular occurrence (req nil) or a fire request.
type event struct {
	at  time.Time
	req *fireRequest
}

// decide merges the regular occurrence with the requests in logical order (a regular
// occurrence first on a tie, then requests by id), applies the misfire and concurrency rules and
// stops at the first event that needs a slot when none is left.
func (c *claim) decide(ctx context.Context) error {
	sch := c.row.schedule()
	tm, err := sch.Timing()
	if err != nil {
		// a row the API could not have written: disarm it rather than fail every claim
		c.s.log.ErrorContext(ctx, "cron schedule has an invalid trigger; disarming it", slog.String("schedule", sch.Name), slog.Any("error", err))
		c.wrote = true
		*c.moves = append(*c.moves, cursorMove{id: sch.ID, last: sch.LastFireAt})
		return nil
	}
	var events []event
	if !sch.NextFireAt.IsZero() && !sch.NextFireAt.After(c.now) {
		events = append(events, event{at: sch.NextFireAt})
	}
	for i := range c.reqs {
		events = append(events, event{at: time.UnixMilli(c.reqs[i].ScheduledAtUnixMs).UTC(), req: &c.reqs[i]})
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if d := a.at.Compare(b.at); d != 0 {
			return d
		}
		if a.req == nil || b.req == nil {
			return cmp.Compare(boolInt(a.req != nil), boolInt(b.req != nil))
		}
		return cmp.Compare(a.req.ID, b.req.ID)
	})
	next, last := sch.NextFireAt, sch.LastFireAt
	for _, ev := range events {
		done, err := c.apply(ctx, sch, tm, ev, &next, &last)
		if err != nil {
			return err
		}
		if !done {
			break
		}
	}
	if err := deleteRequests(ctx, c.tx, c.consumed); err != nil {
		return err
	}
	if !next.Equal(sch.NextFireAt) || !last.Equal(sch.LastFireAt) {
		c.wrote = true
		*c.moves = append(*c.moves, cursorMove{id: sch.ID, next: next, last: last})
	}
	return nil
}

// apply handles one event; false when it needs a slot and none is left (the event and the ones
// after it wait for the next claim).
func (c *claim) apply(ctx context.Context, sch *Schedule, tm *Timing, ev event, next, last *time.Time) (bool, error) {
	overlap := sch.ConcurrencyPolicy == ConcurrencyForbid && c.live > 0
	if ev.req == nil {
		d := Decide(tm, ev.at, c.now, c.s.cfg.MisfireThreshold, sch.MisfirePolicy)
		if d.Fire && !overlap && *c.budget <= 0 {
			return false, nil
		}
		*next = d.Next
		if d.Missed > 0 {
			if err := c.journal(ctx, sch, StatusMissed, d.MissedAt, d.Missed); err != nil {
				return false, err
			}
		}
		if !d.Fire {
			return true, nil
		}
		return true, c.fire(ctx, sch, d.FireAt, overlap, last)
	}
	if overlap && ev.req.Kind == requestRecovery {
		return true, nil // a recovery waits until the live run ends (wire-runtime §1.8)
	}
	if !overlap && *c.budget <= 0 {
		return false, nil
	}
	c.consumed = append(c.consumed, ev.req.ID)
	c.wrote = true
	return true, c.fire(ctx, sch, ev.at, overlap, last)
}

// fire journals a skipped row when the run would overlap under forbid, else a running row that
// starts after commit.
func (c *claim) fire(ctx context.Context, sch *Schedule, at time.Time, overlap bool, last *time.Time) error {
	if overlap {
		return c.journal(ctx, sch, StatusSkipped, at, 0)
	}
	if at.After(*last) {
		*last = at // explicit requests never move it backwards
	}
	r := &Run{
		ID: rpc.NewID(), CreatedAt: c.now, ScheduleID: sch.ID, ScheduleName: sch.Name, JobName: sch.JobName,
		ScheduledAt: at, ClaimedAt: c.now, Status: StatusRunning, NodeID: c.s.nodeID,
		StartedAt: c.now, HeartbeatAt: c.now,
	}
	*c.pending = append(*c.pending, runRowOf(r))
	c.wrote = true
	c.live++
	*c.budget--
	c.runs = append(c.runs, started{run: r, params: sch.Params, timeout: sch.Timeout, recovers: sch.Recover})
	return nil
}

// journal writes a terminal row that never runs (missed, skipped): node ”, finished now.
func (c *claim) journal(ctx context.Context, sch *Schedule, status Status, at time.Time, missed int) error {
	c.wrote = true
	*c.pending = append(*c.pending, runRowOf(&Run{
		ID: rpc.NewID(), CreatedAt: c.now, ScheduleID: sch.ID, ScheduleName: sch.Name, JobName: sch.JobName,
		ScheduledAt: at, ClaimedAt: c.now, Status: status, FinishedAt: c.now, MissedCount: missed,
	}))
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
