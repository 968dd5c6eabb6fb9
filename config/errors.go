package config

import "errors"

// Load errors.
var (
	// ErrConfigNotFound: no application.toml in the search path and no port in the environment.
	ErrConfigNotFound = errors.New("configuration file not found")
	// ErrInvalidValue: a key holds a value of the wrong type or out of range (file or environment).
	ErrInvalidValue = errors.New("invalid value")
)

// Startup errors of spec §7. Validate wraps each with the key path and the offending value (never
// a secret), so errors.Is works and the message names the key.
var (
	// ErrInvalidAPIBodyEncoding: svc.api.body_encoding.encoding is neither aes-gcm+base64 nor
	// sm4-gcm+base64.
	ErrInvalidAPIBodyEncoding = errors.New("invalid api body encoding")
	// ErrMissingAPIBodyEncodingKey: body encoding is enabled without svc.api.body_encoding.key.
	ErrMissingAPIBodyEncodingKey = errors.New("missing api body encoding key")
	// ErrInvalidAPIBodyEncodingKey: the body encoding key is not standard base64 or has the wrong
	// size.
	ErrInvalidAPIBodyEncodingKey = errors.New("invalid api body encoding key")
	// ErrUnsupportedDBKind: a data source type is oracle or sqlserver (declared, not implemented).
	ErrUnsupportedDBKind = errors.New("unsupported data source type")
	// ErrInvalidTokenType: svc.security.token_type is neither jwt_token nor opaque_token.
	ErrInvalidTokenType = errors.New("invalid token type")
	// ErrInvalidAccessTokenExpires: svc.security.access_token_expires is longer than
	// svc.security.token_expires (an access token would outlive every refresh token).
	ErrInvalidAccessTokenExpires = errors.New("invalid access token lifetime")
	// ErrInvalidMenu: an svc.security.menus entry has an unknown type, no name, a path that does
	// not start with "/", or meta.params / meta.search that are not tables of strings.
	ErrInvalidMenu = errors.New("invalid menu entry")
	// ErrInvalidSessionOnExceed: svc.security.session.on_exceed is neither reject nor evict_oldest.
	ErrInvalidSessionOnExceed = errors.New("invalid session on_exceed")
	// ErrInvalidLockoutStrategy: svc.security.lockout.strategy is neither lock nor backoff.
	ErrInvalidLockoutStrategy = errors.New("invalid lockout strategy")
	// ErrInvalidLockoutKey: svc.security.lockout.key is not user, ip or user_ip.
	ErrInvalidLockoutKey = errors.New("invalid lockout key")
	// ErrInvalidRevocationFailMode: svc.security.revocation.fail_mode is neither open nor closed.
	ErrInvalidRevocationFailMode = errors.New("invalid revocation fail mode")
	// ErrInvalidApprovalFormDataMaxBytes: svc.approval.form_data_max_bytes is negative.
	ErrInvalidApprovalFormDataMaxBytes = errors.New("invalid approval form_data_max_bytes")
	// ErrInvalidApprovalBindingConsistency: svc.approval.business_binding.consistency is neither
	// synchronous nor eventual.
	ErrInvalidApprovalBindingConsistency = errors.New("invalid approval business binding consistency")
	// ErrInvalidApprovalBusinessBindingWorkerConfig: business_binding scan_interval or batch_size is
	// negative.
	ErrInvalidApprovalBusinessBindingWorkerConfig = errors.New("invalid approval business binding worker config")
	// ErrInvalidCronStoreDuration: a svc.cron.store duration is negative.
	ErrInvalidCronStoreDuration = errors.New("invalid cron store duration")
	// ErrInvalidCronStoreCount: svc.cron.store batch_size or max_concurrent is negative.
	ErrInvalidCronStoreCount = errors.New("invalid cron store count")
	// ErrCronStoreAbandonedTooSoon: abandoned_after is less than twice heartbeat_interval.
	ErrCronStoreAbandonedTooSoon = errors.New("cron store abandoned_after must be at least twice heartbeat_interval")
	// ErrInvalidCronHTTPHost: an svc.cron.store.http_allowed_hosts entry is neither a host name
	// (optionally "*.domain"), an IP nor a CIDR.
	ErrInvalidCronHTTPHost = errors.New("invalid cron http allowed host")
	// ErrInvalidIntegrationLogMode: svc.integration.log.mode is not off, errors or all.
	ErrInvalidIntegrationLogMode = errors.New("invalid integration log mode")
	// ErrScriptMemoryLimitTooSmall: svc.integration.script.memory_limit is set below
	// MinScriptMemoryLimit, where a worker cannot grow its heap at all.
	ErrScriptMemoryLimitTooSmall = errors.New("script memory limit too small")
	// ErrInvalidIntegrationSecretAlgorithm: svc.integration.secret_algorithm is neither aes nor sm4.
	ErrInvalidIntegrationSecretAlgorithm = errors.New("invalid integration secret algorithm")
	// ErrInvalidIntegrationLogRetention: svc.integration.log.retention is negative.
	ErrInvalidIntegrationLogRetention = errors.New("invalid integration log retention")
	// ErrInboxRetentionTooShort: svc.event.inbox.retention is not above the outbox retry horizon.
	ErrInboxRetentionTooShort = errors.New("inbox retention not above the outbox retry horizon")
	// ErrTrustLoginAppsRequired: trust login is enabled with no apps.
	ErrTrustLoginAppsRequired = errors.New("trust login apps required")
	// ErrTrustLoginPathInvalid: the trust login path is not a clean absolute path outside /api.
	ErrTrustLoginPathInvalid = errors.New("invalid trust login path")
	// ErrTrustLoginRedirectInvalid: a trust login redirect URL is not absolute http(s) with a host, or
	// has user info or a fragment.
	ErrTrustLoginRedirectInvalid = errors.New("invalid trust login redirect url")
	// ErrTrustLoginRedirectsEmpty: a trust login app has no redirect URLs.
	ErrTrustLoginRedirectsEmpty = errors.New("trust login redirect urls empty")
)

// Startup errors of svc beyond the spec's list: configurations the modules could not start with.
var (
	// ErrMissingPort: svc.app.port is unset.
	ErrMissingPort = errors.New("missing http port")
	// ErrInvalidBodyMemoryBudget: svc.app.body_memory_budget is below svc.app.body_limit.
	ErrInvalidBodyMemoryBudget = errors.New("invalid body memory budget")
	// ErrMissingPrimaryDataSource: svc.data_sources has no primary entry.
	ErrMissingPrimaryDataSource = errors.New("missing primary data source")
	// ErrInvalidDataSource: unknown type, sqlite without path, postgres or mysql without host or
	// database, or an unknown ssl_mode.
	ErrInvalidDataSource = errors.New("invalid data source")
	// ErrInvalidKVStore: svc.kvstore.network is neither tcp nor unix.
	ErrInvalidKVStore = errors.New("invalid kvstore")
	// ErrInvalidStorageProvider: svc.storage.provider is not memory, filesystem or objstore.
	ErrInvalidStorageProvider = errors.New("invalid storage provider")
	// ErrInvalidObjStore: the objstore provider is selected without an endpoint.
	ErrInvalidObjStore = errors.New("invalid object store")
	// ErrInvalidSecret: svc.security.secret (or a trust-login app secret) is not hex.
	ErrInvalidSecret = errors.New("invalid secret")
	// ErrSecretTooShort: svc.security.secret decodes to fewer than MinSecretBytes (32) bytes.
	ErrSecretTooShort = errors.New("secret too short")
	// ErrPublicSecret: svc.security.secret is a value published in svc's repository or docs
	// (the old sample secret among them), so anyone could mint tokens with it.
	ErrPublicSecret = errors.New("secret is public")
	// ErrInvalidTrustedProxy: an svc.app.trusted_proxies entry is neither an IP nor a CIDR.
	ErrInvalidTrustedProxy = errors.New("invalid trusted proxy")
	// ErrInvalidIPWhitelist: an svc.security.ip_whitelists entry is neither an IP nor a CIDR, or
	// two names collide once lowercased.
	ErrInvalidIPWhitelist = errors.New("invalid ip whitelist")
	// ErrInvalidAPIKey: an svc.security.api_keys entry has an empty key, two entries share a key,
	// or two names collide once lowercased.
	ErrInvalidAPIKey = errors.New("invalid api key")
	// ErrInvalidBasicAccount: an svc.security.basic_accounts entry has an empty password, or its
	// user name is empty or contains a colon.
	ErrInvalidBasicAccount = errors.New("invalid basic account")
	// ErrInvalidPasswordPolicy: a negative rule, min_length above max_length, or
	// min_char_classes above 4.
	ErrInvalidPasswordPolicy = errors.New("invalid password policy")
	// ErrInvalidIntegrationSecretKey: svc.integration.secret_key is not standard base64 or has a
	// length the algorithm does not take.
	ErrInvalidIntegrationSecretKey = errors.New("invalid integration secret key")
	// ErrInvalidEventTransport: an unknown or unavailable transport is named (default_transport,
	// outbox sink), a full_policy is outside the enumeration, or kvstore_stream is enabled
	// without the key-value store.
	ErrInvalidEventTransport = errors.New("invalid event transport")
	// ErrInvalidEventRoute: an svc.event.routing entry has a malformed pattern or names no, an
	// unknown or an unavailable transport.
	ErrInvalidEventRoute = errors.New("invalid event route")
	// ErrInvalidConsolePath: svc.console.path is not a clean absolute path other than "/" and
	// outside /api.
	ErrInvalidConsolePath = errors.New("invalid console path")
	// ErrInvalidBackup: svc.backup.destination is not folder or storage, or
	// svc.backup.encryption_key is not 32 bytes as hex or base64.
	ErrInvalidBackup = errors.New("invalid backup configuration")
	// ErrInvalidPushPath: svc.push.path does not start with a slash.
	ErrInvalidPushPath = errors.New("invalid push path")
	// ErrInvalidPushBridge: an entry of svc.push.bridge has no event, an invalid event type or no
	// target.
	ErrInvalidPushBridge = errors.New("invalid push bridge route")
	// ErrInvalidLogLevel: svc.log.level is not debug, info, warn or error.
	ErrInvalidLogLevel = errors.New("invalid log level")
	// ErrInvalidLanguage: svc.i18n.language is neither en nor zh-CN.
	ErrInvalidLanguage = errors.New("invalid language")
)
