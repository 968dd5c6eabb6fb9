package config

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Defaults of svc.security.trust_login.
const (
	defaultTrustLoginPath            = "/sso/trust"
	defaultTrustLoginCodeTTL         = 60 * time.Second
	defaultTrustLoginRateLimitMax    = 120
	defaultTrustLoginRateLimitPeriod = time.Minute
)

// TrustLogin is svc.security.trust_login (spec §5.3): the single sign-on gateway. A trusted app
// sends the user to GET <path> with a signed request; the gateway redirects to one of the app's
// redirect URLs with a one-time code the client exchanges through login type trust_code.
type TrustLogin struct {
	// Enabled is svc.security.trust_login.enabled (default false).
	Enabled bool `toml:"enabled"`
	// Path is svc.security.trust_login.path (default /sso/trust): the gateway route. It must
	// start with a slash and may not be /api or under it.
	Path string `toml:"path"`
	// CodeTTL is svc.security.trust_login.code_ttl (default 60s): the one-time code's lifetime.
	CodeTTL time.Duration `toml:"code_ttl"`
	// BindUserAgent is svc.security.trust_login.bind_user_agent (default true; false in a zero
	// Config built in code): the exchange must come from the gateway request's User-Agent.
	BindUserAgent bool `toml:"bind_user_agent"`
	// BindClientIP is svc.security.trust_login.bind_client_ip (default false): the exchange must
	// come from the gateway request's client IP.
	BindClientIP bool `toml:"bind_client_ip"`
	// Apps is svc.security.trust_login.apps, keyed by app id. Required when enabled; an app
	// absent from it is refused even if it may call the API otherwise.
	Apps map[string]TrustLoginApp `toml:"apps"`
	// RateLimit is svc.security.trust_login.rate_limit: the gateway limit per app id and client
	// IP, max default 120 per period default 1m.
	RateLimit RateLimit `toml:"rate_limit"`
}

// TrustLoginApp is one svc.security.trust_login.apps.<appId> entry.
type TrustLoginApp struct {
	// RedirectURLs is svc.security.trust_login.apps.<appId>.redirect_urls: at least one absolute
	// http(s) URL without user info or fragment; a redirect target must have the same scheme
	// and host and a path equal to or under one of them.
	RedirectURLs []string `toml:"redirect_urls"`
	// Secret is svc.security.trust_login.apps.<appId>.secret (secret, svc addition): the app's
	// hex HMAC secret that signs gateway requests. Empty means the host's app loader supplies it.
	Secret string `toml:"secret" secret:"true"`
}

func (t *TrustLogin) applyDefaults() {
	t.Path = orDefault(t.Path, defaultTrustLoginPath)
	t.CodeTTL = positive(t.CodeTTL, defaultTrustLoginCodeTTL)
	t.RateLimit = t.RateLimit.withDefaults(defaultTrustLoginRateLimitMax, defaultTrustLoginRateLimitPeriod)
}

// validate checks trust login only when it is enabled (spec §7).
func (t *TrustLogin) validate() []error {
	if !t.Enabled {
		return nil
	}
	var errs []error
	p := orDefault(t.Path, defaultTrustLoginPath)
	if !validTrustLoginPath(p) {
		errs = append(errs, fmt.Errorf("svc.security.trust_login.path %q: must be a clean absolute path outside /api: %w", p, ErrTrustLoginPathInvalid))
	}
	if len(t.Apps) == 0 {
		errs = append(errs, fmt.Errorf("svc.security.trust_login.apps: required when enabled: %w", ErrTrustLoginAppsRequired))
	}
	for _, id := range sortedKeys(t.Apps) {
		app := t.Apps[id]
		key := "svc.security.trust_login.apps." + id
		if len(app.RedirectURLs) == 0 {
			errs = append(errs, fmt.Errorf("%s.redirect_urls: %w", key, ErrTrustLoginRedirectsEmpty))
		}
		for i, u := range app.RedirectURLs {
			if !validRedirectURL(u) {
				errs = append(errs, fmt.Errorf("%s.redirect_urls[%d] %q: want an absolute http(s) URL with a host and no user info or fragment: %w", key, i, u, ErrTrustLoginRedirectInvalid))
			}
		}
		if app.Secret != "" {
			if _, err := hex.DecodeString(app.Secret); err != nil {
				errs = append(errs, fmt.Errorf("%s.secret: not hex: %w", key, ErrInvalidSecret))
			}
		}
	}
	return errs
}

// validTrustLoginPath: a clean absolute path other than "/", with no query or fragment, that is
// neither /api nor under it (the gateway is a plain route, never an RPC path).
func validTrustLoginPath(p string) bool {
	if !strings.HasPrefix(p, "/") || p == "/" || strings.ContainsAny(p, "?#") || path.Clean(p) != p {
		return false
	}
	return p != "/api" && !strings.HasPrefix(p, "/api/")
}

// validRedirectURL: absolute http or https URL with a host, without user info or fragment.
func validRedirectURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || strings.Contains(raw, "#") {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "http" || scheme == "https"
}
