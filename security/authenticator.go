package security

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Login types with a fixed meaning (spec §2.3, wire-core §2.3).
const (
	// LoginTypePassword is the built-in user-name and password login.
	LoginTypePassword = "password"
	// LoginTypeTrustCode exchanges a trust-login code (issue #5); refused with 1001 while trust
	// login is off.
	LoginTypeTrustCode = "trust_code"
)

// refusedLoginTypes are names no authenticator may be registered under: they name token types
// and the refresh action, and the original refuses them as login types with 1001.
var refusedLoginTypes = map[string]bool{"jwt_token": true, "opaque_token": true, "refresh": true}

// LoginRequest is what an authenticator gets from a login call.
type LoginRequest struct {
	// Type is the login type (the registry key).
	Type string
	// Identifier is the principal param as sent (authenticators normalize it as they need).
	Identifier string
	// Credentials is the raw credentials param: for password a JSON string, for host types any
	// JSON value. Never log it.
	Credentials json.RawMessage
	// ClientIP is the caller's address resolved through svc.app.trusted_proxies.
	ClientIP string
	// Request is the HTTP request (headers such as User-Agent).
	Request *http.Request
}

// Authenticator verifies the credentials of one login type and returns the principal. Wrong
// credentials must answer ErrCredentialsInvalid (or a copy), which counts toward the lockout;
// other *rpc.Error values are sent as they are and do not count.
type Authenticator interface {
	Authenticate(ctx context.Context, req LoginRequest) (*rpc.Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(ctx context.Context, req LoginRequest) (*rpc.Principal, error)

// Authenticate implements Authenticator.
func (f AuthenticatorFunc) Authenticate(ctx context.Context, req LoginRequest) (*rpc.Principal, error) {
	return f(ctx, req)
}

// PasswordAuthenticator is the built-in password login over a UserStore: credentials are the
// plaintext password as a JSON string. Unknown user, wrong password and disabled account all
// answer ErrCredentialsInvalid after the same hash work, so neither the answer nor its timing
// tells whether a user name exists.
type PasswordAuthenticator struct {
	Users  UserStore
	Hasher *Hasher
}

var _ Authenticator = (*PasswordAuthenticator)(nil)

// Authenticate implements Authenticator.
func (a *PasswordAuthenticator) Authenticate(ctx context.Context, req LoginRequest) (*rpc.Principal, error) {
	var password string
	if err := json.Unmarshal(req.Credentials, &password); err != nil {
		a.Hasher.VerifyDummy("")
		return nil, ErrCredentialsInvalid
	}
	u, err := a.Users.LookupUser(ctx, NormalizeUsername(req.Identifier))
	switch {
	case errors.Is(err, ErrUserNotFound):
		a.Hasher.VerifyDummy(password)
		return nil, ErrCredentialsInvalid
	case err != nil:
		return nil, err
	}
	if !a.Hasher.Verify(u.PasswordHash, password) || u.Disabled {
		return nil, ErrCredentialsInvalid
	}
	return u.Principal(), nil
}
