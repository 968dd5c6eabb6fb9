package svc

// The composition root's adapters between modules: modules do not import each other
// (ARCHITECTURE.md, dependency direction), so where one needs another, the module declares the
// shape it needs and the root converts here. Every adapter is passed to a constructor in
// boot.go's chain; none is set on a built module.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/audit"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
)

// busAuditSink is the /api engine's audit sink onto the bus: it publishes each record as
// rpc.EventRequestAudit (its rpc.AuditEvent) asynchronously. It never fails the request: a full
// async queue makes the bus publish synchronously, and a publish error is only logged. It lives
// here, not in rpc, so that the /api engine depends on no bus, database or Redis.
type busAuditSink struct {
	bus    event.Publisher
	logger *slog.Logger
}

var _ rpc.AuditSink = busAuditSink{}

// Audit implements rpc.AuditSink.
func (b busAuditSink) Audit(ctx context.Context, rec rpc.AuditRecord) {
	err := b.bus.Publish(ctx, event.Named{Type: rpc.EventRequestAudit, Payload: rec.Event()}, event.Async())
	if err != nil {
		b.logger.ErrorContext(ctx, "svc: publish audit event", slog.String("request_id", rec.RequestID), slog.Any("err", err))
	}
}

// pushBinder binds push connections to the security module's tokens: an opaque token to its
// session (kicked on revocation, rechecked by push), a JWT to its token family (kicked when the
// family is revoked), its issue time and its expiry. Its Recheck is the decision /api makes on
// every request (Sessions.Get, JWTTokens.Recheck), so a socket ends when its token stops
// working on /api. Push never imports security; this is the composition root's adapter.
type pushBinder struct {
	sessions *security.Sessions  // nil unless token_type is opaque_token
	jwt      *security.JWTTokens // nil unless the built-in JWT service
}

var _ push.Binder = pushBinder{}

// newPushBinder returns the binder of sec, or nil when a host token service leaves nothing to
// bind.
func newPushBinder(sec *security.Service) push.Binder {
	b := pushBinder{sessions: sec.Sessions()}
	b.jwt, _ = sec.Tokens().(*security.JWTTokens)
	if b.sessions == nil && b.jwt == nil {
		return nil
	}
	return b
}

// Bind implements push.Binder.
func (b pushBinder) Bind(_ context.Context, r *http.Request) push.Binding {
	token := security.BearerToken(r)
	if b.sessions != nil {
		return push.Binding{Key: security.SessionID(token), Session: true}
	}
	if info, ok := b.jwt.Inspect(token); ok {
		return push.Binding{Key: info.Family, IssuedAt: info.IssuedAt, Expires: info.Expires}
	}
	return push.Binding{}
}

// Recheck implements push.Binder: an opaque session through Sessions.Get (which does not slide
// the expiry), a JWT through JWTTokens.Recheck. A binding without an issue time (a token Inspect
// could not read, which cannot happen after the handshake authenticated it) is kept.
func (b pushBinder) Recheck(ctx context.Context, userID string, bind push.Binding) ([]string, bool, error) {
	if bind.Session {
		s, err := b.sessions.Get(ctx, bind.Key)
		if err != nil || s == nil || s.Principal == nil {
			return nil, s != nil, err
		}
		return s.Principal.Roles, true, nil
	}
	if b.jwt == nil || bind.IssuedAt.IsZero() {
		return nil, true, nil
	}
	roles, err := b.jwt.Recheck(ctx, userID, bind.Key, bind.IssuedAt)
	if errors.Is(err, security.ErrTokenInvalid) {
		return nil, false, nil
	}
	return roles, err == nil, err
}

// pushOptions are the push module's options over the security module: the binder of its tokens
// (nil when a host token service leaves nothing to bind) and its revocations.
func pushOptions(sec *security.Service) push.Options {
	return push.Options{Binder: newPushBinder(sec), Revocations: push.RevocationEvents{
		Kick: token.SignalSessionRevoked, KickLocal: token.SignalFamilyRevoked, UserChanged: token.SignalUserChanged}}
}

// approvalOptions completes the host's approval options: the built-in directory (departments,
// superiors and roles of the built-in user store, docs/approval.md) for every directory part
// the host left nil, the schema module's inspector for business bindings and the push module
// as the Notifier (approval.task.created, urged, deadline_warning and cc.notified reach the
// recipients' open tabs).
func approvalOptions(o approval.Options, dir *security.Directory, sch *schema.Service, psh *push.Service) approval.Options {
	if o.Directory == nil {
		o.Directory = builtinDirectory{dir}
	}
	if o.Tables == nil {
		o.Tables = schemaTables{sch}
	}
	if o.Notifier == nil {
		o.Notifier = psh
	}
	return o
}

// builtinDirectory adapts the security module's directory to approval.Directory.
type builtinDirectory struct{ d *security.Directory }

var _ approval.Directory = builtinDirectory{}

func (b builtinDirectory) Superior(ctx context.Context, userID string) (string, error) {
	return b.d.Superior(ctx, userID)
}

func (b builtinDirectory) DepartmentLeaders(ctx context.Context, deptID string) ([]string, error) {
	return b.d.DepartmentLeaders(ctx, deptID)
}

func (b builtinDirectory) RoleUsers(ctx context.Context, role string) ([]string, error) {
	return b.d.RoleUsers(ctx, role)
}

func (b builtinDirectory) ResolveUsers(ctx context.Context, ids []string) (map[string]approval.UserInfo, error) {
	users, err := b.d.ResolveUsers(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]approval.UserInfo, len(users))
	for id, u := range users {
		out[id] = approval.UserInfo(u)
	}
	return out, nil
}

func (b builtinDirectory) UserDepartment(ctx context.Context, userID string) (string, string, error) {
	return b.d.UserDepartment(ctx, userID)
}

// schemaTables adapts the schema module's inspector to approval.TableInspector.
type schemaTables struct{ s *schema.Service }

func (t schemaTables) InspectTable(ctx context.Context, name string) (*approval.Table, error) {
	ts, err := t.s.InspectTable(ctx, name)
	if err != nil || ts == nil {
		return nil, err
	}
	out := &approval.Table{Columns: make(map[string]bool, len(ts.Columns))}
	for _, c := range ts.Columns {
		out.Columns[c.Name] = c.Nullable
	}
	if ts.PrimaryKey != nil {
		out.PrimaryKey = ts.PrimaryKey.Columns
	}
	for _, u := range ts.UniqueKeys {
		if u.Predicate == "" && !u.HasExpressions {
			out.UniqueKeys = append(out.UniqueKeys, u.Columns)
		}
	}
	return out, nil
}

// integrationOptions completes the host's integration options: outbound calls go through the ops
// transport (client spans, traceparent) unless the host wrapped them itself.
func integrationOptions(o integration.Options, tel *ops.Telemetry) integration.Options {
	if o.WrapTransport == nil {
		tp := tel.TracerProvider()
		o.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return ops.Transport(tp, rt) }
	}
	return o
}

// integrationStats adapts the integration module's counters to the monitor's inspector.
func integrationStats(st *integration.Stats) monitor.StatsInspector {
	return monitor.StatsInspectorFunc(func() []monitor.InvocationStats {
		in := st.InvocationStats()
		out := make([]monitor.InvocationStats, len(in))
		for i, e := range in {
			out[i] = monitor.InvocationStats{System: e.System, Contract: e.Contract, Direction: e.Direction,
				Calls: e.Calls, Successes: e.Successes, Failures: e.Failures, AvgDurationMs: e.AvgDurationMs,
				MaxDurationMs: e.MaxDurationMs, LastError: e.LastError, LastErrorAt: e.LastErrorAt}
		}
		return out
	})
}

// streamInspector is the bus's InspectStreams in the monitor's types (wire-runtime §2.8), or nil
// when the kvstore_stream transport is off, so get_event_streams answers {enabled:false}.
func streamInspector(bus *event.Bus, cfg config.Event) monitor.StreamInspector {
	if !cfg.Transports.KVStoreStream.Enabled {
		return nil
	}
	return monitor.StreamInspectorFunc(func(ctx context.Context) ([]monitor.StreamInfo, error) {
		report, err := bus.InspectStreams(ctx)
		if err != nil {
			return nil, err
		}
		streams := make([]monitor.StreamInfo, 0, len(report.Streams))
		for _, st := range report.Streams {
			info := monitor.StreamInfo{Stream: st.Stream, Length: st.Length, Groups: make([]monitor.StreamGroupInfo, 0, len(st.Groups))}
			for _, g := range st.Groups {
				info.Groups = append(info.Groups, monitor.StreamGroupInfo{Name: g.Name, Consumers: g.Consumers,
					Pending: g.Pending, Lag: g.Lag, LastDeliveredID: g.LastDeliveredID})
			}
			streams = append(streams, info)
		}
		return streams, nil
	})
}

// securityAuditSink puts security's events into the audit trail (issue #47): logins and failed
// logins, lockouts, logouts, revocations, refresh-token reuse and the trust-login gateway's
// codes and refusals. Token refreshes are left out: they are routine, one per client every
// access-token lifetime, and say nothing about who did what. Nil when the trail is off.
func securityAuditSink(trail *audit.Service) security.EventSink {
	if !trail.Enabled() {
		return nil
	}
	return security.EventSinkFunc(func(_ context.Context, e security.Event) {
		if e.Type == security.EventTokenRefreshed {
			return
		}
		failed := e.Type == security.EventLoginFailed || e.Type == security.EventAccountLocked ||
			e.Type == security.EventRefreshReuseDetected || e.Type == security.EventTrustLoginFailed
		trail.Record(audit.Event{Action: strings.TrimPrefix(e.Type, "svc.security."), At: e.Time, RequestID: e.RequestID,
			ClientIP: e.ClientIP, UserID: e.PrincipalID, UserName: e.Identifier, OK: !failed,
			Detail: securityAuditDetail{LoginType: e.LoginType, Reason: e.Reason, SessionID: e.SessionID, AppID: e.AppID,
				RetryAfterMs: e.RetryAfter.Milliseconds()}})
	})
}

// securityAuditDetail is the detail of a security event's audit record: no secret, only ids
// and machine words.
type securityAuditDetail struct {
	LoginType    string `json:"loginType,omitempty"`
	Reason       string `json:"reason,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	AppID        string `json:"appId,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}
