package security_test

import (
	"testing"

	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

// TestCodeTable holds the error templates to the code tables of wire-core §2.2 (rpc: the
// cross-cutting and api errors) and §2.3 (security): every code has a template with the table's
// HTTP status, and its message key is in both catalogs.
func TestCodeTable(t *testing.T) {
	tests := []struct {
		err    *rpc.Error
		code   int
		status int
	}{
		{rpc.ErrAccessDenied, 1100, 403},
		{rpc.ErrNotFound, 1200, 404},
		{rpc.ErrUnsupportedMediaType, 1300, 415},
		{rpc.ErrBadRequest, 1400, 400},
		{rpc.ErrTooManyRequests, 1401, 429},
		{rpc.ErrRequestTimeout, 1402, 408},
		{rpc.ErrNotImplemented, 1500, 501},
		{rpc.ErrDangerousSQL, 1600, 200},
		{rpc.ErrUnknown, 1900, 500},
		{rpc.ErrMethodNotAllowed, 1900, 405},
		{rpc.ErrDefault, 2000, 200},
		{rpc.ErrRecordNotFound, 2001, 200},
		{rpc.ErrRecordAlreadyExists, 2002, 200},
		{rpc.ErrForeignKeyViolation, 2003, 200},
		{rpc.ErrInvalidRequestParams, 1400, 400},
		{rpc.ErrInvalidRequestMeta, 1400, 400},
		{rpc.ErrInvalidRequestBody, 1400, 400},
		{rpc.ErrBodyEncodingRequired, 1400, 400},
		{rpc.ErrUnsupportedBodyEncoding, 1400, 400},
		{rpc.ErrBodyDecodeFailed, 1400, 400},
		{rpc.ErrBodyTooLarge, 1400, 413},
		{rpc.ErrUnauthenticated, 1000, 401},
		{security.ErrUnsupportedAuthenticationType, 1001, 400},
		{security.ErrTokenExpired, 1002, 401},
		{security.ErrTokenInvalid, 1003, 401},
		{security.ErrTokenNotValidYet, 1004, 401},
		{security.ErrTokenInvalidIssuer, 1005, 401},
		{security.ErrTokenInvalidAudience, 1006, 401},
		{security.ErrPrincipalInvalid, 1007, 401},
		{security.ErrCredentialsInvalid, 1008, 401},
		{security.ErrAppIDRequired, 1009, 401},
		{security.ErrTimestampRequired, 1010, 401},
		{security.ErrSignatureRequired, 1011, 401},
		{security.ErrTimestampInvalid, 1012, 401},
		{security.ErrSignatureExpired, 1013, 401},
		{security.ErrExternalAppNotFound, 1014, 401},
		{security.ErrExternalAppDisabled, 1015, 401},
		{security.ErrIPNotAllowed, 1016, 401},
		{security.ErrSignatureInvalid, 1017, 401},
		{security.ErrNonceRequired, 1018, 401},
		{security.ErrNonceInvalid, 1019, 401},
		{security.ErrNonceAlreadyUsed, 1020, 401},
		{security.ErrAuthHeaderMissing, 1021, 401},
		{security.ErrAuthHeaderInvalid, 1022, 401},
		{security.ErrAccountLocked, 1023, 429},
		{security.ErrTooManyConcurrentSessions, 1024, 403},
		{security.ErrAPIKeyInvalid, 1025, 401},
		{security.ErrBasicCredentialsInvalid, 1026, 401},
		{security.ErrChallengeTokenInvalid, 1031, 401},
		{security.ErrChallengeTypeInvalid, 1033, 400},
		{security.ErrChallengeResolveFailed, 1034, 401},
		{security.ErrOTPCodeRequired, 1035, 400},
		{security.ErrOTPCodeInvalid, 1036, 401},
		{security.ErrNewPasswordRequired, 1037, 400},
		{security.ErrDepartmentRequired, 1038, 400},
		{security.ErrPasswordTooShort, 1050, 400},
		{security.ErrTrustAuthFailed, 1060, 401},
		{security.ErrTrustRedirectNotAllowed, 1061, 400},
		{security.ErrTrustUserNotResolved, 1062, 401},
		{security.ErrTrustCodeInvalid, 1063, 401},
	}
	catalogs := []*i18n.Catalog{i18n.MustNew("en", security.Messages()), i18n.MustNew("zh-CN", security.Messages())}
	for _, tt := range tests {
		if tt.err.Code != tt.code || tt.err.HTTPStatus() != tt.status {
			t.Errorf("%s: %d/%d, want %d/%d", tt.err.Key, tt.err.HTTPStatus(), tt.err.Code, tt.status, tt.code)
		}
		for _, c := range catalogs {
			if !c.Has(tt.err.Key) {
				t.Errorf("code %d: key %q missing from the %s catalog", tt.code, tt.err.Key, c.Language())
			}
		}
	}
}
