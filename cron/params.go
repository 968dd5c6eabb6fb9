package cron

import (
	"encoding/json"
	"time"
)

// NameParams address one schedule (get, delete, pause, resume, trigger_now).
type NameParams struct {
	Name string `json:"name"`
}

// TriggerParams is a trigger in either wire shape: at (date-time) or atUnixMs for once.
type TriggerParams struct {
	Kind     Kind   `json:"kind"`
	Expr     string `json:"expr,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	EveryMs  int64  `json:"everyMs,omitempty"`
	At       string `json:"at,omitempty"`
	AtUnixMs *int64 `json:"atUnixMs,omitempty"`
}

// WindowParams is a schedule window in either wire shape; *UnixMs wins when both are sent.
type WindowParams struct {
	StartsAt       string `json:"startsAt,omitempty"`
	EndsAt         string `json:"endsAt,omitempty"`
	StartsAtUnixMs *int64 `json:"startsAtUnixMs,omitempty"`
	EndsAtUnixMs   *int64 `json:"endsAtUnixMs,omitempty"`
}

// ScheduleParams are the params of create and update (wire-runtime §1.4).
type ScheduleParams struct {
	Name    string        `json:"name"`
	NewName string        `json:"newName,omitempty"`
	JobName string        `json:"jobName"`
	Trigger TriggerParams `json:"trigger"`
	WindowParams
	Params            json.RawMessage   `json:"params,omitempty"`
	MisfirePolicy     MisfirePolicy     `json:"misfirePolicy,omitempty"`
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	Recover           bool              `json:"recover,omitempty"`
	TimeoutMs         int64             `json:"timeoutMs,omitempty"`
	Enabled           *bool             `json:"enabled,omitempty"`
}

// PreviewParams are the params of preview_fires.
type PreviewParams struct {
	Trigger TriggerParams `json:"trigger"`
	WindowParams
}

// trigger decodes a TriggerParams; errors are 2703 (a bad fire time) or rpc errors.
func (w wireTimes) trigger(p TriggerParams) (Trigger, error) {
	at, err := w.instant("trigger.at", p.At, p.AtUnixMs)
	if err != nil {
		return Trigger{}, invalidTrigger(err)
	}
	every, err := IntervalFromMs(p.EveryMs)
	if err != nil {
		return Trigger{}, invalidTrigger(err)
	}
	if p.EveryMs < 0 {
		return Trigger{}, invalidTrigger(ErrTriggerIntervalTooShort)
	}
	return Trigger{Kind: p.Kind, Expr: p.Expr, Timezone: p.Timezone, Every: every, At: at}, nil
}

// window decodes a WindowParams; a malformed time is 2706.
func (w wireTimes) window(p WindowParams) (Window, error) {
	starts, err := w.instant("startsAt", p.StartsAt, p.StartsAtUnixMs)
	if err != nil {
		return Window{}, invalidSchedule(err)
	}
	ends, err := w.instant("endsAt", p.EndsAt, p.EndsAtUnixMs)
	if err != nil {
		return Window{}, invalidSchedule(err)
	}
	return Window{StartsAt: starts, EndsAt: ends}, nil
}

// spec decodes ScheduleParams into a Spec.
func (w wireTimes) spec(p ScheduleParams) (Spec, error) {
	tr, err := w.trigger(p.Trigger)
	if err != nil {
		return Spec{}, err
	}
	win, err := w.window(p.WindowParams)
	if err != nil {
		return Spec{}, err
	}
	if p.TimeoutMs < 0 {
		return Spec{}, invalidSchedule(ErrTimeoutNegative)
	}
	return Spec{
		Name: p.Name, NewName: p.NewName, JobName: p.JobName, Trigger: tr, Window: win, Params: p.Params,
		MisfirePolicy: p.MisfirePolicy, ConcurrencyPolicy: p.ConcurrencyPolicy, Recover: p.Recover,
		Timeout: time.Duration(p.TimeoutMs) * time.Millisecond, Enabled: p.Enabled,
	}, nil
}
