package event

import "errors"

// Sentinel errors of the event bus (wire-runtime §2.1). Callers match them with errors.Is; the
// bus wraps them with the event type, transport or config key they concern.
var (
	// ErrBusNotStarted: Publish or PublishBatch before Start or after Stop.
	ErrBusNotStarted = errors.New("event: bus not started")
	// ErrBusAlreadyStarted: Start called twice.
	ErrBusAlreadyStarted = errors.New("event: bus already started")
	// ErrTxRequired: a publish in a transaction whose route has no transactional transport, or
	// RequireTransactional found a route without one.
	ErrTxRequired = errors.New("event: route has no transactional transport")
	// ErrTransportNotFound: a routing rule, the default transport or the outbox sink names a
	// transport that is unknown or not enabled.
	ErrTransportNotFound = errors.New("event: transport not found")
	// ErrAsyncQueueFull: the asynchronous queue was full and the synchronous fallback failed too.
	ErrAsyncQueueFull = errors.New("event: async queue full")
	// ErrQueueFull: an in-process subscription queue is full (full_policy error, or block past
	// its publish_timeout).
	ErrQueueFull = errors.New("event: subscription queue full")
	// ErrHandlerPanic: a handler panicked (recover middleware).
	ErrHandlerPanic = errors.New("event: handler panicked")
	// ErrShutdownTimeout: Stop's context ended before queues were flushed and workers stopped.
	ErrShutdownTimeout = errors.New("event: shutdown timed out")
	// ErrNoRouteMatched: RequireTransactional was given a pattern no routing rule covers while
	// the default transport is not transactional.
	ErrNoRouteMatched = errors.New("event: no route matched")
	// ErrUnknownPayload: a typed handler received a payload that is neither its type nor a raw
	// JSON payload it can decode.
	ErrUnknownPayload = errors.New("event: unknown payload")
	// ErrPayloadTooLarge: the JSON body exceeds 1 MiB, or there are more than 32 headers, or a
	// header key exceeds 128 bytes or a value 1024 bytes.
	ErrPayloadTooLarge = errors.New("event: payload too large")
	// ErrInvalidEventType: an event type that does not match ^[a-zA-Z0-9._-]+$.
	ErrInvalidEventType = errors.New("event: invalid event type")
	// ErrNilTypeParameter: SubscribeTyped with a type parameter whose zero value cannot name its
	// event type (an interface type).
	ErrNilTypeParameter = errors.New("event: type parameter has no event type")
	// ErrGroupRequired: a subscription to a route with an at-least-once transport (outbox or
	// kvstore_stream) without WithGroup.
	ErrGroupRequired = errors.New("event: consumer group required")
	// ErrTxAsyncMutex: InTx and Async given together.
	ErrTxAsyncMutex = errors.New("event: a transactional publish cannot be asynchronous")
	// ErrTxScopeRequired: a transactional publish to tx_memory whose context carries no TxScope
	// (start the transaction with RunInTx or NewTxScope so delivery can follow the commit).
	ErrTxScopeRequired = errors.New("event: tx_memory needs a transaction scope")
	// ErrDeadLetterLoop: an event carrying the svc.dlq header was published to the outbox (the
	// dead-letter loop guard of wire-runtime §2.4).
	ErrDeadLetterLoop = errors.New("event: dead-lettered event refused by the outbox")
	// ErrSinkMissing: a routing rule sends events to the outbox, subscribers need them, and the
	// rule does not list the outbox sink (startup error naming the rule).
	ErrSinkMissing = errors.New("event: route lists outbox without its sink")
	// ErrInboxInProgress: another delivery holds the event's inbox lease; the transport
	// redelivers later.
	ErrInboxInProgress = errors.New("event: inbox entry in progress")
)
