package security

import (
	"errors"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// MintAccessToken signs an access token for p with cfg.Security.Secret and the claims a login
// would give it (iss, aud = svc.app.name, sub, jti, typ access, roles, details; valid for
// svc.security.access_token_expires from now). It is for tests and tools (svctest.As uses it); the token is not part of a
// refresh family. The secret must be set: an ephemeral key cannot be shared.
func MintAccessToken(cfg *config.Config, p *rpc.Principal, now time.Time) (string, error) {
	if cfg == nil || p == nil {
		return "", errors.New("security: MintAccessToken needs a configuration and a principal")
	}
	if cfg.Security.Secret == "" {
		return "", errors.New("security: MintAccessToken needs svc.security.secret (the server would use an ephemeral key)")
	}
	key, _, err := SigningKey(cfg.Security.Secret)
	if err != nil {
		return "", err
	}
	s := &signer{key: key, audience: cfg.App.Name, now: func() time.Time { return now }}
	return mintAccess(s, p, "", newID(), now, accessTTL(cfg))
}

// accessTTL is svc.security.access_token_expires, or the default for a configuration built in
// code without config.Load's defaults.
func accessTTL(cfg *config.Config) time.Duration {
	if ttl := cfg.Security.AccessTokenExpires; ttl > 0 {
		return ttl
	}
	return DefaultAccessTokenTTL
}
