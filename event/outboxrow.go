package event

import (
	"time"

	"github.com/uptrace/bun"
)

// Outbox row statuses (wire-runtime §2.4).
const (
	OutboxPending    = "pending"
	OutboxProcessing = "processing"
	OutboxCompleted  = "completed"
	OutboxFailed     = "failed"
	OutboxDead       = "dead"
)

// OutboxRow is one row of sys_event_outbox.
type OutboxRow struct {
	bun.BaseModel `bun:"table:sys_event_outbox"`

	ID            string    `bun:"id,pk"`
	CreatedAt     time.Time `bun:"created_at"`
	EventID       string    `bun:"event_id"`
	EventType     string    `bun:"event_type"`
	Source        string    `bun:"source"`
	TraceID       string    `bun:"trace_id,nullzero"`
	SpanID        string    `bun:"span_id,nullzero"`
	CorrelationID string    `bun:"correlation_id,nullzero"`
	Headers       string    `bun:"headers,nullzero"`
	Payload       string    `bun:"payload"`
	Status        string    `bun:"status"`
	RetryCount    int       `bun:"retry_count"`
	LastError     string    `bun:"last_error,nullzero"`
	ProcessedAt   time.Time `bun:"processed_at,nullzero"`
	RetryAfter    time.Time `bun:"retry_after,nullzero"`
	OccurredAt    time.Time `bun:"occurred_at"`
}
