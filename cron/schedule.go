package cron

import (
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// ConcurrencyPolicy says whether a schedule's runs may overlap (wire-runtime §1.8).
type ConcurrencyPolicy string

// Concurrency policies.
const (
	// ConcurrencyForbid journals a regular or manual fire that would overlap a live run as
	// skipped; a recovery request waits until the live run ends.
	ConcurrencyForbid ConcurrencyPolicy = "forbid"
	// ConcurrencyAllow lets runs overlap.
	ConcurrencyAllow ConcurrencyPolicy = "allow"
)

// Schedule is one crn_schedule row: a job, its trigger and window, its policies and its cursor.
// Instants are UTC at millisecond precision; a zero time is an absent value.
type Schedule struct {
	ID        string
	CreatedAt time.Time
	CreatedBy string
	UpdatedAt time.Time
	UpdatedBy string

	Name    string
	JobName string
	Trigger Trigger
	Window  Window
	// AnchorAt is the phase of an interval trigger: StartsAt, else the creation time.
	AnchorAt time.Time
	// Params are delivered verbatim to the job; nil when absent.
	Params            json.RawMessage
	MisfirePolicy     MisfirePolicy
	ConcurrencyPolicy ConcurrencyPolicy
	// Recover enqueues a recovery fire for a run that was abandoned or canceled by shutdown.
	Recover bool
	// Timeout bounds each run; 0 inherits svc.cron.store.run_timeout.
	Timeout   time.Duration
	IsEnabled bool
	// NextFireAt is the cursor: the next regular occurrence; zero when the trigger is spent.
	// Pausing keeps it, so resuming hands the paused gap to the misfire decision.
	NextFireAt time.Time
	// LastFireAt is the logical time of the most recent fired occurrence.
	LastFireAt time.Time
}

// Timing compiles the schedule's trigger and window.
func (s *Schedule) Timing() (*Timing, error) { return Compile(s.Trigger, s.Window, s.AnchorAt) }

// scheduleRow maps crn_schedule.
type scheduleRow struct {
	bun.BaseModel `bun:"table:crn_schedule,alias:crn_schedule"`

	ID                string          `bun:"id,pk"`
	CreatedAt         time.Time       `bun:"created_at"`
	CreatedBy         string          `bun:"created_by"`
	UpdatedAt         time.Time       `bun:"updated_at"`
	UpdatedBy         string          `bun:"updated_by"`
	Name              string          `bun:"name"`
	JobName           string          `bun:"job_name"`
	Kind              string          `bun:"kind"`
	Expr              string          `bun:"expr"`
	Timezone          string          `bun:"timezone"`
	EveryMs           int64           `bun:"every_ms"`
	FireAtUnixMs      *int64          `bun:"fire_at_unix_ms"`
	StartsAtUnixMs    *int64          `bun:"starts_at_unix_ms"`
	EndsAtUnixMs      *int64          `bun:"ends_at_unix_ms"`
	AnchorAtUnixMs    int64           `bun:"anchor_at_unix_ms"`
	Params            json.RawMessage `bun:"params,type:json,nullzero"`
	MisfirePolicy     string          `bun:"misfire_policy"`
	ConcurrencyPolicy string          `bun:"concurrency_policy"`
	Recover           bool            `bun:"recover"`
	TimeoutMs         int64           `bun:"timeout_ms"`
	IsEnabled         bool            `bun:"is_enabled"`
	NextFireAtUnixMs  *int64          `bun:"next_fire_at_unix_ms"`
	LastFireAtUnixMs  *int64          `bun:"last_fire_at_unix_ms"`
}

func (r *scheduleRow) schedule() *Schedule {
	return &Schedule{
		ID: r.ID, CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt.UTC(), UpdatedBy: r.UpdatedBy,
		Name: r.Name, JobName: r.JobName,
		Trigger: Trigger{Kind: Kind(r.Kind), Expr: r.Expr, Timezone: r.Timezone,
			Every: time.Duration(r.EveryMs) * time.Millisecond, At: fromUnixMs(r.FireAtUnixMs)},
		Window:   Window{StartsAt: fromUnixMs(r.StartsAtUnixMs), EndsAt: fromUnixMs(r.EndsAtUnixMs)},
		AnchorAt: time.UnixMilli(r.AnchorAtUnixMs).UTC(), Params: r.Params,
		MisfirePolicy: MisfirePolicy(r.MisfirePolicy), ConcurrencyPolicy: ConcurrencyPolicy(r.ConcurrencyPolicy),
		Recover: r.Recover, Timeout: time.Duration(r.TimeoutMs) * time.Millisecond, IsEnabled: r.IsEnabled,
		NextFireAt: fromUnixMs(r.NextFireAtUnixMs), LastFireAt: fromUnixMs(r.LastFireAtUnixMs),
	}
}

func scheduleRowOf(s *Schedule) *scheduleRow {
	return &scheduleRow{
		ID: s.ID, CreatedAt: dbTime(s.CreatedAt), CreatedBy: s.CreatedBy, UpdatedAt: dbTime(s.UpdatedAt), UpdatedBy: s.UpdatedBy,
		Name: s.Name, JobName: s.JobName, Kind: string(s.Trigger.Kind), Expr: s.Trigger.Expr, Timezone: s.Trigger.Timezone,
		EveryMs: s.Trigger.Every.Milliseconds(), FireAtUnixMs: toUnixMs(s.Trigger.At),
		StartsAtUnixMs: toUnixMs(s.Window.StartsAt), EndsAtUnixMs: toUnixMs(s.Window.EndsAt),
		AnchorAtUnixMs: s.AnchorAt.UnixMilli(), Params: s.Params,
		MisfirePolicy: string(s.MisfirePolicy), ConcurrencyPolicy: string(s.ConcurrencyPolicy),
		Recover: s.Recover, TimeoutMs: s.Timeout.Milliseconds(), IsEnabled: s.IsEnabled,
		NextFireAtUnixMs: toUnixMs(s.NextFireAt), LastFireAtUnixMs: toUnixMs(s.LastFireAt),
	}
}

// dbTime is an audit time as stored: UTC at microsecond precision.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
