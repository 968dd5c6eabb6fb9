package token

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Error templates of the token layer (wire-core §2.3). Package security re-exports them under
// the same names (security.ErrTokenInvalid is this ErrTokenInvalid), so errors.Is matches
// either. Derive request-specific copies with WithArgs or Wrap.
var (
	// ErrTokenExpired: the JWT's exp has passed (401/1002, the code clients refresh on).
	ErrTokenExpired = rpc.NewError(rpc.CodeTokenExpired, http.StatusUnauthorized, "security_token_expired")
	// ErrTokenInvalid: malformed, forged, wrongly typed or revoked token (401/1003).
	ErrTokenInvalid = rpc.NewError(rpc.CodeTokenInvalid, http.StatusUnauthorized, "security_token_invalid")
	// ErrTokenNotValidYet: a refresh token used before refresh_not_before (401/1004).
	ErrTokenNotValidYet = rpc.NewError(rpc.CodeTokenNotValidYet, http.StatusUnauthorized, "security_token_not_valid_yet")
	// ErrTokenInvalidIssuer: the iss claim is not ours (401/1005).
	ErrTokenInvalidIssuer = rpc.NewError(rpc.CodeTokenInvalidIssuer, http.StatusUnauthorized, "security_token_invalid_issuer")
	// ErrTokenInvalidAudience: the aud claim is not svc.app.name (401/1006).
	ErrTokenInvalidAudience = rpc.NewError(rpc.CodeTokenInvalidAudience, http.StatusUnauthorized, "security_token_invalid_audience")
	// ErrRevocationUnavailable: svc.security.revocation.fail_mode is closed and this node cannot
	// tell whether the token was revoked (its change feed is older than max_feed_age and the
	// database does not answer): HTTP 503 with code 1900, the code the original gives a status
	// it does not map (wire-core §1.5). Not a 401: the original's client signs out on any 401
	// but 1002 (wire-core §5.10), which would log every user out during a database outage; a
	// 503 is an error the page shows, and the same token works once the database is back.
	ErrRevocationUnavailable = rpc.NewError(rpc.CodeUnknown, http.StatusServiceUnavailable, "security_revocation_unavailable")
	// ErrUserNotFound: the principal's store does not know the id (TokenStateLoader,
	// PrincipalLoader); its tokens are then not restricted by a token state. Package security
	// re-exports it as its user store's ErrUserNotFound.
	ErrUserNotFound = errors.New("security: user not found")
)

// ErrSigningSecretUnavailable is a startup error: svc.security.secret is not configured and the
// generated secret cannot be read from or stored in the primary database (table
// sys_security_secret, created by the security module's migrations). Run `svc migrate`, or set
// svc.security.secret.
var ErrSigningSecretUnavailable = errors.New("signing secret unavailable: run `svc migrate` or set svc.security.secret")
