package config

import (
	"encoding/base64"
	"fmt"
	"time"
)

// BodyEncoding names a protected body transport cipher (spec §5.4). The value is also the exact
// X-Body-Encoding header value the client must send.
type BodyEncoding string

// Protected body encodings.
const (
	BodyEncodingAESGCM BodyEncoding = "aes-gcm+base64"
	BodyEncodingSM4GCM BodyEncoding = "sm4-gcm+base64"
)

// Defaults of svc.api.
const (
	defaultAPIRateLimitMax    = 100
	defaultAPIRateLimitPeriod = 5 * time.Minute
)

// API is the svc.api section: the /api engine (spec §5.4, §8.1).
type API struct {
	// RateLimit is svc.api.rate_limit: the engine default limit for operations without their
	// own, max default 100 per period default 5m, counted per node and keyed by resource,
	// version, action, client IP and principal id.
	RateLimit RateLimit `toml:"rate_limit"`
	// BodyEncoding is svc.api.body_encoding: the protected request and response body transport.
	BodyEncoding APIBodyEncoding `toml:"body_encoding"`
}

// APIBodyEncoding is svc.api.body_encoding (spec §5.4). Multipart and binary bodies are never
// encoded; the protection does not replace HTTPS.
type APIBodyEncoding struct {
	// Enabled is svc.api.body_encoding.enabled (default false): require protected JSON request
	// bodies on /api and protect JSON responses.
	Enabled bool `toml:"enabled"`
	// Encoding is svc.api.body_encoding.encoding: aes-gcm+base64 (default) or sm4-gcm+base64.
	Encoding BodyEncoding `toml:"encoding"`
	// Key is svc.api.body_encoding.key (secret): the standard-base64 symmetric key shared with
	// the client; 16, 24 or 32 bytes for AES, 16 bytes for SM4. Required when enabled.
	Key string `toml:"key" secret:"true"`
}

func (a *API) applyDefaults() {
	a.RateLimit = a.RateLimit.withDefaults(defaultAPIRateLimitMax, defaultAPIRateLimitPeriod)
	a.BodyEncoding.Encoding = orDefault(a.BodyEncoding.Encoding, BodyEncodingAESGCM)
}

// validate checks the body encoding only when it is enabled (spec §7).
func (a *API) validate() []error {
	be := a.BodyEncoding
	if !be.Enabled {
		return nil
	}
	var errs []error
	enc := orDefault(be.Encoding, BodyEncodingAESGCM)
	var sizes []int
	switch enc {
	case BodyEncodingAESGCM:
		sizes = []int{16, 24, 32}
	case BodyEncodingSM4GCM:
		sizes = []int{16}
	default:
		errs = append(errs, fmt.Errorf("svc.api.body_encoding.encoding %q: %w", enc, ErrInvalidAPIBodyEncoding))
	}
	if be.Key == "" {
		return append(errs, fmt.Errorf("svc.api.body_encoding.key: %w", ErrMissingAPIBodyEncodingKey))
	}
	if err := checkKey(be.Key, sizes); err != nil {
		errs = append(errs, fmt.Errorf("svc.api.body_encoding.key: %v: %w", err, ErrInvalidAPIBodyEncodingKey))
	}
	return errs
}

// checkKey decodes a standard-base64 key and checks its length against sizes (no check when
// sizes is empty, i.e. the cipher itself is invalid). The key is never part of the message.
func checkKey(key string, sizes []int) error {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return fmt.Errorf("not standard base64")
	}
	if len(sizes) == 0 {
		return nil
	}
	for _, n := range sizes {
		if len(raw) == n {
			return nil
		}
	}
	return fmt.Errorf("decodes to %d bytes, want one of %v", len(raw), sizes)
}
