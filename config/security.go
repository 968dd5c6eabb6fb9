package config

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// TokenType selects the token mechanism of security/auth (spec §5.2).
type TokenType string

// Token types.
const (
	// TokenTypeJWT issues HS256 JWTs (default); no server-side session state.
	TokenTypeJWT TokenType = "jwt_token"
	// TokenTypeOpaque issues opaque tokens backed by sessions (concurrency limits, forced
	// logout, sliding renewal).
	TokenTypeOpaque TokenType = "opaque_token"
)

// OnExceed is what login does when an opaque-token user is at session.max_concurrent.
type OnExceed string

// Session on_exceed values.
const (
	// OnExceedReject refuses the new login.
	OnExceedReject OnExceed = "reject"
	// OnExceedEvictOldest revokes the user's oldest session (default).
	OnExceedEvictOldest OnExceed = "evict_oldest"
)

// LockoutStrategy is how the login lockout blocks after max_failures.
type LockoutStrategy string

// Lockout strategies.
const (
	// LockoutLock blocks for lock_duration (default).
	LockoutLock LockoutStrategy = "lock"
	// LockoutBackoff blocks for backoff_base, doubling per further failure up to backoff_max.
	LockoutBackoff LockoutStrategy = "backoff"
)

// LockoutKey is what failed logins are counted by.
type LockoutKey string

// Lockout keys.
const (
	LockoutKeyUser   LockoutKey = "user"
	LockoutKeyIP     LockoutKey = "ip"
	LockoutKeyUserIP LockoutKey = "user_ip" // default
)

// Defaults of svc.security.
const (
	defaultTokenExpires         = 168 * time.Hour
	defaultAccessTokenExpires   = 30 * time.Minute
	defaultRefreshNotBefore     = 15 * time.Minute
	defaultLoginRateLimit       = 6
	defaultRefreshRateLimit     = 1
	defaultLockoutMaxFailures   = 10
	defaultLockoutWindow        = 15 * time.Minute
	defaultLockoutDuration      = 15 * time.Minute
	defaultLockoutBackoffBase   = time.Second
	defaultLockoutBackoffMax    = 15 * time.Minute
	defaultSessionIdleTTL       = 30 * time.Minute
	defaultSessionMaxLifetime   = 168 * time.Hour
	defaultRevocationFeedAge    = 10 * time.Second
	defaultHashMemoryBudget     = 24 * MiB
	maxPasswordCharacterClasses = 4
)

// DefaultIPWhitelist is the svc.security.ip_whitelists name the ip strategy uses when an
// operation names none.
const DefaultIPWhitelist = "default"

// Security is the svc.security section (spec §5.2, §5.3).
type Security struct {
	// Secret is svc.security.secret (secret, default unset): the hex-encoded JWT signing key, at
	// least 32 bytes (64 hex digits) and none of the values published in svc's repository.
	// Unset means the security module generates a random 32-byte key on first start and keeps
	// it in the primary database (table sys_security_secret), shared by every node on that
	// database; a configured secret always wins.
	Secret string `toml:"secret" secret:"true"`
	// TokenExpires is svc.security.token_expires (default 168h): the refresh-token lifetime.
	TokenExpires time.Duration `toml:"token_expires"`
	// AccessTokenExpires is svc.security.access_token_expires (ours; default 30m, the
	// original's fixed value): the lifetime of JWT access tokens. It may not exceed
	// token_expires. Opaque tokens follow session.idle_ttl instead.
	AccessTokenExpires time.Duration `toml:"access_token_expires"`
	// RefreshNotBefore is svc.security.refresh_not_before (default 15m): the earliest a refresh
	// token may be used.
	RefreshNotBefore time.Duration `toml:"refresh_not_before"`
	// LoginRateLimit is svc.security.login_rate_limit (default 6): the rate limit of login and
	// resolve_challenge per engine period.
	LoginRateLimit int `toml:"login_rate_limit"`
	// RefreshRateLimit is svc.security.refresh_rate_limit (default 1): the rate limit of refresh
	// per engine period.
	RefreshRateLimit int `toml:"refresh_rate_limit"`
	// HashMemoryBudget is svc.security.hash_memory_budget (ours, default 24mib): the heap the
	// password login's hashing may take at once. It sets the number of logins hashed
	// concurrently: budget / (2 × the argon2id memory), at least 1 and at most GOMAXPROCS (the
	// rule is security.HashSlots; docs/security.md, "Password hashing under load").
	HashMemoryBudget Size `toml:"hash_memory_budget"`
	// TokenType is svc.security.token_type: jwt_token (default) or opaque_token.
	TokenType TokenType `toml:"token_type"`
	// IPWhitelists is svc.security.ip_whitelists: named lists of IPs or CIDRs for the ip
	// strategy; names are lowercased at load, and the no-argument strategy uses "default".
	IPWhitelists map[string][]string `toml:"ip_whitelists"`
	// APIKeys is svc.security.api_keys: static keys of the api_key strategy by name (names
	// lowercased at load).
	APIKeys map[string]APIKey `toml:"api_keys"`
	// BasicAccounts is svc.security.basic_accounts: static machine accounts of the http_basic
	// strategy by user name.
	BasicAccounts map[string]BasicAccount `toml:"basic_accounts"`
	// Roles is svc.security.roles: the permission tokens granted by each role name, read by the
	// security module's built-in permission checker (e.g. admin = ["*"], ops = ["cron.*",
	// "sys.monitor.query"]). "*" grants every token; a token ending in ".*" grants every token under
	// that prefix. Empty means roles grant nothing.
	Roles map[string][]string `toml:"roles"`
	// Lockout is svc.security.lockout: brute-force lockout on login.
	Lockout Lockout `toml:"lockout"`
	// PasswordPolicy is svc.security.password_policy: opt-in password rules.
	PasswordPolicy PasswordPolicy `toml:"password_policy"`
	// Session is svc.security.session: opaque-token session control.
	Session Session `toml:"session"`
	// TrustLogin is svc.security.trust_login: the single sign-on gateway.
	TrustLogin TrustLogin `toml:"trust_login"`
	// Revocation is svc.security.revocation (ours, issue #45): what a node does with tokens
	// while it cannot read its revocation feed.
	Revocation Revocation `toml:"revocation"`
	// Menus is svc.security.menus (ours): the menu tree get_user_info answers for users of the
	// built-in user store, each entry filtered by its roles and permissions (see Menu).
	Menus []Menu `toml:"menus"`
}

// RevocationFailMode is svc.security.revocation.fail_mode.
type RevocationFailMode string

// Revocation fail modes.
const (
	// RevocationFailClosed (default): a token is refused (503) unless this node's revocation feed
	// was read within max_feed_age, so a logout or disable is never missed during an outage.
	RevocationFailClosed RevocationFailMode = "closed"
	// RevocationFailOpen: a token with a valid signature is accepted whatever the feed's age;
	// revocations made elsewhere during an outage are missed until it ends.
	RevocationFailOpen RevocationFailMode = "open"
)

// Revocation is the svc.security.revocation section (ours, issue #45 item 7; docs/security.md
// "Revocation when the database is unreachable").
type Revocation struct {
	// FailMode is svc.security.revocation.fail_mode: closed (default) or open.
	FailMode RevocationFailMode `toml:"fail_mode"`
	// MaxFeedAge is svc.security.revocation.max_feed_age (default 10s): in closed mode, how old
	// this node's last successful read of the change log (sys_security_change) may be before
	// tokens are refused with 503. It must exceed the poll interval (250 ms) by a margin for a
	// slow query.
	MaxFeedAge time.Duration `toml:"max_feed_age"`
}

// APIKey is one svc.security.api_keys.<name> entry.
type APIKey struct {
	// Key is svc.security.api_keys.<name>.key (secret): the high-entropy key the client sends.
	Key string `toml:"key" secret:"true"`
	// Roles is svc.security.api_keys.<name>.roles: roles granted to the principal.
	Roles []string `toml:"roles"`
}

// BasicAccount is one svc.security.basic_accounts.<username> entry.
type BasicAccount struct {
	// Password is svc.security.basic_accounts.<username>.password (secret).
	Password string `toml:"password" secret:"true"`
	// Roles is svc.security.basic_accounts.<username>.roles: roles granted to the principal.
	Roles []string `toml:"roles"`
}

// Lockout is svc.security.lockout (spec §5.3): failures are counted per key within window; at
// max_failures further logins are refused with ErrAccountLocked.
type Lockout struct {
	// Enabled is svc.security.lockout.enabled (default true; a zero Config built in code has
	// false, Load and Default set true).
	Enabled bool `toml:"enabled"`
	// MaxFailures is svc.security.lockout.max_failures (default 10).
	MaxFailures int `toml:"max_failures"`
	// Window is svc.security.lockout.window (default 15m): failures older than this without a
	// newer one are forgotten.
	Window time.Duration `toml:"window"`
	// LockDuration is svc.security.lockout.lock_duration (default 15m): the block of strategy
	// lock.
	LockDuration time.Duration `toml:"lock_duration"`
	// Strategy is svc.security.lockout.strategy: lock (default) or backoff.
	Strategy LockoutStrategy `toml:"strategy"`
	// BackoffBase is svc.security.lockout.backoff_base (default 1s): the first block of strategy
	// backoff.
	BackoffBase time.Duration `toml:"backoff_base"`
	// BackoffMax is svc.security.lockout.backoff_max (default 15m): the cap of strategy backoff.
	BackoffMax time.Duration `toml:"backoff_max"`
	// Key is svc.security.lockout.key: user, ip or user_ip (default).
	Key LockoutKey `toml:"key"`
}

// PasswordPolicy is svc.security.password_policy (spec §5.3). Every rule is opt-in: a zero
// value disables it.
type PasswordPolicy struct {
	// MinLength is svc.security.password_policy.min_length (0 = no minimum).
	MinLength int `toml:"min_length"`
	// MaxLength is svc.security.password_policy.max_length (0 = no maximum).
	MaxLength int `toml:"max_length"`
	// RequireUpper is svc.security.password_policy.require_upper: at least one upper-case letter.
	RequireUpper bool `toml:"require_upper"`
	// RequireLower is svc.security.password_policy.require_lower: at least one lower-case letter.
	RequireLower bool `toml:"require_lower"`
	// RequireDigit is svc.security.password_policy.require_digit: at least one digit.
	RequireDigit bool `toml:"require_digit"`
	// RequireSymbol is svc.security.password_policy.require_symbol: at least one symbol.
	RequireSymbol bool `toml:"require_symbol"`
	// MinCharClasses is svc.security.password_policy.min_char_classes: how many of the four
	// classes (upper, lower, digit, symbol) must appear (0 = no rule, at most 4).
	MinCharClasses int `toml:"min_char_classes"`
	// DisallowUsername is svc.security.password_policy.disallow_username: the password may not
	// contain the user name.
	DisallowUsername bool `toml:"disallow_username"`
	// Blocklist is svc.security.password_policy.blocklist: passwords refused outright.
	Blocklist []string `toml:"blocklist"`
	// HistoryDepth is svc.security.password_policy.history_depth: how many previous passwords
	// may not be reused (needs an application-provided password history store; 0 = off).
	HistoryDepth int `toml:"history_depth"`
	// MaxAge is svc.security.password_policy.max_age: password lifetime (needs an
	// application-provided metadata loader and expiry checker; 0 = off).
	MaxAge time.Duration `toml:"max_age"`
}

// Session is svc.security.session (spec §5.3): only used with token_type opaque_token.
type Session struct {
	// MaxConcurrent is svc.security.session.max_concurrent (default 0 = unlimited): sessions per
	// user, best effort under concurrent logins.
	MaxConcurrent int `toml:"max_concurrent"`
	// OnExceed is svc.security.session.on_exceed: reject or evict_oldest (default).
	OnExceed OnExceed `toml:"on_exceed"`
	// IdleTTL is svc.security.session.idle_ttl (default 30m): a session unused this long expires.
	IdleTTL time.Duration `toml:"idle_ttl"`
	// MaxLifetime is svc.security.session.max_lifetime (default 168h): the absolute cap.
	MaxLifetime time.Duration `toml:"max_lifetime"`
	// Sliding is svc.security.session.sliding (default true; false in a zero Config built in
	// code): each authenticated request extends the session by idle_ttl.
	Sliding bool `toml:"sliding"`
}

// applyDefaults fills defaults and lowercases the names of ip_whitelists and api_keys (spec
// §5.3). Names that collide once lowercased are returned as startup errors.
func (s *Security) applyDefaults() []error {
	s.TokenExpires = positive(s.TokenExpires, defaultTokenExpires)
	s.AccessTokenExpires = positive(s.AccessTokenExpires, defaultAccessTokenExpires)
	applyMenuDefaults(s.Menus)
	s.RefreshNotBefore = positive(s.RefreshNotBefore, defaultRefreshNotBefore)
	s.LoginRateLimit = positive(s.LoginRateLimit, defaultLoginRateLimit)
	s.RefreshRateLimit = positive(s.RefreshRateLimit, defaultRefreshRateLimit)
	s.HashMemoryBudget = positive(s.HashMemoryBudget, defaultHashMemoryBudget)
	s.TokenType = orDefault(s.TokenType, TokenTypeJWT)

	l := &s.Lockout
	l.MaxFailures = positive(l.MaxFailures, defaultLockoutMaxFailures)
	l.Window = positive(l.Window, defaultLockoutWindow)
	l.LockDuration = positive(l.LockDuration, defaultLockoutDuration)
	l.Strategy = orDefault(l.Strategy, LockoutLock)
	l.BackoffBase = positive(l.BackoffBase, defaultLockoutBackoffBase)
	l.BackoffMax = positive(l.BackoffMax, defaultLockoutBackoffMax)
	l.Key = orDefault(l.Key, LockoutKeyUserIP)

	ss := &s.Session
	ss.OnExceed = orDefault(ss.OnExceed, OnExceedEvictOldest)
	ss.IdleTTL = positive(ss.IdleTTL, defaultSessionIdleTTL)
	ss.MaxLifetime = positive(ss.MaxLifetime, defaultSessionMaxLifetime)

	s.TrustLogin.applyDefaults()
	s.Revocation.FailMode = orDefault(s.Revocation.FailMode, RevocationFailClosed)
	s.Revocation.MaxFeedAge = positive(s.Revocation.MaxFeedAge, defaultRevocationFeedAge)

	var errs []error
	s.IPWhitelists, errs = lowerKeys(s.IPWhitelists, "svc.security.ip_whitelists", ErrInvalidIPWhitelist, errs)
	s.APIKeys, errs = lowerKeys(s.APIKeys, "svc.security.api_keys", ErrInvalidAPIKey, errs)
	return errs
}

// lowerKeys returns m with lowercased keys; of colliding keys the first in sorted order is kept
// and the collision is reported.
func lowerKeys[V any](m map[string]V, key string, sentinel error, errs []error) (map[string]V, []error) {
	if m == nil {
		return nil, errs
	}
	names := sortedKeys(m)
	out := make(map[string]V, len(m))
	from := make(map[string]string, len(m))
	for _, name := range names {
		low := strings.ToLower(name)
		if prev, dup := from[low]; dup {
			errs = append(errs, fmt.Errorf("%s: names %q and %q collide once lowercased: %w", key, prev, name, sentinel))
			continue
		}
		from[low] = name
		out[low] = m[name]
	}
	return out, errs
}

func (s *Security) validate() []error {
	var errs []error
	if s.Secret != "" {
		if err := validateSecret(s.Secret); err != nil {
			errs = append(errs, err)
		}
	}
	switch s.TokenType {
	case "", TokenTypeJWT, TokenTypeOpaque:
	default:
		errs = append(errs, fmt.Errorf("svc.security.token_type %q: %w", s.TokenType, ErrInvalidTokenType))
	}
	switch s.Session.OnExceed {
	case "", OnExceedReject, OnExceedEvictOldest:
	default:
		errs = append(errs, fmt.Errorf("svc.security.session.on_exceed %q: %w", s.Session.OnExceed, ErrInvalidSessionOnExceed))
	}
	switch s.Lockout.Strategy {
	case "", LockoutLock, LockoutBackoff:
	default:
		errs = append(errs, fmt.Errorf("svc.security.lockout.strategy %q: %w", s.Lockout.Strategy, ErrInvalidLockoutStrategy))
	}
	switch s.Revocation.FailMode {
	case "", RevocationFailClosed, RevocationFailOpen:
	default:
		errs = append(errs, fmt.Errorf("svc.security.revocation.fail_mode %q: %w", s.Revocation.FailMode, ErrInvalidRevocationFailMode))
	}
	switch s.Lockout.Key {
	case "", LockoutKeyUser, LockoutKeyIP, LockoutKeyUserIP:
	default:
		errs = append(errs, fmt.Errorf("svc.security.lockout.key %q: %w", s.Lockout.Key, ErrInvalidLockoutKey))
	}
	if s.AccessTokenExpires > s.TokenExpires {
		errs = append(errs, fmt.Errorf("svc.security.access_token_expires %s exceeds svc.security.token_expires %s: %w",
			s.AccessTokenExpires, s.TokenExpires, ErrInvalidAccessTokenExpires))
	}
	errs = append(errs, validateMenus("svc.security.menus", s.Menus)...)
	errs = append(errs, s.PasswordPolicy.validate()...)
	errs = append(errs, s.validateCredentials()...)
	errs = append(errs, s.TrustLogin.validate()...)
	return errs
}

// validateCredentials checks the static credentials of the ip, api_key and http_basic strategies.
func (s *Security) validateCredentials() []error {
	var errs []error
	for _, name := range sortedKeys(s.IPWhitelists) {
		for i, e := range s.IPWhitelists[name] {
			if !validIPOrPrefix(e) {
				errs = append(errs, fmt.Errorf("svc.security.ip_whitelists.%s[%d] %q: %w", name, i, e, ErrInvalidIPWhitelist))
			}
		}
	}
	owner := map[string]string{}
	for _, name := range sortedKeys(s.APIKeys) {
		k := s.APIKeys[name].Key
		switch prev, dup := owner[k]; {
		case k == "":
			errs = append(errs, fmt.Errorf("svc.security.api_keys.%s.key: required: %w", name, ErrInvalidAPIKey))
		case dup:
			errs = append(errs, fmt.Errorf("svc.security.api_keys.%s.key: same key as %q: %w", name, prev, ErrInvalidAPIKey))
		default:
			owner[k] = name
		}
	}
	for _, user := range sortedKeys(s.BasicAccounts) {
		if user == "" || strings.Contains(user, ":") {
			errs = append(errs, fmt.Errorf("svc.security.basic_accounts %q: user name empty or with a colon: %w", user, ErrInvalidBasicAccount))
		}
		if s.BasicAccounts[user].Password == "" {
			errs = append(errs, fmt.Errorf("svc.security.basic_accounts.%s.password: required: %w", user, ErrInvalidBasicAccount))
		}
	}
	return errs
}

func (p *PasswordPolicy) validate() []error {
	var errs []error
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"min_length", int64(p.MinLength)}, {"max_length", int64(p.MaxLength)},
		{"min_char_classes", int64(p.MinCharClasses)}, {"history_depth", int64(p.HistoryDepth)},
		{"max_age", int64(p.MaxAge)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("svc.security.password_policy.%s: negative: %w", f.key, ErrInvalidPasswordPolicy))
		}
	}
	if p.MinLength > 0 && p.MaxLength > 0 && p.MinLength > p.MaxLength {
		errs = append(errs, fmt.Errorf("svc.security.password_policy.min_length %d above max_length %d: %w", p.MinLength, p.MaxLength, ErrInvalidPasswordPolicy))
	}
	if p.MinCharClasses > maxPasswordCharacterClasses {
		errs = append(errs, fmt.Errorf("svc.security.password_policy.min_char_classes %d above %d: %w", p.MinCharClasses, maxPasswordCharacterClasses, ErrInvalidPasswordPolicy))
	}
	return errs
}

// sortedKeys returns the keys of m in ascending order, for deterministic messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
