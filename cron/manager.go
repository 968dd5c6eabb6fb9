package cron

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Spec is what create and update write (wire-runtime §1.4 ScheduleParams, decoded).
type Spec struct {
	// Name addresses the schedule; NewName renames it on update.
	Name    string
	NewName string
	JobName string
	Trigger Trigger
	Window  Window
	// Params are delivered to the job verbatim; nil or JSON null means none.
	Params            json.RawMessage
	MisfirePolicy     MisfirePolicy
	ConcurrencyPolicy ConcurrencyPolicy
	Recover           bool
	Timeout           time.Duration
	// Enabled nil means enabled, on update too (wire-runtime §1.4).
	Enabled *bool
}

// check validates spec in the original's order (name, job, trigger, policies, timeout,
// window), then the params when the job checks them (ParamsChecker), and returns its timing anchored at anchor, with defaults applied to spec.
func (s *Service) check(spec *Spec, anchor time.Time) (*Timing, error) {
	spec.Name = strings.TrimSpace(spec.Name)
	if err := checkName(spec.Name); err != nil {
		return nil, err
	}
	job := s.jobs.Get(spec.JobName)
	if job == nil {
		return nil, ErrJobNotRegistered.WithArgs("job", spec.JobName)
	}
	tm, err := Compile(spec.Trigger, spec.Window, anchor)
	if err != nil && isTriggerReason(err) {
		return nil, invalidTrigger(err)
	}
	spec.MisfirePolicy = MisfirePolicy(orDefault(string(spec.MisfirePolicy), string(MisfireFireNow)))
	spec.ConcurrencyPolicy = ConcurrencyPolicy(orDefault(string(spec.ConcurrencyPolicy), string(ConcurrencyForbid)))
	switch {
	case spec.MisfirePolicy != MisfireFireNow && spec.MisfirePolicy != MisfireSkip,
		spec.ConcurrencyPolicy != ConcurrencyForbid && spec.ConcurrencyPolicy != ConcurrencyAllow:
		return nil, invalidSchedule(ErrPolicyUnknown)
	case spec.Timeout < 0:
		return nil, invalidSchedule(ErrTimeoutNegative)
	case err != nil:
		return nil, invalidSchedule(err)
	}
	if t := strings.TrimSpace(string(spec.Params)); t == "" || t == "null" {
		spec.Params = nil
	}
	if pc, ok := job.(ParamsChecker); ok {
		if err := pc.CheckParams(spec.Params); err != nil {
			return nil, invalidSchedule(err)
		}
	}
	return tm, nil
}

// checkName enforces the name rules (2706).
func checkName(name string) error {
	if name == "" {
		return invalidSchedule(ErrNameRequired)
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		return invalidSchedule(ErrNameTooLong)
	}
	return nil
}

// Create stores a new schedule (wire-runtime §1.10): anchor = now (or startsAt), cursor = the
// first occurrence after now; an enabled schedule that would never fire is refused (2706), a
// taken name is 2701.
func (s *Service) Create(ctx context.Context, by string, spec Spec) (*Schedule, error) {
	if !s.cfg.Enabled {
		return nil, ErrStoreDisabled
	}
	now := ms(s.clock())
	tm, err := s.check(&spec, now)
	if err != nil {
		return nil, err
	}
	enabled := spec.Enabled == nil || *spec.Enabled
	sch := &Schedule{
		ID: rpc.NewID(), CreatedAt: now, CreatedBy: orDefault(by, "system"), UpdatedAt: now, UpdatedBy: orDefault(by, "system"),
		Name: spec.Name, JobName: spec.JobName, Trigger: tm.Trigger(), Window: spec.Window, AnchorAt: now,
		Params: spec.Params, MisfirePolicy: spec.MisfirePolicy, ConcurrencyPolicy: spec.ConcurrencyPolicy,
		Recover: spec.Recover, Timeout: spec.Timeout, IsEnabled: enabled, NextFireAt: tm.Next(now),
	}
	sch.Window = Window{StartsAt: ms(spec.Window.StartsAt), EndsAt: ms(spec.Window.EndsAt)}
	if !sch.Window.StartsAt.IsZero() {
		sch.AnchorAt = sch.Window.StartsAt
	}
	if enabled && sch.NextFireAt.IsZero() {
		return nil, invalidSchedule(ErrNeverFires)
	}
	if _, err := s.db.NewInsert().Model(scheduleRowOf(sch)).Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, ErrScheduleExists.WithArgs("name", sch.Name)
		}
		return nil, err
	}
	s.Wake()
	return sch, nil
}

// Get returns the schedule named name, or ErrScheduleNotFound (2700). Every management method
// answers ErrStoreDisabled (2705) while svc.cron.store.enabled is false.
func (s *Service) Get(ctx context.Context, name string) (*Schedule, error) {
	if !s.cfg.Enabled {
		return nil, ErrStoreDisabled
	}
	return getSchedule(ctx, s.db, name, false)
}

// getSchedule reads (and with lock, locks FOR UPDATE) the schedule named name.
func getSchedule(ctx context.Context, d *db.DB, name string, lock bool) (*Schedule, error) {
	return getScheduleIn(ctx, d, d, name, lock)
}

func getScheduleIn(ctx context.Context, d *db.DB, idb bun.IDB, name string, lock bool) (*Schedule, error) {
	var row scheduleRow
	q := idb.NewSelect().Model(&row).Where("name = ?", name)
	if lock {
		q = d.ForUpdate(q)
	}
	if err := q.Scan(ctx); errors.Is(err, sql.ErrNoRows) {
		return nil, ErrScheduleNotFound.WithArgs("name", name)
	} else if err != nil {
		return nil, err
	}
	return row.schedule(), nil
}

// Pause disables the schedule, keeping its cursor; running fires are unaffected.
func (s *Service) Pause(ctx context.Context, by, name string) error {
	return s.mutate(ctx, name, func(ctx context.Context, tx bun.Tx, sch *Schedule) error {
		_, err := tx.NewUpdate().Model((*scheduleRow)(nil)).Set("is_enabled = ?", false).
			Set("updated_at = ?", dbTime(s.clock())).Set("updated_by = ?", orDefault(by, "system")).
			Where("id = ?", sch.ID).Exec(ctx)
		return err
	})
}

// Resume enables a paused schedule with its cursor kept (the misfire policy applies to the
// paused gap at the next claim); a cursor-less schedule is re-armed from now. Resuming an
// enabled schedule does nothing.
func (s *Service) Resume(ctx context.Context, by, name string) error {
	defer s.Wake()
	return s.mutate(ctx, name, func(ctx context.Context, tx bun.Tx, sch *Schedule) error {
		if sch.IsEnabled {
			return nil
		}
		next := sch.NextFireAt
		if next.IsZero() {
			tm, err := sch.Timing()
			if err != nil {
				return invalidTrigger(err)
			}
			next = tm.Next(s.clock())
		}
		_, err := tx.NewUpdate().Model((*scheduleRow)(nil)).Set("is_enabled = ?", true).
			Set("next_fire_at_unix_ms = ?", toUnixMs(next)).
			Set("updated_at = ?", dbTime(s.clock())).Set("updated_by = ?", orDefault(by, "system")).
			Where("id = ?", sch.ID).Exec(ctx)
		return err
	})
}

// TriggerNow queues a manual fire at now (a paused schedule is 2702); the cursor is untouched
// and the concurrency policy applies when it is claimed.
func (s *Service) TriggerNow(ctx context.Context, name string) error {
	defer s.Wake()
	return s.mutate(ctx, name, func(ctx context.Context, tx bun.Tx, sch *Schedule) error {
		if !sch.IsEnabled {
			return ErrScheduleDisabled.WithArgs("name", name)
		}
		return insertRequest(ctx, tx, sch.ID, requestManual, ms(s.clock()), "")
	})
}

// Delete removes the schedule and its pending fire requests; its journal rows stay.
func (s *Service) Delete(ctx context.Context, name string) error {
	return s.mutate(ctx, name, func(ctx context.Context, tx bun.Tx, sch *Schedule) error {
		if _, err := tx.NewDelete().Model((*fireRequest)(nil)).Where("schedule_id = ?", sch.ID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*scheduleRow)(nil)).Where("id = ?", sch.ID).Exec(ctx)
		return err
	})
}

// mutate runs fn in a transaction on the locked schedule named name; ErrStoreDisabled (2705)
// while the store is off.
func (s *Service) mutate(ctx context.Context, name string, fn func(ctx context.Context, tx bun.Tx, sch *Schedule) error) error {
	if !s.cfg.Enabled {
		return ErrStoreDisabled
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		sch, err := getScheduleIn(ctx, s.db, tx, name, true)
		if err != nil {
			return err
		}
		return fn(ctx, tx, sch)
	})
}

// Runs lists the journal of the schedule named name (all schedules when empty), oldest logical
// time first, then by id.
func (s *Service) Runs(ctx context.Context, scheduleName string) ([]*Run, error) {
	var rows []runRow
	q := s.db.NewSelect().Model(&rows).OrderExpr("scheduled_at_unix_ms ASC, id ASC")
	if scheduleName != "" {
		q = q.Where("schedule_name = ?", scheduleName)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]*Run, len(rows))
	for i := range rows {
		out[i] = rows[i].run()
	}
	return out, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Update replaces a schedule's spec (wire-runtime §1.10): everything but its id, creation audit,
// anchor, last fire time and cursor. The cursor is recomputed from now only when the timing
// changed (trigger or window) or a cursor-less paused schedule is enabled; a recomputed enabled
// schedule that would never fire is refused (2706). Enabled nil means enabled, so an update that
// omits it resumes a paused schedule. NewName renames; a taken name is 2701.
func (s *Service) Update(ctx context.Context, by string, spec Spec) (*Schedule, error) {
	var out *Schedule
	spec.Name = strings.TrimSpace(spec.Name)
	err := s.mutate(ctx, spec.Name, func(ctx context.Context, tx bun.Tx, old *Schedule) error {
		tm, err := s.check(&spec, old.AnchorAt)
		if err != nil {
			return err
		}
		sch := *old
		if n := strings.TrimSpace(spec.NewName); n != "" {
			if err := checkName(n); err != nil {
				return err
			}
			sch.Name = n
		}
		now := ms(s.clock())
		sch.JobName, sch.Trigger, sch.Params = spec.JobName, tm.Trigger(), spec.Params
		sch.Window = Window{StartsAt: ms(spec.Window.StartsAt), EndsAt: ms(spec.Window.EndsAt)}
		sch.MisfirePolicy, sch.ConcurrencyPolicy = spec.MisfirePolicy, spec.ConcurrencyPolicy
		sch.Recover, sch.Timeout, sch.IsEnabled = spec.Recover, spec.Timeout, spec.Enabled == nil || *spec.Enabled
		sch.UpdatedAt, sch.UpdatedBy = now, orDefault(by, "system")
		if !sameTiming(old, &sch) || (old.NextFireAt.IsZero() && !old.IsEnabled && sch.IsEnabled) {
			sch.NextFireAt = tm.Next(now)
			if sch.IsEnabled && sch.NextFireAt.IsZero() {
				return invalidSchedule(ErrNeverFires)
			}
		}
		if _, err := tx.NewUpdate().Model(scheduleRowOf(&sch)).WherePK().Exec(ctx); err != nil {
			if db.IsUniqueViolation(err) {
				return ErrScheduleExists.WithArgs("name", sch.Name)
			}
			return err
		}
		out = &sch
		return nil
	})
	if err == nil {
		s.Wake()
	}
	return out, err
}

// sameTiming reports whether two schedules have the same trigger and window.
func sameTiming(a, b *Schedule) bool {
	ta, tb := a.Trigger, b.Trigger
	return ta.Kind == tb.Kind && ta.Expr == tb.Expr && ta.Timezone == tb.Timezone && ta.Every == tb.Every &&
		ta.At.Equal(tb.At) && a.Window.StartsAt.Equal(b.Window.StartsAt) && a.Window.EndsAt.Equal(b.Window.EndsAt)
}

// List returns every schedule ordered by name (the operator's view; the API pages with
// find_page). ErrStoreDisabled (2705) while the store is off.
func (s *Service) List(ctx context.Context) ([]*Schedule, error) {
	if !s.cfg.Enabled {
		return nil, ErrStoreDisabled
	}
	var rows []scheduleRow
	if err := s.db.NewSelect().Model(&rows).OrderExpr("name ASC").Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]*Schedule, len(rows))
	for i := range rows {
		out[i] = rows[i].schedule()
	}
	return out, nil
}
