// Package config is the typed configuration of svc: one struct per section of the spec (§5.3,
// §5.4, §6.1, §8.3), loaded once at startup from application.toml and the environment, with the
// defaults applied once and the spec's startup errors (§7) returned by Validate.
//
// # Loading
//
// Load reads the first application.toml of the search path — ./configs, the directory in
// SVC_CONFIG_PATH, the working directory, ../configs — or LoadOptions.Path. The file has one
// top-level [svc] table. The file is decoded into a generic map, the environment is laid over
// it, and a small startup-time decoder turns the map into the sections. Finding no file is an
// error (ErrConfigNotFound) only when SVC_APP_PORT is unset as well, because the environment
// alone may configure the service; LoadOptions.Embedded supplies a built-in file instead.
//
// Values: durations are strings in Go's forms ("30s", "5m", "1h30m", "24h") plus a whole number
// of days ("90d", "1d12h"), for every duration key; the integer 0 is accepted as a zero
// duration, other bare integers are rejected as ambiguous. Sizes are integers of bytes or
// strings with a unit ("512", "10kb", "32mib", "1gib"). Integers are range-checked against
// their field (uint16 ports, uint8 kvstore database). Keys with no field produce a warning
// naming the full key ("unknown key svc.storage.max_uplod_size"); type and range errors name
// the key and wrap ErrInvalidValue.
//
// # Environment
//
// Every scalar key and every list of scalars is overridable as SVC_ + its path without the svc.
// prefix, upper-cased, with any character other than A–Z, 0–9 and _ turned into _ (EnvName):
// SVC_APP_PORT, SVC_SECURITY_SECRET, SVC_DATA_SOURCES_PRIMARY_PASSWORD. Lists are
// comma-separated. Blank values are ignored. A map key is part of the path; the environment can
// change the entries the file has, and can create only svc.data_sources.primary and
// svc.security.ip_whitelists.default, so a service can run from the environment alone. The list
// of tables svc.event.routing comes from the file only. SVC_LOG_LEVEL and SVC_I18N_LANGUAGE, the
// spec's common variables, follow the same rule: they are the keys svc.log.level and
// svc.i18n.language of the Log and I18n sections, which the file may also set.
//
// # Defaults
//
// The spec's rule is that a configured number or duration is used only when strictly positive,
// otherwise the default applies, and enumerations left unset take their default. applyDefaults
// does this once after decoding (through the generic helper positive and orDefault); afterwards
// the struct fields are the effective values. The boolean keys whose default is true
// (security.lockout.enabled, security.session.sliding, security.trust_login.bind_user_agent) are
// set before decoding, so a zero Config built in code has them false: use Default to start a
// Config in code. svc.mcp.require_auth stays a tri-state *bool; MCP.AuthRequired resolves it.
//
// Negative values of the cron store, of approval form_data_max_bytes and business_binding, and of
// integration log.retention are startup errors rather than "use the default" (§7). Because
// applyDefaults replaces them, it first records them in the Config, and Validate reports them;
// Validate also checks the current fields, so a Config built in code with negative values fails
// the same way.
//
// # Validation
//
// Validate joins every failure (errors.Join); each wraps one exported sentinel and starts with
// the key path, for example `svc.security.token_type "jwt": invalid token type`. Secrets never
// appear in messages. Choices where the spec is open:
//
//   - Body encoding and trust login are checked only when enabled. Body-encoding and integration
//     keys must be standard base64 of 16, 24 or 32 bytes (AES) or 16 bytes (SM4).
//   - The inbox rule of §6.1 applies when both event.middleware.inbox and
//     event.transports.outbox.enabled are true. The outbox retry horizon is indexed like the
//     relay's backoff, which waits 2^k seconds after the k-th failure: Σ_{k=1..n} 2^k s =
//     (2^(n+1) − 2) s with n = max_retries (≤ 0 means 10, giving 2046 s). The sum saturates at the
//     largest time.Duration, so an overflowing budget fails closed; inbox.retention must be
//     strictly greater (OutboxRetryHorizon).
//   - The cron rule abandoned_after ≥ 2 × heartbeat_interval is checked on effective values
//     whether or not the store is enabled.
//   - The trust-login path must be a clean absolute path other than "/", outside /api; redirect
//     URLs must be absolute http(s) URLs with a host and no user info or fragment.
//   - Every transport named by default_transport, the outbox sink or a routing rule must be known
//     and enabled (memory always is; kvstore_stream also needs svc.kvstore.enabled).
//   - The names of security.ip_whitelists and security.api_keys are lowercased at load (§5.3);
//     names that collide once lowercased are startup errors.
//   - svc.security.trust_login.apps.<appId>.secret is an svc addition: the app's hex HMAC secret,
//     for services without a host app loader.
//
// # Redaction
//
// Redacted renders the effective configuration as nested maps keyed like the file, with every
// field tagged secret:"true" replaced by "<redacted>" when non-empty; `svc config check` prints it.
package config
