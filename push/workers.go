package push

import (
	"context"
	"log/slog"
)

// Heartbeat pings every connection (the push-heartbeat worker, every ping_interval); a
// connection whose pong does not arrive within two intervals is dropped (wire-runtime §3.2).
func (s *Service) Heartbeat(context.Context) error {
	timeout := 2 * s.cfg.PingInterval
	for _, c := range s.hub.all() {
		if !c.pinging.Load() {
			go c.ping(timeout)
		}
	}
	return nil
}

// Expire closes with 4401 "token expired" the connections whose token expired on the server's
// clock (the push-expiry worker, every second): JWT connections end with their token.
func (s *Service) Expire(context.Context) error {
	now := s.clock()
	for _, c := range s.hub.all() {
		if exp := c.bind.Expires; !exp.IsZero() && !now.Before(exp) {
			c.closeWith(CloseSessionInvalid, ReasonTokenExpired)
		}
	}
	return nil
}

// Recheck re-decides every connection of this node through Binder.Recheck (the push-recheck
// worker, every session_recheck_interval; it never extends a session): a connection whose token
// /api now refuses closes with 4401 "session invalid", the others take the principal's current
// roles. It is the net under the hooks: revocations by another process without the relay (`svc
// session revoke`) and changes of a host user store, which has no change feed. A lookup error
// keeps the connection (fail open).
func (s *Service) Recheck(ctx context.Context) error {
	s.recheck(ctx, s.hub.all())
	return nil
}

// recheck re-decides conns; connections of one user sharing a revocation key and issue time
// (the tabs of one opaque session, one JWT) are looked up once.
func (s *Service) recheck(ctx context.Context, conns []*conn) {
	type verdict struct {
		roles []string
		live  bool
		err   error
	}
	seen := make(map[string]verdict, len(conns))
	for _, c := range conns {
		id := c.user + "\x00" + c.bind.Key + "\x00" + c.bind.IssuedAt.String()
		v, ok := seen[id]
		if !ok {
			v.roles, v.live, v.err = s.opts.Binder.Recheck(ctx, c.user, c.bind)
			seen[id] = v
			if v.err != nil {
				s.log.WarnContext(ctx, "push: token recheck failed, keeping the connection", slog.Any("error", v.err))
			}
		}
		switch {
		case v.err != nil:
			c.activate()
		case !v.live:
			c.closeWith(CloseSessionInvalid, ReasonSessionInvalid)
		default:
			if v.roles != nil {
				c.setRoles(v.roles)
			}
			c.activate()
		}
	}
}
