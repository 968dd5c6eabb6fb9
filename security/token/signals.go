package token

import (
	"context"
	"log/slog"

	"github.com/svc-framework/svc/event"
)

// Signals: bus events that tell this node's modules which credentials just stopped working, so
// long-lived connections (push's WebSockets) end when /api starts refusing their token (issue
// #44). They are node-local: every node publishes them itself, for its own revocations and for
// the ones its change feed applies, so each node's subscribers see every revocation once it
// reaches that node. The composition root routes SignalPattern to the memory transport
// (event.WithLocalRoutes), whatever svc.event.routing says for svc.security.*; a transport with
// consumer groups would hand each signal to one node only.
const (
	// SignalFamilyRevoked: a token family was revoked (logout, refresh-token reuse, forced), on
	// this node or, through the change feed, on another. Ref is the family id.
	SignalFamilyRevoked = "svc.security.signal.family_revoked"
	// SignalSessionRevoked: an opaque session was revoked by this node (logout, evicted,
	// forced). Ref is the session id. Other nodes do not publish it (their subscribers relay
	// it: push's Kick).
	SignalSessionRevoked = "svc.security.signal.session_revoked"
	// SignalUserChanged: a built-in user changed (disabled, password, roles, ...), on this node
	// or through the change feed; its tokens must be checked again. Ref is the user id.
	SignalUserChanged = "svc.security.signal.user_changed"
	// SignalPattern matches the three signal types (path.Match syntax, as svc.event.routing).
	SignalPattern = "svc.security.signal.*"
)

// Signal is the payload of every signal type. It carries no credential: a family id, a
// session id (the token's hash) or a user id.
type Signal struct {
	Ref string `json:"ref"`
}

// Signals publishes the signal events on the bus. A nil *Signals, or one without a bus, drops
// them (a process that runs no bus, such as the CLI, has no connection to end).
type Signals struct {
	bus    event.Publisher
	logger *slog.Logger
}

// NewSignals returns the publisher of the signals on bus (nil: none are published).
func NewSignals(bus event.Publisher, logger *slog.Logger) *Signals {
	return &Signals{bus: bus, logger: logger}
}

// Send publishes the signal typ for ref. It is called on the revoking request or the change
// feed's goroutine; the memory transport only queues the event, so it does not wait for the
// subscribers. A failed publish (the transport's queue full) is logged: push's periodic
// recheck (svc.push.session_recheck_interval) still ends the connection.
func (s *Signals) Send(ctx context.Context, typ, ref string) {
	if s == nil || s.bus == nil || ref == "" {
		return
	}
	if err := s.bus.Publish(context.WithoutCancel(ctx), event.Named{Type: typ, Payload: Signal{Ref: ref}}); err != nil {
		s.logger.WarnContext(ctx, "security signal not published", slog.String("event", typ), slog.Any("error", err))
	}
}

// Auditor receives what the token layer did that the security module reports as its events
// (security.EventSink): the security module implements it.
type Auditor interface {
	// RefreshReused: a refresh token was presented a second time; its family is revoked.
	RefreshReused(ctx context.Context, principalID string)
	// FamilyForced: an operator revoked the token family fid of principalID (security/session).
	FamilyForced(ctx context.Context, principalID, fid string)
}
