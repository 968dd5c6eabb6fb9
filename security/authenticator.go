package security

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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
//
// When a login succeeds with a hash made under older parameters (Hasher.NeedsRehash) and Users
// also implements PasswordHashUpgrader, the password is hashed again with the current
// parameters and stored; a failure to store it is logged and does not fail the login.
type PasswordAuthenticator struct {
	Users  UserStore
	Hasher *Hasher
	// Logger receives failed hash upgrades; nil means slog.Default().
	Logger *slog.Logger
}

// PasswordHashUpgrader is implemented by user stores that accept a re-hashed password after a
// successful login. UpgradePasswordHash replaces the hash of userID with newHash only while the
// stored hash is still oldHash (a password changed meanwhile wins), and changes nothing else:
// it is the same password, so issued tokens stay valid and the history is not touched.
type PasswordHashUpgrader interface {
	UpgradePasswordHash(ctx context.Context, userID, oldHash, newHash string) error
}

var _ Authenticator = (*PasswordAuthenticator)(nil)

// Authenticate implements Authenticator.
//
// The hash work runs in one of the Hasher's slots (Hasher.Acquire): a burst of logins waits in
// a bounded queue instead of holding one argon2id memory block per request; a full queue or
// the request's deadline answers ErrHashBusy.
func (a *PasswordAuthenticator) Authenticate(ctx context.Context, req LoginRequest) (*rpc.Principal, error) {
	release, err := a.Hasher.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
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
	a.upgradeHash(ctx, u, password)
	return u.Principal(), nil
}

// upgradeHash stores a hash of password under the current parameters when u's was made under
// older ones.
func (a *PasswordAuthenticator) upgradeHash(ctx context.Context, u *User, password string) {
	up, ok := a.Users.(PasswordHashUpgrader)
	if !ok || !a.Hasher.NeedsRehash(u.PasswordHash) {
		return
	}
	logger := a.Logger
	if logger == nil {
		logger = slog.Default()
	}
	hash, err := a.Hasher.Hash(password)
	if err == nil {
		err = up.UpgradePasswordHash(ctx, u.ID, u.PasswordHash, hash)
	}
	if err != nil {
		logger.WarnContext(ctx, "security: password hash upgrade failed; the old hash stays", slog.String("user", u.ID), slog.Any("error", err))
	}
}
