// Package token is the token layer of the security module (issue #44): it owns issuing,
// verifying and revoking tokens and the cross-node change feed that carries revocations and
// user changes, behind a small API. Users, the directory, login challenges and strategies stay
// in package security, which builds this layer in its New and re-exports its names
// (security.JWTTokens, security.TokenService, security.ErrTokenInvalid, ...), so host code
// written against package security is unchanged. The wire is the one of wire-core §5.2–§5.5.
//
// # API
//
//   - issue: JWTTokens.Issue (a login: a token pair and its family row), Refresh (rotation with
//     reuse detection), MintAccessToken (tools and tests), Challenges (the login's challenge
//     state);
//   - verify: JWTTokens.Verify (signature and claims once per token per node, the verified-token
//     cache after that; the token state and the revocation set on every call), Recheck (the
//     revocable half, for long-lived connections), Inspect (family, login time, expiry);
//   - revoke: JWTTokens.Revoke (logout), RevokeFamily and RevokeUserFamilies (security/session);
//   - watch: the signals SignalFamilyRevoked, SignalSessionRevoked and SignalUserChanged, node-local
//     bus events (Signals) that push subscribes to; Feed.On for the module's own caches.
//
// # The logout path, in this package
//
//	JWTTokens.Revoke (tokens.go)            the family of the token (verified cache, else parse)
//	 └ revokeFamily                          three steps, whatever the write's outcome:
//	    ├ revoker.revoke (revoker.go)        group commit: the family row and its change row, one
//	    │                                    transaction per batch; a failed write is retried in
//	    │                                    the background until the database takes it
//	    ├ familyRevoked                      this node's revocation set (revokedset.go) and the
//	    │                                    signal SignalFamilyRevoked on this node's bus
//	    └ Feed.Publish (feed.go)             Redis, when svc.kvstore is on
//	other nodes: Feed.Poll (every 250 ms), Feed.Subscribe (Redis) or Feed.Listen (PostgreSQL
//	NOTIFY) apply the change row → familyRevoked → their revocation set and their own signal
//	every node: push, subscribed to SignalFamilyRevoked, closes that node's sockets of the family
//	(4401); Verify on any node finds the family in its set → 401/1003
//
// # Files
//
// jwt.go (claims, HS256 signer, AccessTTL), tokens.go (TokenService, JWTTokens: issue, verify,
// refresh, revoke), verified.go (the verified-token cache), revoker.go (group commit and retry),
// revokedset.go (the complete set of revoked families), family.go (sys_security_token_family),
// families.go (live families, forced revocation), state.go (the principal's token state:
// disable and password change), feed.go (sys_security_change: poll, Redis, LISTEN/NOTIFY),
// cache.go (the change-fed caches the module's stores use), secret.go (the signing key,
// configured or kept in sys_security_secret), challenge.go, mint.go, signals.go (the bus
// signals, the Auditor the module reports events through), service.go (NewJWT, Start,
// PurgeFamilies).
//
// # Tables, workers, config keys
//
// The tables (sys_security_token_family, sys_security_change, sys_security_secret) belong to
// the security module's migration set, which package security applies; the workers
// (change_poll, change_purge, change_subscribe, change_listen, token_family_purge) are listed in
// security.Service.Module with this package's bodies (Feed.Poll, Feed.Purge, Feed.Subscribe,
// Feed.Listen, JWTTokens.PurgeFamilies). Config keys read here: svc.security.secret,
// access_token_expires, token_expires, refresh_not_before, svc.app.name (the audience). The
// bounds and compatibility choices are security/doc.go's.
//
// Names: the exported types keep the names they had in package security (JWTTokens,
// TokenService, AuthTokens, ...), though token.TokenService stutters, so the move is a move:
// code written against package security, and changes made meanwhile to the moved files, carry
// over unchanged.
package token
