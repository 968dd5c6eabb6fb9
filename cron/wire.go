package cron

import (
	"encoding/json"
	"strings"
	"time"
)

// wireDateTime is the older wire shape's time format: a naive wall-clock time in the server's
// zone, second precision (wire-runtime §0 CONFLICT), as the real client sends and reads it.
const wireDateTime = time.DateTime

// ScheduleJSON is a schedule as sys/cron/schedule answers it: both wire shapes, the date-time
// strings the real client reads and the *UnixMs integers of the newest server.
type ScheduleJSON struct {
	ID                string            `json:"id"`
	CreatedAt         string            `json:"createdAt"`
	CreatedBy         string            `json:"createdBy"`
	UpdatedAt         string            `json:"updatedAt"`
	UpdatedBy         string            `json:"updatedBy"`
	Name              string            `json:"name"`
	JobName           string            `json:"jobName"`
	Kind              Kind              `json:"kind"`
	Expr              string            `json:"expr"`
	Timezone          string            `json:"timezone"`
	EveryMs           int64             `json:"everyMs"`
	FireAt            string            `json:"fireAt,omitempty"`
	FireAtUnixMs      *int64            `json:"fireAtUnixMs,omitempty"`
	StartsAt          string            `json:"startsAt,omitempty"`
	StartsAtUnixMs    *int64            `json:"startsAtUnixMs,omitempty"`
	EndsAt            string            `json:"endsAt,omitempty"`
	EndsAtUnixMs      *int64            `json:"endsAtUnixMs,omitempty"`
	AnchorAtUnixMs    int64             `json:"anchorAtUnixMs"`
	Params            json.RawMessage   `json:"params,omitempty"`
	MisfirePolicy     MisfirePolicy     `json:"misfirePolicy"`
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy"`
	Recover           bool              `json:"recover"`
	TimeoutMs         int64             `json:"timeoutMs"`
	IsEnabled         bool              `json:"isEnabled"`
	NextFireAt        string            `json:"nextFireAt,omitempty"`
	NextFireAtUnixMs  *int64            `json:"nextFireAtUnixMs,omitempty"`
	LastFireAt        string            `json:"lastFireAt,omitempty"`
	LastFireAtUnixMs  *int64            `json:"lastFireAtUnixMs,omitempty"`
}

// RunJSON is a run as sys/cron/run answers it, in both wire shapes.
type RunJSON struct {
	ID                string `json:"id"`
	CreatedAt         string `json:"createdAt"`
	CreatedBy         string `json:"createdBy"`
	ScheduleID        string `json:"scheduleId"`
	ScheduleName      string `json:"scheduleName"`
	JobName           string `json:"jobName"`
	ScheduledAt       string `json:"scheduledAt"`
	ScheduledAtUnixMs int64  `json:"scheduledAtUnixMs"`
	ClaimedAtUnixMs   int64  `json:"claimedAtUnixMs"`
	Status            Status `json:"status"`
	NodeID            string `json:"nodeId"`
	StartedAt         string `json:"startedAt,omitempty"`
	StartedAtUnixMs   *int64 `json:"startedAtUnixMs,omitempty"`
	FinishedAt        string `json:"finishedAt,omitempty"`
	FinishedAtUnixMs  *int64 `json:"finishedAtUnixMs,omitempty"`
	DurationMs        int64  `json:"durationMs"`
	HeartbeatAt       string `json:"heartbeatAt,omitempty"`
	HeartbeatAtUnixMs *int64 `json:"heartbeatAtUnixMs,omitempty"`
	Error             string `json:"error,omitempty"`
	MissedCount       int    `json:"missedCount,omitempty"`
}

// wireTimes formats instants for one response in the server's zone.
type wireTimes struct{ loc *time.Location }

// str is the date-time string of t, "" for the zero time.
func (w wireTimes) str(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(w.loc).Format(wireDateTime)
}

func (w wireTimes) schedule(s *Schedule) ScheduleJSON {
	return ScheduleJSON{
		ID: s.ID, CreatedAt: w.str(s.CreatedAt), CreatedBy: s.CreatedBy, UpdatedAt: w.str(s.UpdatedAt), UpdatedBy: s.UpdatedBy,
		Name: s.Name, JobName: s.JobName, Kind: s.Trigger.Kind, Expr: s.Trigger.Expr, Timezone: s.Trigger.Timezone,
		EveryMs: s.Trigger.Every.Milliseconds(), FireAt: w.str(s.Trigger.At), FireAtUnixMs: toUnixMs(s.Trigger.At),
		StartsAt: w.str(s.Window.StartsAt), StartsAtUnixMs: toUnixMs(s.Window.StartsAt),
		EndsAt: w.str(s.Window.EndsAt), EndsAtUnixMs: toUnixMs(s.Window.EndsAt), AnchorAtUnixMs: s.AnchorAt.UnixMilli(),
		Params: s.Params, MisfirePolicy: s.MisfirePolicy, ConcurrencyPolicy: s.ConcurrencyPolicy, Recover: s.Recover,
		TimeoutMs: s.Timeout.Milliseconds(), IsEnabled: s.IsEnabled,
		NextFireAt: w.str(s.NextFireAt), NextFireAtUnixMs: toUnixMs(s.NextFireAt),
		LastFireAt: w.str(s.LastFireAt), LastFireAtUnixMs: toUnixMs(s.LastFireAt),
	}
}

func (w wireTimes) run(r *Run) RunJSON {
	return RunJSON{
		ID: r.ID, CreatedAt: w.str(r.CreatedAt), CreatedBy: "system", ScheduleID: r.ScheduleID,
		ScheduleName: r.ScheduleName, JobName: r.JobName,
		ScheduledAt: w.str(r.ScheduledAt), ScheduledAtUnixMs: r.ScheduledAt.UnixMilli(), ClaimedAtUnixMs: r.ClaimedAt.UnixMilli(),
		Status: r.Status, NodeID: r.NodeID, StartedAt: w.str(r.StartedAt), StartedAtUnixMs: toUnixMs(r.StartedAt),
		FinishedAt: w.str(r.FinishedAt), FinishedAtUnixMs: toUnixMs(r.FinishedAt), DurationMs: r.Duration.Milliseconds(),
		HeartbeatAt: w.str(r.HeartbeatAt), HeartbeatAtUnixMs: toUnixMs(r.HeartbeatAt), Error: r.Error, MissedCount: r.MissedCount,
	}
}

// fires lists instants in both shapes (get, preview_fires).
func (w wireTimes) fires(ts []time.Time) FiresJSON {
	out := FiresJSON{NextFires: make([]string, len(ts)), NextFiresUnixMs: make([]int64, len(ts))}
	for i, t := range ts {
		out.NextFires[i], out.NextFiresUnixMs[i] = w.str(t), t.UnixMilli()
	}
	return out
}

// FiresJSON is the upcoming fire list of get and preview_fires, in both wire shapes (≤ 5).
type FiresJSON struct {
	NextFires       []string `json:"nextFires"`
	NextFiresUnixMs []int64  `json:"nextFiresUnixMs"`
}

// instant reads a param given in either shape; the *UnixMs form wins when both are present.
// A malformed date-time string is reported with field's name.
func (w wireTimes) instant(field, s string, unixMs *int64) (time.Time, error) {
	if unixMs != nil {
		return time.UnixMilli(*unixMs).UTC(), nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(wireDateTime, s, w.loc)
	if err != nil {
		return time.Time{}, &paramError{field: field}
	}
	return t.UTC(), nil
}

// paramError is a malformed time param.
type paramError struct{ field string }

func (e *paramError) Error() string { return e.field + " is not a date-time (YYYY-MM-DD HH:mm:ss)" }
