package config

import (
	"fmt"
	"time"
)

// Config is the whole svc configuration: the [svc] table of application.toml after the
// environment overrides and the defaults were applied. After Load the fields are the effective
// values; modules read them directly and never re-apply defaults.
type Config struct {
	// App is svc.app: name, port, body limit and trusted proxies.
	App App `toml:"app"`
	// DataSources is svc.data_sources, keyed by name; the entry "primary" is required.
	DataSources map[string]DataSource `toml:"data_sources"`
	// CORS is svc.cors.
	CORS CORS `toml:"cors"`
	// KVStore is svc.kvstore: the Redis client.
	KVStore KVStore `toml:"kvstore"`
	// API is svc.api: the engine default rate limit and the protected body transport.
	API API `toml:"api"`
	// Security is svc.security: tokens, lockout, password policy, sessions, trust login and the
	// static credentials of the api_key, http_basic and ip strategies.
	Security Security `toml:"security"`
	// Storage is svc.storage: the upload backend and its tunables.
	Storage Storage `toml:"storage"`
	// Monitor is svc.monitor.
	Monitor Monitor `toml:"monitor"`
	// MCP is svc.mcp.
	MCP MCP `toml:"mcp"`
	// Approval is svc.approval.
	Approval Approval `toml:"approval"`
	// Cron is svc.cron (only its store subtable has keys).
	Cron Cron `toml:"cron"`
	// Integration is svc.integration.
	Integration Integration `toml:"integration"`
	// Push is svc.push: the WebSocket endpoint.
	Push Push `toml:"push"`
	// Event is svc.event: the event bus.
	Event Event `toml:"event"`
	// Log is svc.log, usually set from SVC_LOG_LEVEL.
	Log Log `toml:"log"`
	// I18n is svc.i18n, usually set from SVC_I18N_LANGUAGE.
	I18n I18n `toml:"i18n"`
	// Admin is svc.admin: the separate listener of metrics and profiles.
	Admin Admin `toml:"admin"`
	// Metrics is svc.metrics: the Prometheus exposition.
	Metrics Metrics `toml:"metrics"`
	// Pprof is svc.pprof: net/http/pprof on the admin address.
	Pprof Pprof `toml:"pprof"`
	// Tracing is svc.tracing: OpenTelemetry traces over OTLP.
	Tracing Tracing `toml:"tracing"`
	// Console is svc.console: the operators' web console (ours).
	Console Console `toml:"console"`
	// Audit is svc.audit: the persisted audit trail (ours).
	Audit Audit `toml:"audit"`
	// Backup is svc.backup: where backups are written and their encryption (ours, issue #47).
	Backup Backup `toml:"backup"`

	// Source names where the file part came from: the path of the application.toml read, the
	// string "embedded" for LoadOptions.Embedded, or "" when only the environment configured.
	Source string `toml:"-"`

	// loadErrs are startup errors found by applyDefaults in the raw values it then replaced
	// (negative cron, approval and integration values, key collisions); Validate reports them.
	loadErrs []error
}

// Default returns the configuration of an empty file and an empty environment: every default
// applied, no port and no data source. Tests and hosts that build a Config in code start here.
func Default() *Config {
	c := base()
	c.applyDefaults()
	return c
}

// base returns a Config whose boolean keys that default to true are set, so that decoding a file
// over it leaves them true unless the file says false. Every other default is applied by
// applyDefaults after decoding, because it must also replace explicit non-positive values.
func base() *Config {
	c := &Config{}
	c.Security.Lockout.Enabled = true
	c.Security.Session.Sliding = true
	c.Security.TrustLogin.BindUserAgent = true
	c.Console.Enabled = true
	return c
}

// applyDefaults turns the decoded values into effective ones. It runs exactly once per load:
// values it replaces are gone afterwards, so the negative values that the spec makes startup
// errors (§7) are recorded in loadErrs first.
func (c *Config) applyDefaults() {
	c.Log.applyDefaults()
	c.I18n.applyDefaults()
	c.App.applyDefaults()
	for name, ds := range c.DataSources {
		ds.applyDefaults()
		c.DataSources[name] = ds
	}
	c.KVStore.applyDefaults()
	c.API.applyDefaults()
	c.loadErrs = append(c.loadErrs, c.Security.applyDefaults()...)
	c.Storage.applyDefaults(c.App.Name)
	c.Monitor.applyDefaults()
	c.loadErrs = append(c.loadErrs, c.Approval.applyDefaults()...)
	c.loadErrs = append(c.loadErrs, c.Cron.Store.applyDefaults()...)
	c.loadErrs = append(c.loadErrs, c.Integration.applyDefaults()...)
	c.Push.applyDefaults()
	c.MCP.applyDefaults()
	c.Event.applyDefaults()
	c.Admin.applyDefaults()
	c.Metrics.applyDefaults()
	c.Tracing.applyDefaults(c.App.Name)
	c.Console.applyDefaults()
	c.Audit.applyDefaults()
	c.Backup.applyDefaults()
}

// number is what the "strictly positive, else default" rule applies to: counts, sizes and
// durations (time.Duration and Size are int64 underneath).
type number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// positive implements the spec's effective-value rule (§8.3): a configured number or duration
// is used only when strictly positive, otherwise the default applies.
func positive[T number](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// orDefault returns def when v is the zero value: enumerations and strings left unset take the
// stated default.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// RateLimit is a request budget: at most Max requests per Period. It is the shape of
// svc.api.rate_limit, svc.security.trust_login.rate_limit and
// svc.integration.inbound.rate_limit; each names its own defaults.
type RateLimit struct {
	// Max is <section>.rate_limit.max: requests admitted per period; non-positive selects the
	// section's default.
	Max int `toml:"max"`
	// Period is <section>.rate_limit.period: the sliding window; non-positive selects the
	// section's default.
	Period time.Duration `toml:"period"`
}

// withDefaults returns r with non-positive fields replaced.
func (r RateLimit) withDefaults(maxDefault int, periodDefault time.Duration) RateLimit {
	return RateLimit{Max: positive(r.Max, maxDefault), Period: positive(r.Period, periodDefault)}
}

// field is one number of a section, named by its full key, for the negative-value checks.
type field struct {
	key  string
	v    int64
	text string // the value as written in messages
}

// dur and count make fields of a duration and of a count.
func dur(key string, d time.Duration) field { return field{key, int64(d), d.String()} }
func count(key string, n int) field         { return field{key, int64(n), fmt.Sprint(n)} }

// negatives returns one error wrapping sentinel for every field below zero. Sections whose
// negative values are startup errors (spec §7) call it twice: from applyDefaults on the raw
// values before they are replaced (the result is kept in Config.loadErrs), and from validate on
// the current values, which catches a Config built in code; after applyDefaults no field is
// negative any more, so nothing is reported twice.
func negatives(sentinel error, fields ...field) []error {
	var errs []error
	for _, f := range fields {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s %s: negative: %w", f.key, f.text, sentinel))
		}
	}
	return errs
}
