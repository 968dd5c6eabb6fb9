package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/svc-framework/svc/config"
)

// JobParams are the params of the cron job svc.backup: retention and an optional destination.
type JobParams struct {
	// KeepLast keeps the newest N succeeded backups (0: no count limit).
	KeepLast int `json:"keepLast"`
	// KeepDays removes succeeded backups older than N days (0: no age limit). The newest
	// succeeded backup is always kept.
	KeepDays int `json:"keepDays"`
	// Destination overrides svc.backup.destination ("folder" or "storage").
	Destination string `json:"destination,omitempty"`
}

// DefaultJobParams are the params of the default schedule.
var DefaultJobParams = JobParams{KeepLast: 7, KeepDays: 30}

// ParseJobParams decodes and checks the job's params (null or empty: the defaults).
func ParseJobParams(raw json.RawMessage) (JobParams, error) {
	p := DefaultJobParams
	if len(raw) > 0 && string(raw) != "null" {
		p = JobParams{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return p, fmt.Errorf("svc.backup params: %w", err)
		}
	}
	switch {
	case p.KeepLast < 0 || p.KeepDays < 0:
		return p, fmt.Errorf("svc.backup params: keepLast and keepDays must not be negative")
	case p.Destination != "" && p.Destination != config.BackupToFolder && p.Destination != config.BackupToStorage:
		return p, fmt.Errorf("svc.backup params: destination %q: folder or storage", p.Destination)
	}
	return p, nil
}

// RunJob is the body of the cron job svc.backup: take a backup (waiting for it), then apply the
// params' retention. A backup already running elsewhere fails the run with ErrBusy.
func (s *Service) RunJob(ctx context.Context, raw json.RawMessage) error {
	p, err := ParseJobParams(raw)
	if err != nil {
		return err
	}
	// On a goroutine of its own, so its thread can be lowered and discarded (lowerPriority).
	done := make(chan error, 1)
	go func() {
		lowerPriority()
		_, err := s.Create(ctx, Request{Destination: p.Destination, Trigger: TriggerSchedule, CreatedBy: "system"})
		done <- err
	}()
	if err := <-done; err != nil {
		return err
	}
	_, err = s.Prune(ctx, p.KeepLast, p.KeepDays)
	return err
}

// JobParamsSchema is the JSON Schema of JobParams, and JobParamsExample an example (the Cron
// page's schedule form shows them).
var (
	JobParamsSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
		`"keepLast":{"type":"integer","minimum":0,"default":7,"description":"keep the newest N succeeded backups (0: no limit)"},` +
		`"keepDays":{"type":"integer","minimum":0,"default":30,"description":"remove succeeded backups older than N days (0: no limit); the newest is always kept"},` +
		`"destination":{"type":"string","enum":["folder","storage"],"description":"overrides svc.backup.destination"}}}`)
	JobParamsExample = json.RawMessage(`{"keepLast":7,"keepDays":30}`)
)
