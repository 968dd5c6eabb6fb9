package security

import (
	"context"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
)

// Event types emitted by the security module. Names follow the svc. prefix of the spec's event
// names; payloads never contain a password, token, code or secret.
const (
	EventLoginSucceeded       = "svc.security.login_succeeded"
	EventLoginFailed          = "svc.security.login_failed"
	EventAccountLocked        = "svc.security.account_locked"
	EventLogout               = "svc.security.logout"
	EventTokenRefreshed       = "svc.security.token_refreshed"
	EventRefreshReuseDetected = "svc.security.refresh_reuse_detected"
	// EventSessionRevoked: an opaque-token session ended before its time (Reason logout,
	// evicted or forced), or a token family was revoked by an operator (forced; SessionID is
	// the family id).
	EventSessionRevoked = "svc.security.session_revoked"
	// EventTrustCodeIssued: the trust-login gateway redirected with a one-time code.
	EventTrustCodeIssued = "svc.security.trust_code_issued"
	// EventTrustLoginFailed: the trust-login gateway refused a request (Reason says why).
	EventTrustLoginFailed = "svc.security.trust_login_failed"
	// EventLogin is the original framework's login event (wire-runtime §2.9), published with
	// every EventLoginSucceeded and EventLoginFailed; its payload is LoginEvent.
	EventLogin = "svc.security.login"
)

// Event is one security event. Identifier is the login identifier as typed (normalized), which
// may name a user that does not exist; it is never a credential.
type Event struct {
	Type        string    `json:"type"`
	Time        time.Time `json:"time"`
	RequestID   string    `json:"requestId,omitempty"`
	ClientIP    string    `json:"clientIp,omitempty"`
	LoginType   string    `json:"loginType,omitempty"`
	Identifier  string    `json:"identifier,omitempty"`
	PrincipalID string    `json:"principalId,omitempty"`
	// AppID is the trust-login app of the trust events.
	AppID string `json:"appId,omitempty"`
	// SessionID is the opaque session of EventSessionRevoked (the token's hash, not the token).
	SessionID string `json:"sessionId,omitempty"`
	// Reason is a short machine word: "invalid_credentials", "locked", "reuse", a challenge
	// type, or the code of a failure.
	Reason string `json:"reason,omitempty"`
	// RetryAfter is the lockout wait of EventAccountLocked.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
}

// EventSink receives security events. On the server the event bus plugs in here (BusSink);
// without a bus the default sink logs them. Emit must not block the request for long and must
// not fail it.
type EventSink interface {
	Emit(ctx context.Context, e Event)
}

// EventSinkFunc adapts a function to EventSink.
type EventSinkFunc func(ctx context.Context, e Event)

// Emit implements EventSink.
func (f EventSinkFunc) Emit(ctx context.Context, e Event) { f(ctx, e) }

// emitter stamps events with time, request id and client IP before handing them to the sink.
type emitter struct {
	sink EventSink
	now  func() time.Time
}

func (m *emitter) emit(ctx context.Context, e Event) {
	if m == nil || m.sink == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = m.now()
	}
	info := rpc.RequestInfoFrom(ctx)
	if e.RequestID == "" {
		e.RequestID = info.ID
	}
	if e.ClientIP == "" {
		e.ClientIP = info.ClientIP
	}
	m.sink.Emit(ctx, e)
}

// LoginEvent is the payload of EventLogin (wire-runtime §2.9). UserID is null on failure.
// userAgent and errorCode of the original are not carried: the request info of svc has no
// user agent, and a failed login's reason is the machine word of FailReason.
type LoginEvent struct {
	AuthType   string  `json:"authType"`
	UserID     *string `json:"userId"`
	Username   string  `json:"username"`
	LoginIP    string  `json:"loginIp"`
	TraceID    string  `json:"traceId"`
	IsOK       bool    `json:"isOk"`
	FailReason string  `json:"failReason,omitempty"`
}

// EventType returns EventLogin, so subscribers can use event.SubscribeTyped.
func (LoginEvent) EventType() string { return EventLogin }

// BusSink returns the EventSink that publishes each event on the bus asynchronously, under its
// Type with the Event as payload, plus EventLogin for login successes and failures. It never
// fails or blocks a login beyond the bus's async queue: when the queue is full the bus publishes
// synchronously, and a publish error is only logged.
func BusSink(bus event.Publisher, logger *slog.Logger) EventSink {
	return busSink{bus: bus, logger: logger}
}

// busSink is the event bus as an EventSink.
type busSink struct {
	bus    event.Publisher
	logger *slog.Logger
}

var _ EventSink = busSink{}

// Emit implements EventSink.
func (b busSink) Emit(ctx context.Context, e Event) {
	b.publish(ctx, event.Named{Type: e.Type, Payload: e})
	if e.Type == EventLoginSucceeded || e.Type == EventLoginFailed {
		login := LoginEvent{AuthType: e.LoginType, Username: e.Identifier, LoginIP: e.ClientIP, TraceID: e.RequestID,
			IsOK: e.Type == EventLoginSucceeded}
		if login.IsOK {
			login.UserID = &e.PrincipalID
		} else {
			login.FailReason = e.Reason
		}
		b.publish(ctx, event.Named{Type: EventLogin, Payload: login})
	}
}

func (b busSink) publish(ctx context.Context, evt event.Named) {
	if err := b.bus.Publish(context.WithoutCancel(ctx), evt, event.Async()); err != nil {
		b.logger.ErrorContext(ctx, "security: publish event", slog.String("event", evt.Type), slog.Any("err", err))
	}
}

// EventSinks returns the EventSink that emits each event to every non-nil sink, in order. New
// uses it so a host sink (Options.Events) adds to the event bus's instead of replacing it.
func EventSinks(sinks ...EventSink) EventSink {
	var list eventSinks
	for _, s := range sinks {
		if s != nil {
			list = append(list, s)
		}
	}
	return list
}

// eventSinks fans an event out to several sinks.
type eventSinks []EventSink

// Emit implements EventSink.
func (l eventSinks) Emit(ctx context.Context, e Event) {
	for _, s := range l {
		s.Emit(ctx, e)
	}
}
