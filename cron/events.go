package cron

import (
	"context"
	"log/slog"
	"time"

	bus "github.com/svc-framework/svc/event"
)

// Event types of the cron store (wire-runtime §1.11, with the spec's svc. prefix).
const (
	// EventRunFailed: a run ended failed (error, panic, undecodable params or timeout).
	EventRunFailed = "svc.cron.run.failed"
	// EventRunAbandoned: a running row lost its heartbeat and was taken over.
	EventRunAbandoned = "svc.cron.run.abandoned"
)

// Event is one cron event: a type and its payload (RunEvent).
type Event struct {
	Name    string
	Payload any
}

// RunEvent is the payload of EventRunFailed and EventRunAbandoned, with the logical fire time in
// both wire shapes. Error is empty for abandoned runs.
type RunEvent struct {
	RunID             string `json:"runId"`
	ScheduleName      string `json:"scheduleName"`
	JobName           string `json:"jobName"`
	ScheduledAt       string `json:"scheduledAt"`
	ScheduledAtUnixMs int64  `json:"scheduledAtUnixMs"`
	NodeID            string `json:"nodeId"`
	Error             string `json:"error,omitempty"`
}

// Publisher receives the cron events; the event bus implements it. Events are best effort, as
// in the original: they are published after the change committed, and a failure is logged, never
// undone.
type Publisher interface {
	Publish(ctx context.Context, e Event) error
}

// BusPublisher returns the Publisher that sends cron events to the event bus along their route,
// outside any transaction: they are published after the change committed (best effort), so
// unlike storage's they need no transactional transport.
func BusPublisher(p bus.Publisher) Publisher { return busPublisher{pub: p} }

// busPublisher is the event bus as the cron module's Publisher.
type busPublisher struct{ pub bus.Publisher }

var _ Publisher = busPublisher{}

// Publish implements Publisher.
func (b busPublisher) Publish(ctx context.Context, e Event) error {
	return b.pub.Publish(ctx, bus.Named{Type: e.Name, Payload: e.Payload})
}

// publishRun sends a run event when a publisher is configured; an abandoned run is counted in
// svc_cron_runs_total here, the one place every takeover passes.
func (s *Service) publishRun(ctx context.Context, name string, r *runRow, errMsg string) {
	if name == EventRunAbandoned {
		s.metrics.ended(r.JobName, StatusAbandoned)
	}
	if s.events == nil {
		return
	}
	at := time.UnixMilli(r.ScheduledAtUnixMs).UTC()
	ev := RunEvent{RunID: r.ID, ScheduleName: r.ScheduleName, JobName: r.JobName, ScheduledAt: s.wire.str(at),
		ScheduledAtUnixMs: r.ScheduledAtUnixMs, NodeID: r.NodeID, Error: errMsg}
	if err := s.events.Publish(ctx, Event{Name: name, Payload: ev}); err != nil {
		s.log.WarnContext(ctx, "cron event not published", slog.String("event", name), slog.String("run", r.ID), slog.Any("error", err))
	}
}
