package cron

import (
	"time"

	"github.com/uptrace/bun"
)

// Status is the state of a run (wire-runtime §1.8). Every status but running is terminal.
type Status string

// Run statuses.
const (
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusMissed    Status = "missed"
	StatusSkipped   Status = "skipped"
	StatusAbandoned Status = "abandoned"
	StatusCanceled  Status = "canceled"
)

// Run is one crn_run row: the journal of one fire (or of a missed or skipped one).
type Run struct {
	ID           string
	CreatedAt    time.Time
	ScheduleID   string
	ScheduleName string
	JobName      string
	// ScheduledAt is the logical fire time; ClaimedAt the instant the claim journaled it.
	ScheduledAt time.Time
	ClaimedAt   time.Time
	Status      Status
	// NodeID is the node that ran it; "" for missed and skipped rows.
	NodeID      string
	StartedAt   time.Time
	FinishedAt  time.Time
	HeartbeatAt time.Time
	Duration    time.Duration
	Error       string
	// MissedCount is the number of occurrences a missed row stands for.
	MissedCount int
}

// runRow maps crn_run.
type runRow struct {
	bun.BaseModel `bun:"table:crn_run,alias:crn_run"`

	ID                string    `bun:"id,pk"`
	CreatedAt         time.Time `bun:"created_at"`
	CreatedBy         string    `bun:"created_by"`
	ScheduleID        string    `bun:"schedule_id"`
	ScheduleName      string    `bun:"schedule_name"`
	JobName           string    `bun:"job_name"`
	ScheduledAtUnixMs int64     `bun:"scheduled_at_unix_ms"`
	ClaimedAtUnixMs   int64     `bun:"claimed_at_unix_ms"`
	Status            string    `bun:"status"`
	NodeID            string    `bun:"node_id"`
	StartedAtUnixMs   *int64    `bun:"started_at_unix_ms"`
	FinishedAtUnixMs  *int64    `bun:"finished_at_unix_ms"`
	HeartbeatAtUnixMs *int64    `bun:"heartbeat_at_unix_ms"`
	DurationMs        int64     `bun:"duration_ms"`
	Error             string    `bun:"error"`
	MissedCount       int       `bun:"missed_count"`
}

func (r *runRow) run() *Run {
	return &Run{
		ID: r.ID, CreatedAt: r.CreatedAt.UTC(), ScheduleID: r.ScheduleID, ScheduleName: r.ScheduleName, JobName: r.JobName,
		ScheduledAt: time.UnixMilli(r.ScheduledAtUnixMs).UTC(), ClaimedAt: time.UnixMilli(r.ClaimedAtUnixMs).UTC(),
		Status: Status(r.Status), NodeID: r.NodeID, StartedAt: fromUnixMs(r.StartedAtUnixMs),
		FinishedAt: fromUnixMs(r.FinishedAtUnixMs), HeartbeatAt: fromUnixMs(r.HeartbeatAtUnixMs),
		Duration: time.Duration(r.DurationMs) * time.Millisecond, Error: r.Error, MissedCount: r.MissedCount,
	}
}

func runRowOf(r *Run) *runRow {
	return &runRow{
		ID: r.ID, CreatedAt: dbTime(r.CreatedAt), CreatedBy: "system", ScheduleID: r.ScheduleID,
		ScheduleName: r.ScheduleName, JobName: r.JobName,
		ScheduledAtUnixMs: r.ScheduledAt.UnixMilli(), ClaimedAtUnixMs: r.ClaimedAt.UnixMilli(),
		Status: string(r.Status), NodeID: r.NodeID, StartedAtUnixMs: toUnixMs(r.StartedAt),
		FinishedAtUnixMs: toUnixMs(r.FinishedAt), HeartbeatAtUnixMs: toUnixMs(r.HeartbeatAt),
		DurationMs: r.Duration.Milliseconds(), Error: r.Error, MissedCount: r.MissedCount,
	}
}

// fireRequest maps crn_fire_request: an explicit manual or recovery fire waiting for a claim.
// SourceRunID (recovery only) is unique, so a run is recovered at most once.
type fireRequest struct {
	bun.BaseModel `bun:"table:crn_fire_request,alias:crn_fire_request"`

	ID                string  `bun:"id,pk"`
	ScheduleID        string  `bun:"schedule_id"`
	Kind              string  `bun:"kind"`
	ScheduledAtUnixMs int64   `bun:"scheduled_at_unix_ms"`
	SourceRunID       *string `bun:"source_run_id"`
}

// Fire request kinds.
const (
	requestManual   = "manual"
	requestRecovery = "recovery"
)
