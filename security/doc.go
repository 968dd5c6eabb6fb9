// Package security is the security module of svc (spec §2.3, §3 login flow, §4.1, §5, §7;
// wire-core §2.3, §3, §5): the security/auth resource, the token layer, the bearer, api_key,
// http_basic and ip strategies, login challenges (TOTP), brute-force lockout, the password
// policy and the built-in user store.
//
// # Resources and actions
//
// security/auth (version v1):
//
//	login              public, rate limit svc.security.login_rate_limit (6)  → LoginResult
//	resolve_challenge  public, rate limit svc.security.login_rate_limit (6)  → LoginResult
//	refresh            public, rate limit svc.security.refresh_rate_limit (1), only when the
//	                   token service refreshes (jwt_token)                   → AuthTokens, unwrapped
//	logout             bearer                                                → null
//	get_user_info      bearer; params forwarded to the UserInfoLoader        → UserInfo
//
// LoginResult is {tokens:{accessToken, refreshToken}} XOR {challengeToken, challenge:{type,
// data?, required}}. No loader → 501/1500. No plain HTTP routes (trust login, issue #5, adds
// /sso/trust).
//
// # Strategies
//
// bearer (engine default: Authorization Bearer, scheme case-insensitive, or ?__accessToken=),
// api_key (X-API-Key or the header named by the first argument; svc.security.api_keys),
// http_basic (svc.security.basic_accounts) and ip (svc.security.ip_whitelists, list named by
// the first argument, default "default"). Principals and codes as wire-core §3.1.
//
// # Configuration keys
//
// svc.security.secret, token_expires, refresh_not_before, login_rate_limit,
// refresh_rate_limit, token_type, ip_whitelists, api_keys, basic_accounts, roles (svc addition:
// role → permission tokens for the built-in permission checker), lockout.* (enabled,
// max_failures, window, lock_duration, strategy, backoff_base, backoff_max, key),
// password_policy.* (every rule of spec §5.3), trust_login.enabled (only to refuse trust_code
// with 1001 while off). svc.kvstore.enabled moves the lockout state to Redis. svc.app.name is
// the JWT audience.
//
// # Tables (migrations/{postgres,mysql,sqlite}, always applied)
//
//	sys_security_user              built-in users: argon2id/bcrypt hash, display name, roles,
//	                               disabled, TOTP secret (active and pending), password change
//	                               time, tokens_valid_after
//	sys_security_password_history  hashes of earlier passwords (history_depth)
//	sys_security_token_family      refresh-token families: current jti, principal snapshot,
//	                               expiry, revocation (rotation and reuse detection)
//	sys_security_totp_step         last accepted TOTP step per principal (no replay)
//
// # Workers
//
// token_family_purge (hourly): deletes families whose refresh token has expired.
//
// # Compatibility choices (spec/README.md order; where the original is silent)
//
//   - Tokens: HS256 with the hex secret; iss "svc" (the original's constant is "vef"; no client
//     reads it), aud = svc.app.name as a string, sub "<id>@<name>", shared jti, typ
//     access/refresh, rls and det on the access token; extra claims uid and pnm carry id and
//     name explicitly (ids may contain "@") and fid the token family. Leeway 10 s. The type is
//     checked before the times, so a refresh token used as an access token is 1003, not 1004.
//   - Beyond the original: refresh-token rotation with reuse detection. Each login starts a
//     family in the database; refresh swaps its current jti with one conditional UPDATE (safe on
//     any number of nodes); an already exchanged refresh token revokes the whole family (1003,
//     event refresh_reuse_detected). Logout revokes the family (its refresh token stops
//     working); access tokens are stateless and live out their 30 minutes.
//   - Beyond the original: tokens issued before a password change or disable are refused
//     (1003). Refresh asks the store each time; the bearer strategy caches a principal's state
//     for 5 s per node (at once on the node that made the change) and fails open if the store
//     is down (the signature was valid); refresh fails closed.
//   - Refresh reloads the principal from the built-in store (roles and disable take effect);
//     for principals of host authenticators the login snapshot of the family is used.
//   - A challenge token is a JWT (typ challenge, 5 minutes) signed with a key derived from the
//     secret for this purpose only; it carries mechanism, identifier, principal, pending and
//     resolved challenges. Any verification failure is 1031.
//   - Lockout keys use the normalized identifier (trimmed, lower-cased), the same form the
//     built-in store keys users by. A failed TOTP code also counts as a failure. trust_code is
//     exempt. Locked: 429/1023, {{minutes}} rounded up, no Retry-After, data null.
//   - Password login: unknown user, wrong password, disabled user and a non-string credential
//     all answer 1008 after the same hash work (a dummy hash for unknown users).
//   - password_policy.max_age presents the password_change challenge (data {reason:
//     "expired"}) when a metadata loader and a password changer exist (the built-in store is
//     both); disallow_username ignores identities shorter than 3 characters.
//   - Beyond the original: TOTP enrollment (`svc user totp enroll|verify|disable`); the
//     secret becomes active only after a valid code, and that code is spent.
//   - Default user info: gender "unknown", avatar null, menus [], permissionTokens = the
//     svc.security.roles entries of the user's roles (patterns as configured).
//   - Events (EventSink; the event bus plugs in later): svc.security.login_succeeded,
//     login_failed, account_locked, logout, token_refreshed, refresh_reuse_detected; they carry
//     ids, the identifier, client IP, request id and a reason word, never a secret.
//   - token_type opaque_token needs Options.Tokens (opaque sessions are issue #5); refresh is
//     mounted only when the token service refreshes.
package security
