package push

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/internal/bypass"
	"github.com/svc-framework/svc/internal/waitgroup"
)

//go:embed messages
var messageFiles embed.FS

// Messages returns the module's message catalog: messages/<lang>/push.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// expiryInterval is how often connections whose token expired are closed (JWT).
const expiryInterval = time.Second

// Binding ties an authenticated connection to what can end it.
type Binding struct {
	// Key is the revocation key Kick matches: the opaque session id, or the JWT token family;
	// "" when nothing can revoke the token.
	Key string
	// Session marks Key as an opaque session.
	Session bool
	// IssuedAt is when the token was issued (JWT iat), for Binder.Recheck: a password change or
	// disable after it refuses the token. Zero for opaque sessions (the session knows it).
	IssuedAt time.Time
	// Expires is when the token expires (JWT); the connection is closed with 4401 then. Zero
	// means never.
	Expires time.Time
}

// Binder is what push needs from the token layer; the composition root implements it over the
// security module (push never imports security).
type Binder interface {
	// Bind returns the binding of the access token of a handshake that authenticated.
	Bind(ctx context.Context, r *http.Request) Binding
	// Recheck decides again, as /api would decide now, whether the token of a connection of
	// userID bound to b is accepted: live is false once /api refuses it (session ended, principal
	// disabled, password changed after the token was issued, family revoked); roles are the
	// principal's current roles (nil: keep the handshake's). It must not extend a session. An
	// error keeps the connection as it is (fail open).
	Recheck(ctx context.Context, userID string, b Binding) (roles []string, live bool, err error)
}

// RevocationEvents names the bus events that end or recheck connections (a session revoked, a
// token family revoked, a user disabled or changed). Push subscribes to them on Platform.Events when
// it is built, like any module subscribes to the bus; the composition root names the security
// module's signals (push never imports security). Each event's payload is a JSON object whose
// "ref" member is the key or user id. An empty name subscribes to nothing.
type RevocationEvents struct {
	// Kick ends the connections bound to ref (an opaque session id) on this node and, through
	// the relay, on every other: the event is published on the revoking node only.
	Kick string
	// KickLocal ends the connections bound to ref (a token family) on this node only: every node
	// publishes the event for itself (through the security change feed).
	KickLocal string
	// UserChanged re-decides the connections of user ref on this node (Binder.Recheck); every
	// node publishes the event for itself.
	UserChanged string
}

// Options are what the composition root plugs into the module. Every field is optional.
type Options struct {
	// Binder binds connections to sessions, token families and expiry and rechecks them; nil:
	// connections live until they close (no kicks, no recheck, no expiry).
	Binder Binder
	// Revocations names the events that end or recheck connections; empty: only Kick,
	// KickLocal and UserChanged called by host code do.
	Revocations RevocationEvents
	// NodeID names this node in relay frames; default a random id.
	NodeID string
}

// Service is the push module: the WebSocket endpoint, this node's hub, the relay and the
// Notifier. It works with push disabled: the endpoint is not mounted and pushes find no
// connection.
type Service struct {
	cfg    config.Push
	log    *slog.Logger
	clock  func() time.Time
	auth   app.Authenticator
	errs   app.ErrorRenderer
	opts   Options
	hub    *hub
	relay  *relay // nil without the key-value store or with push disabled
	accept websocket.AcceptOptions

	smallBuffers bool // bypass.PushBuffers: Accept gets push/hijack.go's small buffers
}

// Notifier sends pushes; *Service implements it. Host code and other modules depend on this.
type Notifier interface {
	// Push delivers msg to the connections selected by targets (their union, each connection
	// at most once) on this node and, through the relay, on every other. It fails only for
	// invalid input: ErrTypeRequired, ErrNoTarget, ErrUnknownTargetKind.
	Push(ctx context.Context, msg Message, targets ...Target) error
}

var _ Notifier = (*Service)(nil)

// revocationRef is the payload push reads from a revocation event.
type revocationRef struct {
	Ref string `json:"ref"`
}

// subscribeRevocations subscribes the kicks and rechecks of ev on bus (nil: none). The routes
// of these events are node-local (memory): no group.
func (s *Service) subscribeRevocations(bus event.Subscriber, ev RevocationEvents) error {
	if bus == nil {
		return nil
	}
	for _, sub := range []struct {
		typ string
		do  func(ctx context.Context, ref string)
	}{
		{ev.Kick, func(ctx context.Context, ref string) { s.Kick(ctx, ref) }},
		{ev.KickLocal, func(_ context.Context, ref string) { s.KickLocal(ref) }},
		{ev.UserChanged, func(_ context.Context, ref string) { s.UserChanged(ref) }},
	} {
		if sub.typ == "" {
			continue
		}
		do := sub.do
		if _, err := bus.Subscribe(sub.typ, func(ctx context.Context, env *event.Envelope) error {
			r, err := event.DecodePayload[revocationRef](env)
			if err != nil || r.Ref == "" {
				return nil // not a revocation: nothing to end
			}
			do(ctx, r.Ref)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// New builds the module from svc.push (spec §6.2, §8.3). With push and the key-value store
// enabled the relay needs svc.app.name (ErrAppNameRequired). It does no I/O; bridge routes
// (svc.push.bridge) subscribe on deps.Events here.
func New(deps app.Platform, api app.API, opts Options) (*Service, error) {
	if deps.Config == nil {
		return nil, errors.New("push: the configuration is required")
	}
	cfg := deps.Config.Push
	s := &Service{cfg: cfg, clock: deps.Clock, auth: api.Auth, errs: api.Errors, opts: opts,
		log:          deps.Logger.With(slog.String("module", "push")),
		hub:          newHub(cfg.MaxConnectionsPerUser, cfg.SendBuffer, cfg.WriteTimeout),
		accept:       websocket.AcceptOptions{OriginPatterns: cfg.AllowedOrigins, InsecureSkipVerify: len(cfg.AllowedOrigins) == 0},
		smallBuffers: bypass.On(bypass.PushBuffers)}
	if s.clock == nil {
		s.clock = time.Now
	}
	if !cfg.Enabled {
		return s, nil
	}
	if deps.KV != nil {
		if deps.Config.App.Name == "" {
			return nil, ErrAppNameRequired
		}
		s.relay = newRelay(deps.KV, Channel(deps.Config), opts.NodeID, s, s.log)
	}
	if err := s.subscribeBridge(deps.Events, cfg.Bridge); err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if err := s.subscribeRevocations(deps.Events, opts.Revocations); err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if err := s.registerMetrics(deps.Metrics); err != nil {
		return nil, fmt.Errorf("push: metrics: %w", err)
	}
	return s, nil
}

// Module lists what the module adds: with push enabled the route GET <svc.push.path>, the
// heartbeat, session-recheck and expiry workers and, with the relay, its subscriber and kick
// publisher; Stop closes every connection with 1001.
func (s *Service) Module() app.Module {
	m := app.Module{Name: "push", Messages: Messages()}
	if !s.cfg.Enabled {
		return m
	}
	m.Routes = []app.Route{{Pattern: "GET " + s.cfg.Path, Handler: s}}
	m.Workers = []app.Worker{
		{Name: "push-heartbeat", Interval: s.cfg.PingInterval, Run: s.Heartbeat},
		{Name: "push-expiry", Interval: expiryInterval, Run: s.Expire},
	}
	if s.opts.Binder != nil {
		m.Workers = append(m.Workers, app.Worker{Name: "push-recheck", Interval: s.cfg.SessionRecheckInterval, Run: s.Recheck})
	}
	if s.relay != nil {
		m.Workers = append(m.Workers, app.Worker{Name: "push-relay", Run: s.relay.subscribe},
			app.Worker{Name: "push-relay-kicks", Run: s.relay.publishKicks})
	}
	m.Stop = s.Stop
	return m
}

// PushToUsers pushes a message of type typ with payload to the connections of users: Push with
// NewMessage and ToUsers. It is the shape other modules declare as their notifier (the approval
// module's approval.Notifier), so they need not import this package.
func (s *Service) PushToUsers(ctx context.Context, typ string, payload any, users ...string) error {
	return s.Push(ctx, NewMessage(typ, payload), ToUsers(users...))
}

// Push implements Notifier: validate, encode once, deliver locally, then relay (best effort: a
// Redis failure is logged and local delivery stands).
func (s *Service) Push(ctx context.Context, msg Message, targets ...Target) error {
	if msg.Type == "" {
		return ErrTypeRequired
	}
	if err := validate(targets); err != nil {
		return err
	}
	frame, err := msg.encode(s.clock())
	if err != nil {
		return err
	}
	s.hub.deliver(frame, targets)
	if s.relay != nil {
		s.relay.publishMessage(ctx, frame, targets)
	}
	return nil
}

// Kick closes the connections of the revocation keys (opaque session ids, JWT token families)
// with 4401 "session revoked" on this node and, through the relay, on every other. It never
// blocks: the security module calls it from the revoking request.
func (s *Service) Kick(ctx context.Context, keys ...string) {
	s.KickLocal(keys...)
	if s.relay != nil && len(keys) > 0 {
		s.relay.queueKick(keys)
	}
}

// KickLocal closes the connections of the keys on this node only (revocations every node learns
// by itself, such as token families through the security change feed).
func (s *Service) KickLocal(keys ...string) {
	for _, c := range s.hub.byKeys(keys) {
		c.closeWith(CloseSessionInvalid, ReasonSessionRevoked)
	}
}

// UserChanged re-decides the connections of userID on this node through Binder.Recheck: those
// whose token /api now refuses (user disabled, password changed) close with 4401 "session
// invalid", the others take the user's current roles, so role-targeted pushes follow a role
// change as /api's permissions do. The security module calls it for every change of a user, on
// every node through its change feed (each node handles its own connections, like KickLocal).
// It never blocks: the recheck runs on its own goroutine.
func (s *Service) UserChanged(userID string) {
	if s.opts.Binder == nil {
		return
	}
	if conns := s.hub.ofUser(userID); len(conns) > 0 {
		go s.recheckWithin(conns)
	}
}

// Connections returns the number of connections open on this node that receive pushes (with a
// binder, a connection counts once its token passed the recheck right after registration).
func (s *Service) Connections() int { return int(s.hub.count.Load()) }

// Dropped returns how many connections this node dropped because their send buffer was full.
func (s *Service) Dropped() int64 { return s.hub.overflows.Load() }

// Stop closes every connection with 1001 "server shutting down" and refuses new ones; it waits
// for the close handshakes until ctx ends.
func (s *Service) Stop(ctx context.Context) error {
	s.hub.stopping.Store(true)
	for _, c := range s.hub.all() {
		c.closeWith(CloseGoingAway, ReasonShutdown)
	}
	_ = waitgroup.Wait(ctx, &s.hub.closers) // connections not closed by then are left to the process's end
	return nil
}

// deliverLocal delivers an encoded frame to this node's connections (relay frames of other
// nodes).
func (s *Service) deliverLocal(frame []byte, targets []Target) { s.hub.deliver(frame, targets) }
