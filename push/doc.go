// Package push is the WebSocket push module of svc (spec §6.2, §8.3 `svc.push`; wire facts in
// spec/wire-runtime.md §3): one-way server pushes to authenticated browser sockets, the
// Notifier host code and other modules push with, revocation kicks, and the cross-node relay.
// The original's real client (`push/client.ts` of @vef-framework-react/core) works unmodified.
//
// # Route
//
// GET <svc.push.path> (default /ws), mounted only when svc.push.enabled:
//
//   - a request that is not a WebSocket upgrade: 426 Upgrade Required;
//   - the token: Authorization: Bearer first, then the __accessToken query parameter (the real
//     client's channel, re-read on every reconnect); no subprotocol;
//   - authenticated before the upgrade with the engine's bearer strategy, so with the
//     configured token type (jwt_token or opaque_token). A missing token answers the 401
//     envelope with code 1003 (ErrTokenRequired, like the original), a bad one the security
//     module's own 401 error (1002 expired, 1003 invalid, ...);
//   - allowed_origins: glob patterns of Origin hosts, or of scheme://host when a pattern holds
//     "://" (github.com/coder/websocket's rule; the request's own host is always allowed);
//     empty allows any origin. A refused origin answers 403 before the upgrade. The open default
//     is safe because nothing a browser sends by itself authenticates the handshake: only the
//     bearer strategy is asked, which reads an Authorization header with the Bearer scheme
//     (browsers never attach one on their own, unlike cookies or cached Basic credentials) or
//     the __accessToken query parameter (which a page must already know). No cookie is read, so
//     a cross-site page cannot open a socket as a logged-in user (cross-site WebSocket
//     hijacking). A host that registers a bearer strategy reading a cookie must set
//     allowed_origins;
//   - after the upgrade: over max_connections_per_user connections of the user on this node
//     (default 10) → close 4429 "push: per-user connection limit reached"; a node shutting down
//     → 1001.
//
// # Frames and close codes
//
// One JSON text frame per message, {id, type, payload?, time} (Message): id rpc.NewShortID (20
// characters of [0-9a-v], time-ordered) unless preset, payload omitted when nil, time RFC 3339 with nanoseconds and the
// local offset. A message is marshaled once; every recipient on every node gets the same
// bytes. Inbound data frames are read and discarded (read limit 4096 bytes: larger closes with
// 1009). The server pings every ping_interval; a pong missing for two intervals drops the
// connection. Writes are bounded by write_timeout.
//
// Close codes: 4401 CloseSessionInvalid ("session revoked" from kicks, "session invalid" when a
// recheck finds the token refused, "token expired" at a JWT's expiry), 4429
// CloseTooManyConnections, 1001 going away ("server shutting down"). The real client treats
// 4401 and 4429 as terminal.
//
// # Delivery
//
// Targets (Target): users (principal ids), roles (the principal's current roles: the
// handshake's, replaced by every recheck, see below) and broadcast; the union of a push's
// targets, each connection at most once. Each connection has send_buffer slots; a push is
// queued without blocking and a full buffer drops that connection at once without a close frame
// (the client reconnects), so a slow client never delays the others. A writer goroutine exists
// only while a connection has queued frames; an idle connection holds one reading goroutine and
// small buffers (bench/push).
//
// # Notifier
//
// Service.Push(ctx, msg, targets...) (the Notifier interface; svc.Running.Push returns the
// Service) validates, delivers locally, then relays. Errors only for invalid input:
// ErrTypeRequired (2800), ErrNoTarget (2801: no target, or users/roles without values),
// ErrUnknownTargetKind (2802). With push disabled it still validates and drops the push (no
// connection, no relay).
//
// # Sessions and kicks
//
// The composition root binds each connection through Options.Binder (package svc, over the
// security module; push never imports security). A socket lives exactly as long as /api
// accepts its token: Binder.Recheck is /api's own decision (the session or family still live,
// the principal not disabled, the token issued after the last password change, and the
// principal's current roles), asked again whenever something may have changed it:
//
//   - opaque tokens: the session id (hex SHA-256 of the token). The security module's
//     revocation hook (logout, forced logout, session-limit eviction) calls Kick: its
//     connections close with 4401 "session revoked" here and, through the relay, on every
//     node.
//   - JWTs (beyond the original, where JWT connections lived until closed): the token family,
//     issue time and expiry. The push-expiry worker (every second, on the server's clock)
//     closes a connection with 4401 "token expired" when its token expires; a revoked family
//     (logout, refresh-token reuse) closes its connections with 4401 "session revoked" on every
//     node through the security change feed, which each node signals to its own push module as the
//     bus event Options.Revocations.KickLocal names (KickLocal; within its one-second bound). Tokens
//     minted without a family (tools) are bound to their expiry and their user's changes.
//   - a change of a built-in user (disabled, password changed, roles, ...), made on any node or
//     by the CLI, reaches every node through the security change feed within its one-second
//     bound, signalled as the bus event Options.Revocations.UserChanged names, which calls
//     UserChanged: the user's connections on that node are rechecked. Those
//     /api now refuses close with 4401 "session invalid"; the others take the user's current
//     roles. A role change re-evaluates rather than closes, because /api keeps accepting the
//     token with the new roles: role-targeted pushes follow the roles exactly as permissions do.
//   - a new connection is quarantined (no delivery) until its first recheck right after
//     registration, which closes the race with a revocation or a user change during the
//     handshake.
//   - the push-recheck worker rechecks every connection every session_recheck_interval: the net
//     for what no hook reports (a revocation by another process without the relay, such as
//     `svc session revoke`; a host user store, which has no change feed). A store error keeps
//     the connection (fail open, like /api's token-state check).
//
// # Relay
//
// With push and the key-value store enabled, pushes and kicks are published on Redis
// publish/subscribe, channel svc:push:relay:<redis db>:<svc.app.name> (Channel); without
// svc.app.name New fails with ErrAppNameRequired. Frames {kind: "message"|"kick_sessions",
// origin, envelope?, targets?, sessionIds?}; a node ignores its own frames and unknown kinds.
// Best effort: a publish failure is logged and local delivery stands; kicks go through a
// bounded queue (256) and stay local when it is full (the recheck is the net). Workers:
// push-relay (subscriber loop, restarted after a Redis failure) and push-relay-kicks.
//
// # Event bridge (ours)
//
// svc.push.bridge lists bus events to forward without code: each entry names an event type
// (exact), an optional push type (default the event type) and targets: broadcast, users,
// roles and user_field (a top-level payload field holding the recipient id or ids). The push
// payload is the event's JSON payload. Subscriptions use the group "svc.push.bridge", so on an
// at-least-once transport one node handles each event and the relay carries it to the others.
//
// # CLI
//
// `svc push send --type T (--user ID... | --role R... | --broadcast) [--payload JSON]`
// publishes one relay frame (Send) that every running node delivers. A separate process holds no
// sockets, so without the key-value store it fails with ErrRelayRequired, and with push
// disabled with ErrDisabled. `svc session revoke` publishes a kick the same way (SendKick), so
// a forced logout from the command line closes the sockets at once when the relay is on.
//
// # Config keys
//
// svc.push.enabled, path, allowed_origins, ping_interval, write_timeout, send_buffer,
// max_connections_per_user (default 10, ours), session_recheck_interval (spec §8.3; here every
// connection's token, not only opaque sessions) and bridge (ours). No tables.
//
// # Workers
//
// push-heartbeat (ping_interval), push-expiry (1 s), push-recheck (session_recheck_interval,
// with a binder), push-relay and push-relay-kicks (loops, with the relay).
//
// # Metrics
//
// On app.Platform.Metrics, read from the hub's counters at scrape time (docs/operations.md):
// svc_push_connections, svc_push_dropped_slow_clients_total and svc_push_messages_total{result}.
//
// # Spec-compatibility choices
//
//   - A missing token is 401/1003 like a bad one (the original's middleware), not 1000.
//   - JWT connections end at token expiry and family revocation (the original kept them).
//   - Every connection ends, on every node within a second, when its user is disabled or its
//     password changed, and follows its user's current roles (the original kept the
//     handshake's principal until the socket closed).
//   - max_connections_per_user defaults to 10 (the spec's 0 means unlimited): unset or 0 takes
//     10, a negative value removes the cap, so one token cannot open sockets without bound.
//   - The per-user cap is checked after the upgrade, so the client sees a terminal 4429 close
//     rather than an HTTP error it would retry.
//   - The event bridge and `svc push send` are ours; the original had neither.
package push
