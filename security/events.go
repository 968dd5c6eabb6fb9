package security

import (
	"context"
	"time"

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
	// evicted or forced).
	EventSessionRevoked = "svc.security.session_revoked"
	// EventTrustCodeIssued: the trust-login gateway redirected with a one-time code.
	EventTrustCodeIssued = "svc.security.trust_code_issued"
	// EventTrustLoginFailed: the trust-login gateway refused a request (Reason says why).
	EventTrustLoginFailed = "svc.security.trust_login_failed"
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

// EventSink receives security events. The event bus plugs in here; until then the default sink
// logs them. Emit must not block the request for long and must not fail it.
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
