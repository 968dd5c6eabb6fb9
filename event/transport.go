package event

import (
	"context"

	"github.com/uptrace/bun"
)

// capabilities describe a transport (wire-runtime §2.3).
type capabilities struct {
	// transactional: accepts a publish inside the caller's transaction.
	transactional bool
	// atLeastOnce: redelivers until a handler succeeds, so handlers need the inbox.
	atLeastOnce bool
	// publishOnly: has no subscribers of its own (the outbox relays to its sink).
	publishOnly bool
}

// subscription is one handler registered on one transport. handler is already wrapped in the
// middleware chain for that transport.
type subscription struct {
	eventType   string
	group       string
	concurrency int
	handler     Handler
}

// transport is one of the four transports. A transport buffers subscriptions made before start
// and begins delivering at start; stop flushes what it queued, bounded by ctx.
type transport interface {
	caps() capabilities
	publish(ctx context.Context, env *Envelope) error
	subscribe(s *subscription) error
	unsubscribe(s *subscription)
	start(ctx context.Context) error
	stop(ctx context.Context) error
}

// txTransport is a transactional transport.
type txTransport interface {
	transport
	publishTx(ctx context.Context, tx bun.IDB, env *Envelope) error
}
