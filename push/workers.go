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
		if !c.expires.IsZero() && !now.Before(c.expires) {
			c.closeWith(CloseSessionInvalid, ReasonTokenExpired)
		}
	}
	return nil
}

// Recheck looks up the opaque session of every connection (the push-recheck worker, every
// session_recheck_interval; a presence check that does not extend the session) and closes the
// connections of sessions that ended with 4401 "session invalid". A lookup error skips the
// session (fail open).
func (s *Service) Recheck(ctx context.Context) error {
	for key, conns := range s.hub.keyed() {
		if !conns[0].session {
			continue
		}
		live, err := s.opts.Binder.Live(ctx, key)
		if err != nil {
			s.log.WarnContext(ctx, "push: session recheck failed, keeping its connections", slog.Any("error", err))
			continue
		}
		for _, c := range conns {
			if !live {
				c.closeWith(CloseSessionInvalid, ReasonSessionInvalid)
			} else {
				c.activate()
			}
		}
	}
	return nil
}
