package config

import (
	"fmt"
	"runtime"
	"time"
)

// InvocationLogMode is what the integration module records in itg_invocation_log.
type InvocationLogMode string

// Invocation log modes of svc.integration.log.mode.
const (
	InvocationLogOff    InvocationLogMode = "off"
	InvocationLogErrors InvocationLogMode = "errors" // default
	InvocationLogAll    InvocationLogMode = "all"
)

// SecretAlgorithm is the cipher sealing integration secrets at rest. Values sealed with one
// cannot be opened with the other.
type SecretAlgorithm string

// Secret algorithms of svc.integration.secret_algorithm.
const (
	SecretAlgorithmAES SecretAlgorithm = "aes" // AES-GCM, default
	SecretAlgorithmSM4 SecretAlgorithm = "sm4" // SM4-GCM
)

// Defaults of svc.integration.
const (
	defaultIntegrationRunTimeout  = 30 * time.Second
	defaultMaxResponseBody        = 8 * MiB
	defaultCaptureLimit           = 4096
	defaultInboundRateLimitMax    = 120
	defaultInboundRateLimitPeriod = time.Minute
	defaultScriptCacheMaxBytes    = 32 * MiB
	defaultScriptCacheTTL         = time.Hour
	defaultScriptMemoryLimit      = 512 * MiB
	// MinScriptMemoryLimit is the smallest svc.integration.script.memory_limit accepted: an idle
	// worker already maps about 107 MiB of data segment (the Go runtime's arenas, mapped, mostly
	// untouched), and RLIMIT_DATA counts what is mapped, so below this even a 1 MiB string fails
	// (bench/sandbox measured it).
	MinScriptMemoryLimit   = 128 * MiB
	defaultScriptQueueWait = 5 * time.Second
)

// Integration is the svc.integration section (spec §8.3). Non-positive numbers and durations
// take the defaults; a negative log.retention is a startup error.
type Integration struct {
	// AutoMigrate is svc.integration.auto_migrate (default false): run the itg_* migration at
	// startup.
	AutoMigrate bool `toml:"auto_migrate"`
	// SecretKey is svc.integration.secret_key (secret): the standard-base64 key that encrypts
	// sensitive auth parameters and data-source passwords at rest; 16, 24 or 32 bytes for aes,
	// 16 for sm4. Unset stores plaintext with a startup warning.
	SecretKey string `toml:"secret_key" secret:"true"`
	// SecretAlgorithm is svc.integration.secret_algorithm: aes (default, AES-GCM) or sm4 (SM4-GCM).
	SecretAlgorithm SecretAlgorithm `toml:"secret_algorithm"`
	// RunTimeout is svc.integration.run_timeout (default 30s): one adapter script execution,
	// wire calls included.
	RunTimeout time.Duration `toml:"run_timeout"`
	// MaxResponseBody is svc.integration.max_response_body (default 8 MiB): the most read of one
	// HTTP response body by adapter scripts.
	MaxResponseBody Size `toml:"max_response_body"`
	// Log is svc.integration.log: the invocation log.
	Log InvocationLog `toml:"log"`
	// Inbound is svc.integration.inbound: the inbound gateway.
	Inbound Inbound `toml:"inbound"`
	// ScriptCache is svc.integration.script_cache: the cache binding every script shares.
	ScriptCache ScriptCache `toml:"script_cache"`
	// Script is svc.integration.script: the worker processes adapter and auth scripts run in.
	Script Script `toml:"script"`
}

// Script is svc.integration.script (issue #42): every script runs in a worker process of the
// server's own binary, under an operating-system memory limit and killed at its deadline.
type Script struct {
	// MemoryLimit is svc.integration.script.memory_limit (default 512 MiB): one worker's data
	// segment (RLIMIT_DATA, the whole Go heap of the worker); a run that needs more fails with
	// kind script, "memory limit exceeded", and its worker is replaced.
	MemoryLimit Size `toml:"memory_limit"`
	// Concurrency is svc.integration.script.concurrency (default the number of CPUs): how many
	// scripts run at once on this node, one worker each.
	Concurrency int `toml:"concurrency"`
	// QueueWait is svc.integration.script.queue_wait (default 5s): how long a run waits for a
	// free slot and a started worker (its start included) before it fails with 2630 (kind
	// timeout); the run's own deadline begins once it has its worker.
	QueueWait time.Duration `toml:"queue_wait"`
}

// ScriptCache is svc.integration.script_cache. Its entries live in the server, apart from the
// scripts' workers, and are bounded here.
type ScriptCache struct {
	// MaxBytes is svc.integration.script_cache.max_bytes (default 32 MiB): the most all entries
	// (keys, JSON values and a fixed overhead each) hold together in this process; a set over it
	// evicts the least recently used entries.
	MaxBytes Size `toml:"max_bytes"`
	// TTL is svc.integration.script_cache.ttl (default 1h): the longest an entry lives; a set
	// without a ttl, or with a longer one, gets this one.
	TTL time.Duration `toml:"ttl"`
}

// InvocationLog is svc.integration.log.
type InvocationLog struct {
	// Mode is svc.integration.log.mode: off, errors (default) or all.
	Mode InvocationLogMode `toml:"mode"`
	// CaptureLimit is svc.integration.log.capture_limit (default 4096 bytes): the most kept of
	// one captured payload.
	CaptureLimit Size `toml:"capture_limit"`
	// MaskFields is svc.integration.log.mask_fields: JSON field names masked case-insensitively,
	// in addition to the always-masked credential fields and headers.
	MaskFields []string `toml:"mask_fields"`
	// Retention is svc.integration.log.retention (default 0 = keep forever): rows older than this
	// are pruned hourly; negative is ErrInvalidIntegrationLogRetention.
	Retention time.Duration `toml:"retention"`
}

// Inbound is svc.integration.inbound.
type Inbound struct {
	// RateLimit is svc.integration.inbound.rate_limit: per (system, client IP), in-process and
	// per node, max default 120 per period default 1m.
	RateLimit RateLimit `toml:"rate_limit"`
}

func (i *Integration) negatives() []error {
	return negatives(ErrInvalidIntegrationLogRetention, dur("svc.integration.log.retention", i.Log.Retention))
}

func (i *Integration) applyDefaults() []error {
	errs := i.negatives()
	i.SecretAlgorithm = orDefault(i.SecretAlgorithm, SecretAlgorithmAES)
	i.RunTimeout = positive(i.RunTimeout, defaultIntegrationRunTimeout)
	i.MaxResponseBody = positive(i.MaxResponseBody, defaultMaxResponseBody)
	i.Log.Mode = orDefault(i.Log.Mode, InvocationLogErrors)
	i.Log.CaptureLimit = positive(i.Log.CaptureLimit, defaultCaptureLimit)
	i.Log.Retention = positive(i.Log.Retention, 0)
	i.Inbound.RateLimit = i.Inbound.RateLimit.withDefaults(defaultInboundRateLimitMax, defaultInboundRateLimitPeriod)
	i.ScriptCache.MaxBytes = positive(i.ScriptCache.MaxBytes, defaultScriptCacheMaxBytes)
	i.ScriptCache.TTL = positive(i.ScriptCache.TTL, defaultScriptCacheTTL)
	i.Script.MemoryLimit = positive(i.Script.MemoryLimit, defaultScriptMemoryLimit)
	i.Script.Concurrency = positive(i.Script.Concurrency, runtime.NumCPU())
	i.Script.QueueWait = positive(i.Script.QueueWait, defaultScriptQueueWait)
	return errs
}

func (i *Integration) validate() []error {
	errs := i.negatives()
	if l := i.Script.MemoryLimit; l > 0 && l < MinScriptMemoryLimit {
		errs = append(errs, fmt.Errorf("svc.integration.script.memory_limit %d bytes: at least %d (128 MiB): %w", int64(l), int64(MinScriptMemoryLimit), ErrScriptMemoryLimitTooSmall))
	}
	switch i.Log.Mode {
	case "", InvocationLogOff, InvocationLogErrors, InvocationLogAll:
	default:
		errs = append(errs, fmt.Errorf("svc.integration.log.mode %q: %w", i.Log.Mode, ErrInvalidIntegrationLogMode))
	}
	var sizes []int
	switch orDefault(i.SecretAlgorithm, SecretAlgorithmAES) {
	case SecretAlgorithmAES:
		sizes = []int{16, 24, 32}
	case SecretAlgorithmSM4:
		sizes = []int{16}
	default:
		errs = append(errs, fmt.Errorf("svc.integration.secret_algorithm %q: %w", i.SecretAlgorithm, ErrInvalidIntegrationSecretAlgorithm))
	}
	if i.SecretKey != "" {
		if err := checkKey(i.SecretKey, sizes); err != nil {
			errs = append(errs, fmt.Errorf("svc.integration.secret_key: %v: %w", err, ErrInvalidIntegrationSecretKey))
		}
	}
	return errs
}
