package event

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Event is any value that names its type. The type must match ^[a-zA-Z0-9._-]+$ (wire-runtime
// §2.1); the value is the payload, encoded as JSON when it leaves the process.
type Event interface {
	EventType() string
}

// RawPayload is the payload of an event that crossed a process boundary (outbox relay, stream):
// its type and canonical JSON body. SubscribeTyped decodes it into the subscriber's type.
type RawPayload struct {
	// Type is the event type.
	Type string
	// Body is the JSON encoding of the original event.
	Body json.RawMessage
}

// EventType returns the type the payload was published with.
func (r RawPayload) EventType() string { return r.Type }

// Named pairs an event type with any payload, for modules whose events are (name, value)
// pairs, such as storage.Event: bus.Publish(ctx, event.Named{Type: e.Name, Payload: e.Payload}).
// Its JSON is the payload's; SubscribeTyped hands typed subscribers the payload itself.
type Named struct {
	// Type is the event type.
	Type string
	// Payload is the value, encoded as JSON when it leaves the process.
	Payload any
}

// EventType returns n.Type.
func (n Named) EventType() string { return n.Type }

// MarshalJSON encodes the payload alone.
func (n Named) MarshalJSON() ([]byte, error) { return json.Marshal(n.Payload) }

// Envelope is one published event with its metadata. ID is a UUIDv7 fixed at publish and stable
// across every retry and redelivery, so it is the inbox deduplication key.
type Envelope struct {
	// ID is the event id (UUIDv7).
	ID string
	// Type is the event type.
	Type string
	// Source is the publisher (default svc.app.name).
	Source string
	// OccurredAt is when the fact happened (default the publish time).
	OccurredAt time.Time
	// PublishedAt is when the bus accepted the event.
	PublishedAt time.Time
	// TraceID is the W3C trace id (32 hex) when tracing is on.
	TraceID string
	// SpanID is the W3C span id (16 hex) when tracing is on.
	SpanID string
	// CorrelationID ties the event to its cause (default the request id of the context).
	CorrelationID string
	// Headers are free-form string headers (≤ 32, key ≤ 128 B, value ≤ 1024 B).
	Headers map[string]string
	// Payload is the original event in-process, or a RawPayload after crossing a process.
	Payload Event
}

// Handler handles one delivery. Returning an error asks an at-least-once transport to redeliver;
// in-process transports only log it.
type Handler func(ctx context.Context, env *Envelope) error

// Unsubscribe ends a subscription; it is safe to call more than once.
type Unsubscribe func()

// Publisher is the publishing half of the bus, for modules that only emit events.
type Publisher interface {
	// Publish sends evt along its route. A nil error only says the transports accepted it.
	Publish(ctx context.Context, evt Event, opts ...PublishOption) error
	// PublishBatch publishes evts in order with the same options, stopping at the first error.
	PublishBatch(ctx context.Context, evts []Event, opts ...PublishOption) error
}

// Subscriber is the subscribing half of the bus.
type Subscriber interface {
	// Subscribe registers h for events of exactly eventType on the subscribable transports of
	// the event's route.
	Subscribe(eventType string, h Handler, opts ...SubscribeOption) (Unsubscribe, error)
}

// PubSub is the contract modules depend on (publish and subscribe); *Bus implements it. It is
// not named Bus because New's concrete type has that name.
type PubSub interface {
	Publisher
	Subscriber
}

// ValidType reports whether t has the accepted shape of an event type, ^[a-zA-Z0-9._-]+$
// (wire-runtime §2.1). A loop instead of a regexp: it runs on every publish.
func ValidType(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Limits of one event (wire-runtime §2.1).
const (
	// MaxBodyBytes bounds the JSON body of an event that leaves the process.
	MaxBodyBytes = 1 << 20
	// MaxHeaders bounds the number of headers.
	MaxHeaders = 32
	// MaxHeaderKeyBytes bounds one header key.
	MaxHeaderKeyBytes = 128
	// MaxHeaderValueBytes bounds one header value.
	MaxHeaderValueBytes = 1024
)

// Header names the bus itself sets.
const (
	// HeaderDeadLetter marks an event forwarded to its dead-letter topic ("1").
	HeaderDeadLetter = "svc.dlq"
	// HeaderTraceparent is the W3C trace context header of the tracing middleware.
	HeaderTraceparent = "traceparent"
	// HeaderIncomingTrace keeps the incoming trace id when tracing_strict replaces it.
	HeaderIncomingTrace = "svc.incoming_trace_id"
	// DeadLetterPrefix prefixes the event type of a dead-lettered event.
	DeadLetterPrefix = "svc-dlq."
)

// ReservedPrefix begins the event types of the framework (svc.storage.*, svc.cron.*,
// svc.security.*, ...). Code that publishes types chosen by a user rather than by the program
// (the cron module's event.publish job) refuses them with Reserved, so such a user cannot forge
// the framework's events.
const ReservedPrefix = "svc."

// Reserved reports whether typ is a framework event type: it begins with ReservedPrefix in any
// letter case ("SVC.x" and "Svc.x" included), since subscribers, routing patterns and
// case-insensitive consumers downstream (a SQL collation, a log search) must not be given a
// look-alike of a framework type.
func Reserved(typ string) bool {
	return len(typ) >= len(ReservedPrefix) && strings.EqualFold(typ[:len(ReservedPrefix)], ReservedPrefix)
}

// publishOptions are the settings of one Publish call.
type publishOptions struct {
	tx            bun.IDB
	async         bool
	source        string
	occurredAt    time.Time
	correlationID string
	headers       map[string]string
}

// PublishOption adjusts one publish.
type PublishOption func(*publishOptions)

// InTx publishes through the transactional transports of the route only, inside tx: the outbox
// writes its row through tx, tx_memory delivers after the commit of the TxScope in ctx. A route
// without a transactional transport fails with ErrTxRequired.
func InTx(tx bun.IDB) PublishOption { return func(o *publishOptions) { o.tx = tx } }

// Async queues the publish on the bus's bounded queue (async_queue_size, drained by
// async_workers); when the queue is full the publish runs synchronously. Errors of queued
// publishes are logged and counted. Not combinable with InTx (ErrTxAsyncMutex).
func Async() PublishOption { return func(o *publishOptions) { o.async = true } }

// WithSource sets Envelope.Source (default svc.app.name).
func WithSource(s string) PublishOption { return func(o *publishOptions) { o.source = s } }

// WithOccurredAt sets Envelope.OccurredAt (default now).
func WithOccurredAt(t time.Time) PublishOption {
	return func(o *publishOptions) { o.occurredAt = t }
}

// WithCorrelationID sets Envelope.CorrelationID (default the request id of ctx).
func WithCorrelationID(id string) PublishOption {
	return func(o *publishOptions) { o.correlationID = id }
}

// WithHeaders adds headers to the envelope (later calls override earlier keys).
func WithHeaders(h map[string]string) PublishOption {
	return func(o *publishOptions) {
		if o.headers == nil {
			o.headers = make(map[string]string, len(h))
		}
		for k, v := range h {
			o.headers[k] = v
		}
	}
}

// subscribeOptions are the settings of one Subscribe call.
type subscribeOptions struct {
	group       string
	concurrency int
}

// SubscribeOption adjusts one subscription.
type SubscribeOption func(*subscribeOptions)

// WithGroup names the consumer group: each event reaches one member of a group. Required when
// the route has an at-least-once transport (ErrGroupRequired); ignored by memory transports,
// where every subscription receives every event.
func WithGroup(name string) SubscribeOption { return func(o *subscribeOptions) { o.group = name } }

// WithConcurrency runs n handlers of the subscription at once (default 1, which keeps order).
func WithConcurrency(n int) SubscribeOption {
	return func(o *subscribeOptions) { o.concurrency = n }
}
