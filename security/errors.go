package security

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
)

// Error templates of the security module (wire-core §2.3, §5). Derive request-specific copies
// with WithArgs or Wrap; compare with errors.Is.
var (
	// ErrUnsupportedAuthenticationType: unknown login type, a token type used as a login type,
	// or trust_code while trust login is off (400/1001).
	ErrUnsupportedAuthenticationType = rpc.NewError(rpc.CodeUnsupportedAuthenticationType, http.StatusBadRequest, "security_unsupported_authentication_type")
	// ErrTokenExpired: the JWT's exp has passed (401/1002, the code clients refresh on).
	ErrTokenExpired = token.ErrTokenExpired
	// ErrTokenInvalid: malformed, forged, wrongly typed or revoked token (401/1003).
	ErrTokenInvalid = token.ErrTokenInvalid
	// ErrTokenNotValidYet: a refresh token used before refresh_not_before (401/1004).
	ErrTokenNotValidYet = token.ErrTokenNotValidYet
	// ErrTokenInvalidIssuer: the iss claim is not ours (401/1005).
	ErrTokenInvalidIssuer = token.ErrTokenInvalidIssuer
	// ErrTokenInvalidAudience: the aud claim is not svc.app.name (401/1006).
	ErrTokenInvalidAudience = token.ErrTokenInvalidAudience
	// ErrRevocationUnavailable is token.ErrRevocationUnavailable: svc.security.revocation.fail_mode
	// is closed and this node cannot tell whether the token was revoked (503/1900).
	ErrRevocationUnavailable = token.ErrRevocationUnavailable
	// ErrPrincipalInvalid: an authenticator or challenge produced no principal or a reserved id
	// (401/1007).
	ErrPrincipalInvalid = rpc.NewError(rpc.CodePrincipalInvalid, http.StatusUnauthorized, "security_principal_invalid")
	// ErrCredentialsInvalid: unknown user or wrong password, deliberately indistinguishable
	// (401/1008).
	ErrCredentialsInvalid = rpc.NewError(rpc.CodeCredentialsInvalid, http.StatusUnauthorized, "security_invalid_credentials")
	// ErrIPNotAllowed: the ip strategy refused the client address (401/1016).
	ErrIPNotAllowed = rpc.NewError(rpc.CodeIPNotAllowed, http.StatusUnauthorized, "security_ip_not_allowed")
	// ErrAccountLocked: the lockout guard blocks the identity (429/1023); the message carries
	// {{minutes}}, the wait rounded up, at least 1.
	ErrAccountLocked = rpc.NewError(rpc.CodeAccountLocked, http.StatusTooManyRequests, "security_account_locked")
	// ErrAPIKeyInvalid: missing or unknown X-API-Key (401/1025).
	ErrAPIKeyInvalid = rpc.NewError(rpc.CodeAPIKeyInvalid, http.StatusUnauthorized, "security_api_key_invalid")
	// ErrBasicCredentialsInvalid: malformed, unknown or wrong HTTP basic credentials (401/1026).
	ErrBasicCredentialsInvalid = rpc.NewError(rpc.CodeBasicCredentialsInvalid, http.StatusUnauthorized, "security_basic_credentials_invalid")
	// ErrChallengeTokenInvalid: the challenge token is forged, expired or malformed (401/1031).
	ErrChallengeTokenInvalid = rpc.NewError(rpc.CodeChallengeTokenInvalid, http.StatusUnauthorized, "security_challenge_token_invalid")
	// ErrChallengeTypeInvalid: resolve_challenge names a type other than the pending one
	// (400/1033).
	ErrChallengeTypeInvalid = rpc.NewError(rpc.CodeChallengeTypeInvalid, http.StatusBadRequest, "security_challenge_type_invalid")
	// ErrChallengeResolveFailed: a provider failed with an error that carries no code (401/1034).
	ErrChallengeResolveFailed = rpc.NewError(rpc.CodeChallengeResolveFailed, http.StatusUnauthorized, "security_challenge_resolve_failed")
	// ErrOTPCodeRequired: the OTP response is not a non-empty string (400/1035).
	ErrOTPCodeRequired = rpc.NewError(rpc.CodeOTPCodeRequired, http.StatusBadRequest, "security_otp_code_required")
	// ErrOTPCodeInvalid: wrong or replayed OTP code (401/1036).
	ErrOTPCodeInvalid = rpc.NewError(rpc.CodeOTPCodeInvalid, http.StatusUnauthorized, "security_otp_code_invalid")
	// ErrNewPasswordRequired: the password_change response is not a non-empty string (400/1037).
	ErrNewPasswordRequired = rpc.NewError(rpc.CodeNewPasswordRequired, http.StatusBadRequest, "security_new_password_required")
	// ErrHashBusy: every password-hash slot is busy and the wait queue is full, or the request's
	// deadline passed while waiting (429/1401, the rate-limit code of wire-core §2.1, without
	// Retry-After: the client may retry at once). Wrong credentials are not implied: the
	// lockout does not count it.
	ErrHashBusy = rpc.NewError(rpc.CodeTooManyRequests, http.StatusTooManyRequests, "too_many_requests")
	// ErrTooManyConcurrentSessions: an opaque-token login over session.max_concurrent with
	// on_exceed reject (403/1024).
	ErrTooManyConcurrentSessions = rpc.NewError(rpc.CodeTooManyConcurrentSessions, http.StatusForbidden, "security_too_many_concurrent_sessions")
	// ErrTrustAuthFailed: the trust-login gateway could not verify the request: unknown app,
	// missing parameter, stale timestamp, bad signature or replayed nonce all collapse to it
	// (401/1060, plain text).
	ErrTrustAuthFailed = rpc.NewError(rpc.CodeTrustAuthFailed, http.StatusUnauthorized, "security_trust_auth_failed")
	// ErrTrustRedirectNotAllowed: the gateway's redirect is not covered by the app's
	// redirect_urls (400/1061, plain text).
	ErrTrustRedirectNotAllowed = rpc.NewError(rpc.CodeTrustRedirectNotAllowed, http.StatusBadRequest, "security_trust_redirect_not_allowed")
	// ErrTrustUserNotResolved: the TrustUserResolver did not produce a principal (401/1062,
	// plain text).
	ErrTrustUserNotResolved = rpc.NewError(rpc.CodeTrustUserNotResolved, http.StatusUnauthorized, "security_trust_user_not_resolved")
	// ErrTrustCodeInvalid: login type trust_code with an unknown, used or expired code, or one
	// issued to another app, User-Agent or client IP (401/1063).
	ErrTrustCodeInvalid = rpc.NewError(rpc.CodeTrustCodeInvalid, http.StatusUnauthorized, "security_trust_code_invalid")
	// ErrDepartmentRequired: a department-selection challenge got an empty response (400/1038);
	// for host challenge providers.
	ErrDepartmentRequired = rpc.NewError(rpc.CodeDepartmentRequired, http.StatusBadRequest, "security_department_required")
	// ErrAuthHeaderMissing: an authorization header a strategy needs is absent (401/1021). The
	// bearer strategy answers 1000 instead, as the original does; for host strategies.
	ErrAuthHeaderMissing = rpc.NewError(rpc.CodeAuthHeaderMissing, http.StatusUnauthorized, "security_auth_header_missing")
	// ErrAuthHeaderInvalid: an authorization header is malformed (401/1022); for host strategies.
	ErrAuthHeaderInvalid = rpc.NewError(rpc.CodeAuthHeaderInvalid, http.StatusUnauthorized, "security_auth_header_invalid")
	// ErrUserInfoLoaderNotImplemented: get_user_info without a registered loader (501/1500).
	ErrUserInfoLoaderNotImplemented = rpc.NewError(rpc.CodeNotImplemented, http.StatusNotImplemented, "security_user_info_loader_not_implemented")
)

// Errors of the original's request-signature strategy (wire-core §3.1: X-App-ID, X-Timestamp,
// X-Nonce, X-Signature), all 401. svc ships no signature strategy (spec §5.1 lists ip, api_key
// and http_basic); the codes and messages are here so a host strategy registered with
// rpc.Engine.RegisterStrategy answers exactly as the original's clients expect.
var (
	ErrAppIDRequired       = rpc.NewError(rpc.CodeAppIDRequired, http.StatusUnauthorized, "security_app_id_required")
	ErrTimestampRequired   = rpc.NewError(rpc.CodeTimestampRequired, http.StatusUnauthorized, "security_timestamp_required")
	ErrSignatureRequired   = rpc.NewError(rpc.CodeSignatureRequired, http.StatusUnauthorized, "security_signature_required")
	ErrTimestampInvalid    = rpc.NewError(rpc.CodeTimestampInvalid, http.StatusUnauthorized, "security_timestamp_invalid")
	ErrSignatureExpired    = rpc.NewError(rpc.CodeSignatureExpired, http.StatusUnauthorized, "security_signature_expired")
	ErrExternalAppNotFound = rpc.NewError(rpc.CodeExternalAppNotFound, http.StatusUnauthorized, "security_external_app_not_found")
	ErrExternalAppDisabled = rpc.NewError(rpc.CodeExternalAppDisabled, http.StatusUnauthorized, "security_external_app_disabled")
	ErrSignatureInvalid    = rpc.NewError(rpc.CodeSignatureInvalid, http.StatusUnauthorized, "security_signature_invalid")
	ErrNonceRequired       = rpc.NewError(rpc.CodeNonceRequired, http.StatusUnauthorized, "security_nonce_required")
	ErrNonceInvalid        = rpc.NewError(rpc.CodeNonceInvalid, http.StatusUnauthorized, "security_nonce_invalid")
	ErrNonceAlreadyUsed    = rpc.NewError(rpc.CodeNonceAlreadyUsed, http.StatusUnauthorized, "security_nonce_already_used")
)

// Errors of the user-store management resource security/user (svc additions, issue #35). They
// are all 400: the operator's own session is fine when a code they typed is wrong, so none is a
// 401 a console would take for a sign-out.
var (
	// ErrUserTOTPNotPending: confirm_totp without a pending enrollment (400/1070).
	ErrUserTOTPNotPending = rpc.NewError(rpc.CodeUserTOTPNotPending, http.StatusBadRequest, "security_user_totp_not_pending")
	// ErrUserTOTPCodeInvalid: confirm_totp with a code the pending secret does not give now
	// (400/1071).
	ErrUserTOTPCodeInvalid = rpc.NewError(rpc.CodeUserTOTPCodeInvalid, http.StatusBadRequest, "security_user_totp_code_invalid")
	// ErrUserInvalidName: create with an empty or longer than 128 characters user name, or one
	// with white space or control characters (400/1072).
	ErrUserInvalidName = rpc.NewError(rpc.CodeUserInvalidName, http.StatusBadRequest, "security_user_invalid_name")
	// ErrUserSelfDisable: disable names the caller's own account (400/1073); an operator would
	// lock themselves out.
	ErrUserSelfDisable = rpc.NewError(rpc.CodeUserSelfDisable, http.StatusBadRequest, "security_user_self_disable")
	// ErrUserGrantDenied: the grant rule (Service.CheckGrant, issue #42) refuses the change: the
	// account has, or would get, a role with a permission token the caller does not hold
	// (403/1074, not 400: like 1100 it is a matter of the caller's rights).
	ErrUserGrantDenied = rpc.NewError(rpc.CodeUserGrantDenied, http.StatusForbidden, "security_user_grant_denied")
)

// Password policy errors (wire-core §5.8): every rule answers 400/1050 with a message naming it.
var (
	ErrPasswordTooShort          = policyError("security_password_too_short")
	ErrPasswordTooLong           = policyError("security_password_too_long")
	ErrPasswordMissingUppercase  = policyError("security_password_missing_uppercase")
	ErrPasswordMissingLowercase  = policyError("security_password_missing_lowercase")
	ErrPasswordMissingDigit      = policyError("security_password_missing_digit")
	ErrPasswordMissingSymbol     = policyError("security_password_missing_symbol")
	ErrPasswordTooFewCharClasses = policyError("security_password_too_few_char_classes")
	ErrPasswordContainsIdentity  = policyError("security_password_contains_identity")
	ErrPasswordBlocked           = policyError("security_password_blocked")
	ErrPasswordReused            = policyError("security_password_reused")
	ErrPasswordExpired           = policyError("security_password_expired")
)

func policyError(key string) *rpc.Error {
	return rpc.NewError(rpc.CodePasswordPolicyViolation, http.StatusBadRequest, key)
}

// Errors of the built-in user store (CLI and host code; never sent on the wire as such).
var (
	// ErrUserNotFound: no user with that name or id.
	ErrUserNotFound = token.ErrUserNotFound
	// ErrUserExists: the user name is taken.
	ErrUserExists = errors.New("security: user already exists")
	// ErrInvalidUsername: empty, too long, or with control characters.
	ErrInvalidUsername = errors.New("security: invalid user name")
	// ErrTOTPNotPending: verification without a pending enrollment.
	ErrTOTPNotPending = errors.New("security: no pending TOTP enrollment")
	// ErrDepartmentNotFound: no department with that code or id.
	ErrDepartmentNotFound = errors.New("security: department not found")
	// ErrDepartmentExists: the department code is taken.
	ErrDepartmentExists = errors.New("security: department already exists")
	// ErrInvalidDepartment: an empty or too long code or name, or a parent that would make a
	// department its own ancestor.
	ErrInvalidDepartment = errors.New("security: invalid department")
	// ErrSuperiorCycle: the superior chain would come back to the user.
	ErrSuperiorCycle = errors.New("security: a user cannot be their own (indirect) superior")
)

// ErrSigningSecretUnavailable is a startup error (token.ErrSigningSecretUnavailable): the
// signing secret is neither configured nor readable from the primary database.
var ErrSigningSecretUnavailable = token.ErrSigningSecretUnavailable
