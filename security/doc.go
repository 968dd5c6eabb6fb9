// Package security is the security module of svc (spec §2.3, §3 login flow, §4.1, §5, §7;
// wire-core §2.3, §3, §5): the security/auth resource, the token layer (JWT, or opaque sessions
// with session control), the bearer, api_key, http_basic and ip strategies, login challenges
// (TOTP), brute-force lockout, the password policy, trust login (SSO) and the built-in user
// store.
//
// # Resources and actions
//
// security/auth (version v1):
//
//	login              public, rate limit svc.security.login_rate_limit (6)  → LoginResult
//	resolve_challenge  public, rate limit svc.security.login_rate_limit (6)  → LoginResult
//	refresh            public, rate limit svc.security.refresh_rate_limit (1), only when the
//	                   token service refreshes (jwt_token; opaque_token: 404/1200)
//	                                                                         → AuthTokens, unwrapped
//	logout             bearer; revokes the JWT's family or the opaque session → null
//	get_user_info      bearer; params forwarded to the UserInfoLoader        → UserInfo
//
// security/user (v1, svc addition, issue #35; only with the built-in user store, otherwise no
// actions): find_page (keyword, role, disabled; meta page/size/sort) · get · list_roles —
// security.user.query; create — security.user.create; update (display name) —
// security.user.update; disable, enable — security.user.disable; set_roles —
// security.user.roles; reset_password — security.user.password; begin_totp, confirm_totp,
// remove_totp — security.user.totp. Users are addressed by id and answered as UserView; every
// change is audited, passes the grant rule (below) and calls the Store methods `svc user`
// calls. list_roles marks each role grantable for the caller. begin_totp answers the secret
// only for the caller's own account; for another it sets the user's totp_enroll flag and
// answers {atNextSignIn: true}: the user enrolls at its next sign-in (challenge
// totp_enrollment, order 150, data {secret, otpauthUrl}, response a code of the new secret).
// Errors: 2001, 2002, 1070 (no pending enrollment), 1071 (wrong enrollment code, 400), 1072
// (invalid user name), 1073 (disabling oneself), 1074 (the grant rule, 403), 1050 (policy).
//
// The grant rule (grant.go, issue #42): Service.CheckGrant(caller, before, after) is called by
// every account-changing operation of security/user and security/session (the MCP tools of
// those operations run the same handlers; the console calls /api); the CLI, the machine's
// operator, is exempt. Every role the account has before the change and after it must be
// RoleGrantable by the caller: each permission token of the role held by the caller, as the
// permission checker /api authorizes with decides (the built-in one by MatchPermission, so a
// pattern covers a pattern: "security.*" ⊇ "security.user.*", "*" only by "*"); a role
// svc.security.roles does not define only by a holder of "*". The composition root hands a
// WithPermissionChecker to the module (Options.Permissions), so both ask one checker.
//
// security/department (v1, svc's own resource, issue #46; the original's client has none):
// find_tree {keyword?} → [DepartmentNode] — security.department.query. The built-in directory's
// departments (what `svc dept` manages) as a tree by code, each {id, code, name, parentId?,
// leaderIds, children}; a keyword (name or code contains, any case) keeps what it finds and the
// ancestors. Read-only, not audited. It has no actions with Options.HideDepartments, which the
// composition root sets when the host gave approval its own organisation: the flows' department
// ids are then the host's, and a list of the built-in ones would mislead the console's picker.
//
// security/session (v1, svc addition; only with the built-in token service): list {userId} →
// {tokenType, items: [SessionView]} — security.session.query; revoke {id} (2001 when not live),
// revoke_user {userId} → {revoked} — security.session.revoke, audited. Items are token families
// (jwt_token: JWTTokens.Families, RevokeFamily, RevokeUserFamilies, which emit
// session_revoked with the family id) or opaque sessions (Sessions.List, Revoke, RevokeUser).
//
// LoginResult is {tokens:{accessToken, refreshToken?}} XOR {challengeToken, challenge:{type,
// data?, required}} (no refreshToken with opaque_token). No loader → 501/1500. Login type
// trust_code exchanges a gateway code (principal = app id, credentials = the code) while trust
// login is on, else 400/1001.
//
// # Routes
//
//	GET <svc.security.trust_login.path> (default /sso/trust), only while trust_login.enabled:
//	    the trust-login gateway (wire-core §5.9 leg 1). Query app_id, user_id, redirect,
//	    timestamp, nonce, signature → 302 to redirect with app_id and code added; failures are
//	    plain text: 401 (1060, 1062), 400 (1061), 429 (rate limit, Retry-After), 500 (store
//	    down). Always Cache-Control: no-store, Referrer-Policy: no-referrer.
//
// # Strategies
//
// bearer (engine default: Authorization Bearer, scheme case-insensitive, or ?__accessToken=),
// api_key (X-API-Key or the header named by the first argument; svc.security.api_keys),
// http_basic (svc.security.basic_accounts) and ip (svc.security.ip_whitelists, list named by
// the first argument, default "default"). Principals and codes as wire-core §3.1. The
// original's request-signature strategy (X-App-ID, X-Timestamp, X-Nonce, X-Signature) is not
// shipped (spec §5.1 names ip, api_key and http_basic); its error templates ErrAppIDRequired …
// ErrNonceAlreadyUsed (1009–1015, 1017–1020) and ErrAuthHeaderMissing/Invalid (1021, 1022) are,
// so a host strategy registered on the engine answers with the original's codes and messages.
//
// # The token layer
//
// Issuing, verifying and revoking tokens and the cross-node change feed are the subpackage
// security/token (issue #44; its doc.go lists what it owns and draws the logout path). This
// package builds it in New (module_build.go) and re-exports its names (tokens.go: JWTTokens,
// TokenService, AuthTokens, TokenState, ..., errors.go: ErrTokenInvalid, ...), so the API is
// unchanged. Users, the directory, login challenges, strategies, sessions (opaque tokens) and
// trust login stay here.
//
// # Configuration keys
//
// svc.security.revocation.fail_mode (closed | open) and .max_feed_age (10s);
// svc.security.secret, token_expires, refresh_not_before, login_rate_limit,
// refresh_rate_limit, hash_memory_budget (ours: the hash slots, HashSlots), token_type,
// ip_whitelists, api_keys, basic_accounts, roles (svc addition:
// role → permission tokens for the built-in permission checker), lockout.* (enabled,
// max_failures, window, lock_duration, strategy, backoff_base, backoff_max, key),
// password_policy.* (every rule of spec §5.3), session.* (max_concurrent, on_exceed, idle_ttl,
// max_lifetime, sliding; opaque_token only), trust_login.* (enabled, path, code_ttl,
// bind_user_agent, bind_client_ip, apps.<appId>.redirect_urls and .secret, rate_limit.max and
// .period). svc.kvstore.enabled moves the lockout state, the sessions and the trust-login
// nonces and codes to Redis under svc:lockout:<app>:, svc:session:<app>: (s:<id> hash per
// session, u:<userId> sorted set per user) and svc:trust:<app>: (nonce:, code:), app =
// svc.app.name, which is also the JWT audience.
//
// # Tables (migrations/{postgres,mysql,sqlite}, always applied)
//
//	sys_security_user              built-in users: argon2id/bcrypt hash, display name, roles,
//	                               disabled, TOTP secret (active and pending), password change
//	                               time, tokens_valid_after, totp_enroll (007: an enrollment
//	                               requested by someone else, finished at the next sign-in)
//	sys_security_password_history  hashes of earlier passwords (history_depth)
//	sys_security_token_family      refresh-token families: current jti, principal snapshot,
//	                               expiry, revocation (rotation and reuse detection), the
//	                               login's client IP (006); no index on revoked_at (it made each
//	                               revocation's UPDATE about ten times dearer on SQLite: the
//	                               index's NULL keys)
//	sys_security_totp_step         last accepted TOTP step per principal (no replay)
//	sys_security_session           opaque sessions (002): id = hex(SHA-256(token)), principal
//	                               id and snapshot, client IP, created, last seen, expiry, cap
//	sys_security_change            change log (003): seq, kind (user, family, session), ref,
//	                               created; read by every server to keep its caches current
//	sys_security_secret            the generated JWT signing secret (004): one row, id "jwt",
//	                               hex secret, creation time; used only when svc.security.secret
//	                               is not configured
//
// # Signing secret (issue #11; differs from spec §5.2's ephemeral key, see spec/README.md)
//
// No secret is shipped. A configured svc.security.secret always wins; it must be hex of at least
// 32 bytes and none of the values ever published in svc's repository or docs (config's list,
// compared after hex decoding), else startup fails with config.ErrSecretTooShort or
// config.ErrPublicSecret. Without one, the module's start step reads the row "jwt" of
// sys_security_secret; when it is absent it generates 32 random bytes and inserts them if still
// absent, then reads the row back, so nodes starting together on an empty database agree on
// the winner's secret and every node of a PostgreSQL or MySQL cluster shares it with no set-up.
// There is no per-process or public fallback: when the table cannot be read (migrations not
// applied, database down) startup fails with ErrSigningSecretUnavailable, which says to run
// `svc migrate` or set a secret. The security migrations are always applied at startup (no
// auto_migrate key), so this happens only when the database refuses them.
//
// Rotation: either set svc.security.secret on every node (the stored row is then ignored), or
// delete the row (DELETE FROM sys_security_secret) and restart every node — the first to start
// generates a new secret. Both invalidate every access, refresh and challenge token issued
// under the old secret (clients log in again); nodes still running with the old secret keep
// accepting old tokens until they restart, so restart all of them together. MintAccessToken
// (tests, tools) needs a configured secret, since it does not read the database; no CLI command
// mints or verifies tokens.
//
// Lifetime bound: an access token whose exp − iat exceeds the access lifetime
// (svc.security.access_token_expires, default 30 minutes, read in one place, accessTokenTTL) by
// more than the 10 s leeway, or that lacks iat, is refused with 401/1003 like any other invalid token, even when its signature verifies; refresh tokens
// are bounded by token_expires and challenge tokens by their 5 minutes the same way.
//
// # Workers
//
// token_family_purge (hourly, jwt_token): deletes families whose refresh token has expired.
// session_purge (hourly, opaque_token with sessions in the database): deletes expired sessions.
// change_poll (every 250 ms): applies new rows of sys_security_change to the caches.
// change_purge (hourly): deletes change rows older than an hour. change_subscribe (loop, with
// svc.kvstore.enabled): applies the changes other nodes publish on Redis. change_listen (loop,
// PostgreSQL): applies the changes announced by NOTIFY (one pooled connection held).
// Redis entries expire by TTL.
//
// # Metrics
//
// metrics.go registers on app.Platform.Metrics (served with svc.metrics.enabled, docs/operations.md)
// svc_security_logins_total{result} and svc_security_lockouts_total, counted by a sink New adds
// to the module's event sinks (the bus's and Options.Events); with Deps.Metrics nil there is no
// such sink.
//
// # Compatibility choices (spec/README.md order; where the original is silent)
//
//   - Tokens: HS256 with the hex secret; iss "svc" (the original's constant is "vef"; no client
//     reads it), aud = svc.app.name as a string, sub "<id>@<name>", shared jti, typ
//     access/refresh, rls and det on every access token (rls [] without roles, det null
//     without details; the refresh token has neither; tokens lacking them still verify); extra
//     claims uid and pnm carry id and name explicitly (ids may contain "@") and fid the token
//     family. Leeway 10 s. The type is checked before the times, so a refresh token used as an
//     access token is 1003, not 1004.
//   - Beyond the original: refresh-token rotation with reuse detection. Each login starts a
//     family in the database; refresh swaps its current jti with one conditional UPDATE (safe on
//     any number of nodes); an already exchanged refresh token revokes the whole family (1003,
//     event refresh_reuse_detected). Logout revokes the family; a revocation whose write fails
//     is applied on this node, published, and written again in the background until it
//     commits (found by bench/faults). A revoked family's refresh
//     token and access tokens (they carry its id, fid) are all refused (issue #11); otherwise
//     access tokens live out svc.security.access_token_expires (ours; default 30 minutes, the
//     original's fixed lifetime). Family writes are group-committed (revoker.go, issue #34):
//     logouts, reuse revocations and refresh rotations that arrive while a batch commits share
//     the next transaction (one UPDATE … WHERE id IN per reason, one multi-row INSERT of change
//     rows, one conditional UPDATE per rotation), so a burst does not queue on the database's
//     write lock; each request answers after its batch committed, so a logout that returned is
//     durable (SQLite: synchronous=NORMAL in WAL mode survives a crash of the process, not a
//     power loss; TestLogoutSurvivesCrash).
//   - Revocation set (revokedset.go, issue #34): each node holds every family revoked within
//     one access lifetime (+ leeway + 1 minute for clocks) — families, not tokens — in a plain
//     map from the 16-byte id to a uint32 expiry (no pointers; about 45 bytes per family at
//     10⁶, within 64), swept hourly by token_family_purge. It is complete, not a cache: start loads it from the change log's
//     family rows (the family table when the access lifetime exceeds the hour the log keeps),
//     after placing the change feed, and this node's revocations and the feed keep it current;
//     after a pause longer than half the log's retention the poll loads it again. So checking a
//     token's family reads nothing; a process that never started the module reads the family
//     row instead. A logged-out access token leaves the verified-token cache.
//   - Checking a token not seen before: golang-jwt's parser (HS256 only). Its cost, about
//     11 µs, is paid once per token per node: the verified-token cache answers every later use,
//     the logout of a token that was used included (issue #43 removed a hand-written decoder
//     that saved part of those 11 µs on first sight only).
//   - Beyond the original: tokens and sessions whose login was at or before a password change
//     or disable are refused (1003; issue #42: to the microsecond — JWTs carry the login's
//     instant as lat, Unix µs, kept by every refresh so a rotation never makes a login
//     younger; a token without lat counts at its iat; sessions compare their creation time,
//     µs in the database, ms in Redis; store times are truncated to µs before they are
//     written; a login that observed the change, such as the password_change challenge's, is
//     stamped one unit after ValidAfter; a challenge token issued at or before the change is
//     refused at resolve_challenge, 1031), and the roles of a built-in user's requests are the user's current roles, not
//     the token's (TokenState.Roles), so a removed role stops working on issued tokens. Refresh
//     and the bearer strategy read the same change-fed state; the bearer strategy fails open
//     if the store is down (the signature was valid) unless svc.security.revocation.fail_mode
//     is closed (the default: 503), refresh fails closed. A host
//     TokenStateLoader has no change feed: its answers are cached 5 s (refresh asks it each time).
//   - Caches and their bound (issue #13): users by id, token-family revocations, database
//     sessions and the directory's ResolveUsers (Service.Directory; a department assignment
//     records a user change) are served from per-node caches, so an authenticated request reads nothing from
//     the database in steady state. Every change (user created or changed, family revoked,
//     database session revoked; the CLI's too) inserts a row into sys_security_change in its
//     own transaction. Bound: a change is in force at once on the node that made it and within
//     one second on every other server, CLI changes included: each server reads the change log
//     every ChangePollInterval (250 ms; missing seqs below the newest, from transactions that
//     commit out of order, are asked for again for 10 s); on PostgreSQL a trigger on the change
//     log sends NOTIFY svc_security_change (payload schema|kind|ref) at commit, which every
//     server LISTENs to (change_listen), so changes of any process arrive at once; with
//     svc.kvstore.enabled the node that made a change also publishes it on
//     svc:security:<app>:changes. The poll backs both up. Change rows are
//     purged after an hour (change_purge); an entry untouched by changes lives 5 minutes.
//     Sessions in Redis are read from Redis per request. Role → permission tokens
//     (svc.security.roles) is configuration, in memory, changed by a restart.
//   - Password hashing is bounded (Hasher.Acquire): the password login hashes in HashSlots
//     slots at once — svc.security.hash_memory_budget over twice the argon2id memory, at least
//     1, at most GOMAXPROCS (one with the defaults) — and 64 callers per slot wait until 250 ms
//     before the request's deadline; past that it answers 429/1401 (too_many_requests, no
//     Retry-After), not counted by the lockout. Store and policy operations (CLI, password
//     change) are not gated. The bound on slots is the whole of the burst's memory policy: the
//     runtime's collector at its default GOGC reclaims the hash memory (no collection is started
//     by hand, issue #43); with the defaults a 64-connection login burst stays within idle +
//     40 MiB of anonymous memory.
//   - Refresh reloads the principal from the built-in store (roles and disable take effect);
//     for principals of host authenticators the login snapshot of the family is used.
//   - A challenge token is a JWT (typ challenge, 5 minutes) signed with a key derived from the
//     secret for this purpose only; it carries mechanism, identifier, principal, pending and
//     resolved challenges. Any verification failure is 1031.
//   - Lockout keys use the normalized identifier (trimmed, lower-cased), the same form the
//     built-in store keys users by. trust_code is exempt. Locked: 429/1023, {{minutes}} rounded
//     up, Retry-After the exact wait in seconds (svc addition, as on 429/1401), data null. A
//     verified password clears the counter (wire-core §5.6).
//   - The protected body transport (svc.api.body_encoding) that carries login credentials has
//     no replay protection — a captured encrypted login request can be replayed (lockout and
//     rate limits still count it) — and does not cover multipart requests; use TLS (see
//     docs/api.md).
//   - Beyond the original: a failed challenge code counts on the login counter and on a second
//     one ("challenge|" + key) that only a completed login clears, so knowing the password does
//     not buy endless TOTP guesses; when it is blocked, resolve_challenge answers 1023. Its
//     account-locked event has reason "challenge_failures".
//   - Password login: unknown user, wrong password, disabled user and a non-string credential
//     all answer 1008 after the same hash work (a dummy hash for unknown users). A successful
//     login re-hashes a password stored under other hash parameters (PasswordHashUpgrader; the
//     built-in store implements it) without moving tokens_valid_after or password_changed_at.
//   - password_policy.max_age presents the password_change challenge (data {reason:
//     "expired"}) when a metadata loader and a password changer exist (the built-in store is
//     both); disallow_username ignores identities shorter than 3 characters.
//   - Beyond the original: TOTP enrollment (`svc user totp enroll|verify|disable`); the
//     secret becomes active only after a valid code, and that code is spent.
//   - Default user info: gender "unknown", avatar null, permissionTokens = the
//     svc.security.roles entries of the user's roles (patterns as configured), and menus = the
//     entries of svc.security.menus (ours) the user may see: an entry listing neither roles nor
//     permissions is seen by everyone, else by a user with one of its roles or one granted
//     permission token; a directory only while one of its children is seen. The original's
//     starter app derives its routes and access check from menus, so the shipped configuration
//     carries the starter template's home page ("/").
//   - Events (EventSink): svc.security.login_succeeded, login_failed, account_locked, logout,
//     token_refreshed, refresh_reuse_detected; they carry ids, the identifier, client IP,
//     request id and a reason word, never a secret. On the server they are published on the
//     event bus asynchronously by BusSink, each under its type with Event as payload, plus
//     svc.security.login (LoginEvent, the original's shape, wire-runtime §2.9, without userAgent
//     and errorCode) for every login success and failure. Options.Events, when set, receives
//     them too: a host sink adds to the bus, it does not replace it (without a bus it replaces
//     the log sink). A publish never fails or blocks a login: a full async queue makes the
//     bus publish synchronously, and an error is only logged. The log sink (no bus) cuts each value
//     with rpc.LogText (at most 256 bytes, marked "…(truncated)").
//   - Opaque sessions (wire-core §5.5): the token is 32 random bytes, base64url without
//     padding; only hex(SHA-256(token)) is stored and it is the session id (SessionID). A JWT,
//     a malformed token and an unknown, expired or revoked session are all 401/1003. The
//     principal is the login snapshot, with a built-in user's current roles. As with JWTs, sessions created before a password change
//     or disable are refused. Sliding moves the expiry to now + idle_ttl capped at creation +
//     max_lifetime, written only when it moves by idle_ttl/30 (1 s to 1 minute) or reaches the
//     cap, so a busy session writes at most about once a minute; with sliding = false the
//     expiry stays at login + idle_ttl. A session store error is 500/1900, not a logout.
//   - max_concurrent counts live sessions. Each node serializes the logins of one user, so the
//     limit is exact on one node; with the database, logins racing on k nodes can leave up to
//     k-1 extra sessions (the next login trims them; the spec allows max_concurrent + nodes);
//     with Redis the check, eviction and insert are one script: exact on any number of nodes.
//     evict_oldest revokes the oldest by creation time.
//   - Forced logout: Sessions.Revoke, RevokeUser, List, Get (no slide) and `svc session list|
//     revoke`. RevocationHook (Options.OnRevoke, Sessions.OnRevoke) runs after each revocation
//     made in this process (logout, evicted, forced), for the host. Long-lived connections learn
//     of revocations from node-local bus signals (package security/token, issue #44):
//     token.SignalSessionRevoked for a session this node revoked (push kicks and relays it),
//     token.SignalFamilyRevoked for every revoked token family (logout, reuse detection, forced)
//     on this node and, through the change feed, on every other, and token.SignalUserChanged for
//     every change of a built-in user (disabled, password, roles, ...; CLI changes included),
//     published after the caches dropped the user. JWTTokens.Inspect gives a token's family,
//     issue time and expiry; JWTTokens.Recheck (the revocable half of Verify) and Sessions.Get
//     (no slide) are the check push runs again: it closes the refused connections with 4401 and
//     gives the others the current roles. A host user store has no change feed: no user signal,
//     and push's periodic recheck is the bound.
//   - Revocation while the database is unreachable (issue #45): svc.security.revocation.fail_mode
//     closed (default) refuses tokens with 503/1900 (ErrRevocationUnavailable) while this node's
//     change log was last read longer than max_feed_age (10 s) ago and cannot be read now; open
//     accepts them. docs/security.md gives the reasoning (a 401 would sign the original's client
//     out).
//   - Trust login: the gateway checks, in order, rate limit (per app id and client IP; unknown
//     app ids share one bucket per IP), app known, parameters present, timestamp within ±5
//     minutes, HMAC-SHA256 signature over TrustRequest.Payload with the app's hex secret (the
//     config's, or Options.TrustSecrets; an app with neither is a startup error), nonce unused
//     for 11 minutes per app (spent only by signed requests), redirect, user. Every failure up
//     to the nonce is 1060.
//   - Redirect allowlist: scheme and host (port included) equal, case-insensitively; path equal
//     to or below the entry's, by segments. Refused outright: non-http(s), scheme-relative,
//     user info, backslashes, white space and control characters, "." and ".." segments (also
//     percent-encoded or followed by ";"), and empty segments ("//cb"). Where the original
//     compares the cleaned path, a path that needs cleaning is refused (1061): the browser is
//     sent exactly where the allowlist was checked. The target's raw query is kept byte for byte (pairs
//     split on "&" only, so "b=x;y" and a bare "flag" survive) and its fragment too; pairs whose
//     unescaped name is app_id or code are removed, then app_id=<id>&code=<code> is appended.
//   - The default TrustUserResolver takes user_id as a user name of the user directory (the
//     built-in store or Options.UserStore; normalized like logins), refusing disabled users;
//     a host with its own password login and no directory must set Options.TrustUsers.
//   - A trust code is a 43-character opaque token stored by its hash for code_ttl, bound to the
//     app, the User-Agent's hash (bind_user_agent) and the client IP (bind_client_ip). The first
//     exchange attempt spends it whatever the outcome. trust_code belongs to the gateway: host
//     authenticators cannot take the name.
//   - Events also include svc.security.session_revoked (session id = hash, or the token family's
//     id for a family revoked through security/session; reason),
//     trust_code_issued and trust_login_failed (app id of configured apps only, reason word).
package security
