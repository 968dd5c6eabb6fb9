package push

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/rpc"
)

// ServeHTTP is the endpoint GET <svc.push.path> (wire-runtime §3.1): a request that is not a
// WebSocket upgrade gets 426; the bearer token (Authorization header first, then
// __accessToken) is authenticated with the configured token type before the upgrade, failures
// answer the 401 envelope; the origin is checked against allowed_origins; after the upgrade the
// per-user cap closes with 4429 and a server shutting down with 1001.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, http.StatusText(http.StatusUpgradeRequired), http.StatusUpgradeRequired)
		return
	}
	p, err := s.auth.Authenticate(r.Context(), r, rpc.StrategyBearer)
	if errors.Is(err, rpc.ErrUnauthenticated) {
		err = ErrTokenRequired // no token: the original answers 1003, like a bad one
	}
	if err != nil {
		s.errs.WriteError(w, r, err)
		return
	}
	var b Binding
	if s.opts.Binder != nil {
		b = s.opts.Binder.Bind(r.Context(), r)
	}
	var raw net.Conn // nil on the plain path: writes are bounded by a context instead
	rw := w
	if s.smallBuffers {
		rw = smallBuffers{ResponseWriter: w, conn: &raw}
	}
	ws, err := websocket.Accept(rw, r, &s.accept)
	if err != nil {
		return // Accept answered (403 for a refused origin)
	}
	// The handler returns at once: the request's memory and the server goroutine's grown stack
	// are freed, and the connection lives on a fresh goroutine (bench/push: memory per idle
	// connection).
	go s.serve(ws, raw, p, b)
}

// isUpgrade reports whether r asks for a WebSocket upgrade.
func isUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

// headerHas reports whether a comma-separated header lists token (case-insensitive).
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// serve registers the connection and reads until it ends.
func (s *Service) serve(ws *websocket.Conn, raw net.Conn, p *rpc.Principal, b Binding) {
	ws.SetReadLimit(readLimit)
	c := &conn{ws: ws, raw: raw, hub: s.hub, user: p.ID, bind: b}
	c.setRoles(p.Roles)
	switch err := s.hub.add(c); {
	case errors.Is(err, errTooMany):
		_ = ws.Close(CloseTooManyConnections, ReasonTooMany)
		return
	case err != nil:
		_ = ws.Close(CloseGoingAway, ReasonShutdown)
		return
	}
	defer c.drop()
	if s.opts.Binder == nil {
		c.activate()
	} else {
		s.quarantine(c)
	}
	c.read()
}

// quarantine rechecks the token right after registration, before the first delivery: a
// revocation or a change of the user (disable, password, roles) that landed between the
// handshake's authentication and the registration found no connection to kick or recheck, so
// the connection gets no delivery until its token is known good (wire-runtime §3.3). A store
// error fails open.
func (s *Service) quarantine(c *conn) { s.recheckWithin([]*conn{c}) }

// recheckWithin rechecks conns off any request, bounded by write_timeout.
func (s *Service) recheckWithin(conns []*conn) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WriteTimeout)
	defer cancel()
	s.recheck(ctx, conns)
}
