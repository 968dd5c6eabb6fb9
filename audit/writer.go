package audit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// writeTimeout bounds one batch insert, so a store that hangs holds the writer (and so fills
// the queue, whose overflow is counted) for a bounded time rather than forever.
const writeTimeout = 10 * time.Second

// row is sys_audit_record.
type row struct {
	bun.BaseModel `bun:"table:sys_audit_record"`

	ID         string `bun:"id,pk"`
	AtUnixMs   int64  `bun:"at_unix_ms"`
	NodeID     string `bun:"node_id"`
	Kind       string `bun:"kind"`
	RequestID  string `bun:"request_id"`
	UserID     string `bun:"user_id"`
	UserName   string `bun:"user_name"`
	Resource   string `bun:"resource"`
	Action     string `bun:"action"`
	Version    string `bun:"version"`
	ClientIP   string `bun:"client_ip"`
	UserAgent  string `bun:"user_agent"`
	Code       int    `bun:"code"`
	Status     int    `bun:"status"`
	OK         bool   `bun:"ok"`
	DurationMs int64  `bun:"duration_ms"`
	Detail     string `bun:"detail"`
}

// record is r as the API answers it.
func (r *row) record() Record {
	return Record{ID: r.ID, At: time.UnixMilli(r.AtUnixMs).UTC(), NodeID: r.NodeID, Kind: r.Kind, RequestID: r.RequestID,
		UserID: r.UserID, UserName: r.UserName, Resource: r.Resource, Action: r.Action, Version: r.Version,
		ClientIP: r.ClientIP, UserAgent: r.UserAgent, Code: r.Code, Status: r.Status, OK: r.OK, DurationMs: r.DurationMs,
		Detail: json.RawMessage(r.Detail)}
}

// WriteLoop is the audit-writer worker: it waits for a record, then gathers more for up to
// svc.audit.flush_interval or until svc.audit.batch_size, and writes them with one INSERT in one
// transaction. Records that arrive while a batch is written wait in the queue for the next. It
// returns when ctx ends; Flush writes what is left.
func (s *Service) WriteLoop(ctx context.Context) error {
	batch := make([]entry, 0, s.cfg.BatchSize)
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-s.queue:
			batch = s.gather(ctx, append(batch[:0], e))
			s.write(ctx, batch)
		}
	}
}

// gather appends queued records to batch until it is full, flush_interval has passed or ctx
// ended. The wait is wall time (a timer), not the injected clock: it paces a batch, it decides
// nothing a test needs to drive.
func (s *Service) gather(ctx context.Context, batch []entry) []entry {
	if batch = s.fill(batch); len(batch) >= s.cfg.BatchSize {
		return batch
	}
	t := time.NewTimer(s.cfg.FlushInterval)
	defer t.Stop()
	for len(batch) < s.cfg.BatchSize {
		select {
		case e := <-s.queue:
			batch = append(batch, e)
		case <-t.C:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// fill appends queued records to batch, without waiting, up to the batch size.
func (s *Service) fill(batch []entry) []entry {
	for len(batch) < s.cfg.BatchSize {
		select {
		case e := <-s.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// Flush writes every queued record, in batches, until the queue is empty or ctx ends. It is the
// module's Stop: at shutdown the requests are drained first, so their records are written.
func (s *Service) Flush(ctx context.Context) error {
	for ctx.Err() == nil {
		batch := s.fill(make([]entry, 0, s.cfg.BatchSize))
		if len(batch) == 0 {
			return nil
		}
		s.write(ctx, batch)
	}
	return ctx.Err()
}

// write inserts batch as one statement. A failure drops the batch (counted and logged at a
// bounded rate): the trail never retries into a store that is failing, and never blocks the
// requests that feed it.
func (s *Service) write(ctx context.Context, batch []entry) {
	rows := make([]row, len(batch))
	for i, e := range batch {
		rows[i] = s.row(e)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	err := s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&rows).Exec(ctx)
		return err
	})
	if err != nil {
		s.drop(dropStoreError, len(rows), err)
		return
	}
	s.written.Add(uint64(len(rows)))
	s.metrics.written.Add(float64(len(rows)))
}

// row is e as a table row: a new id, this node, the detail marshalled ("{}" when it has none or
// cannot be encoded).
func (s *Service) row(e entry) row {
	r := e.rec
	detail := []byte("{}")
	if e.detail != nil {
		if b, err := json.Marshal(e.detail); err == nil && len(b) > 0 && b[0] == '{' {
			detail = b
		}
	}
	return row{ID: rpc.NewID(), AtUnixMs: r.At.UnixMilli(), NodeID: s.node, Kind: r.Kind, RequestID: r.RequestID,
		UserID: r.UserID, UserName: r.UserName, Resource: r.Resource, Action: r.Action, Version: r.Version,
		ClientIP: r.ClientIP, UserAgent: r.UserAgent, Code: r.Code, Status: r.Status, OK: r.OK, DurationMs: r.DurationMs,
		Detail: string(detail)}
}
