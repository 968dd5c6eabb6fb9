package rpc

import "net/http"

// Business codes of the envelope (wire-core §2.2–§2.4). Every module uses these constants so the
// whole code table lives in one place; modules declare their error templates with NewError.
const (
	CodeOK                   = 0
	CodeUnauthenticated      = 1000
	CodeAccessDenied         = 1100
	CodeNotFound             = 1200
	CodeUnsupportedMediaType = 1300
	CodeBadRequest           = 1400
	CodeTooManyRequests      = 1401
	CodeRequestTimeout       = 1402
	CodeNotImplemented       = 1500
	CodeDangerousSQL         = 1600
	CodeUnknown              = 1900
	CodeDefault              = 2000
	CodeRecordNotFound       = 2001
	CodeRecordAlreadyExists  = 2002
	CodeForeignKeyViolation  = 2003
)

// Security codes (wire-core §2.3).
const (
	CodeUnsupportedAuthenticationType = 1001
	CodeTokenExpired                  = 1002
	CodeTokenInvalid                  = 1003
	CodeTokenNotValidYet              = 1004
	CodeTokenInvalidIssuer            = 1005
	CodeTokenInvalidAudience          = 1006
	CodePrincipalInvalid              = 1007
	CodeCredentialsInvalid            = 1008
	CodeAppIDRequired                 = 1009
	CodeTimestampRequired             = 1010
	CodeSignatureRequired             = 1011
	CodeTimestampInvalid              = 1012
	CodeSignatureExpired              = 1013
	CodeExternalAppNotFound           = 1014
	CodeExternalAppDisabled           = 1015
	CodeIPNotAllowed                  = 1016
	CodeSignatureInvalid              = 1017
	CodeNonceRequired                 = 1018
	CodeNonceInvalid                  = 1019
	CodeNonceAlreadyUsed              = 1020
	CodeAuthHeaderMissing             = 1021
	CodeAuthHeaderInvalid             = 1022
	CodeAccountLocked                 = 1023
	CodeTooManyConcurrentSessions     = 1024
	CodeAPIKeyInvalid                 = 1025
	CodeBasicCredentialsInvalid       = 1026
	CodeChallengeTokenInvalid         = 1031
	CodeChallengeTypeInvalid          = 1033
	CodeChallengeResolveFailed        = 1034
	CodeOTPCodeRequired               = 1035
	CodeOTPCodeInvalid                = 1036
	CodeNewPasswordRequired           = 1037
	CodeDepartmentRequired            = 1038
	CodePasswordPolicyViolation       = 1050
	CodeTrustAuthFailed               = 1060
	CodeTrustRedirectNotAllowed       = 1061
	CodeTrustUserNotResolved          = 1062
	CodeTrustCodeInvalid              = 1063
	// Codes of the user-store management resource security/user (svc additions, issue #35).
	CodeUserTOTPNotPending  = 1070
	CodeUserTOTPCodeInvalid = 1071
	CodeUserInvalidName     = 1072
	CodeUserSelfDisable     = 1073
	CodeUserGrantDenied     = 1074 // the grant rule of issue #42
)

// Cross-cutting error templates (wire-core §1.4, §1.5, §2.2). Derive request-specific copies with
// WithMessage/WithArgs/Wrap; compare with errors.Is.
var (
	ErrUnauthenticated      = NewError(CodeUnauthenticated, http.StatusUnauthorized, "security_unauthenticated")
	ErrAccessDenied         = NewError(CodeAccessDenied, http.StatusForbidden, "access_denied")
	ErrNotFound             = NewError(CodeNotFound, http.StatusNotFound, "not_found")
	ErrUnsupportedMediaType = NewError(CodeUnsupportedMediaType, http.StatusUnsupportedMediaType, "unsupported_media_type")
	ErrBadRequest           = NewError(CodeBadRequest, http.StatusBadRequest, "bad_request")
	ErrTooManyRequests      = NewError(CodeTooManyRequests, http.StatusTooManyRequests, "too_many_requests")
	ErrRequestTimeout       = NewError(CodeRequestTimeout, http.StatusRequestTimeout, "request_timeout")
	ErrNotImplemented       = NewError(CodeNotImplemented, http.StatusNotImplemented, "not_implemented")
	ErrDangerousSQL         = NewError(CodeDangerousSQL, http.StatusOK, "dangerous_sql")
	ErrUnknown              = NewError(CodeUnknown, http.StatusInternalServerError, "unknown_error")
	ErrDefault              = NewError(CodeDefault, http.StatusOK, "error")
	ErrRecordNotFound       = NewError(CodeRecordNotFound, http.StatusOK, "record_not_found")
	ErrRecordAlreadyExists  = NewError(CodeRecordAlreadyExists, http.StatusOK, "record_already_exists")
	ErrForeignKeyViolation  = NewError(CodeForeignKeyViolation, http.StatusOK, "foreign_key_violation")

	// Envelope and body-encoding errors of the api package (wire-core §2.2), all code 1400.
	ErrInvalidRequestParams    = NewError(CodeBadRequest, http.StatusBadRequest, "api_request_params_invalid_json")
	ErrInvalidRequestMeta      = NewError(CodeBadRequest, http.StatusBadRequest, "api_request_meta_invalid_json")
	ErrInvalidRequestBody      = NewError(CodeBadRequest, http.StatusBadRequest, "api_request_body_invalid_json")
	ErrBodyEncodingRequired    = NewError(CodeBadRequest, http.StatusBadRequest, "api_body_encoding_required")
	ErrUnsupportedBodyEncoding = NewError(CodeBadRequest, http.StatusBadRequest, "api_body_encoding_unsupported")
	ErrBodyDecodeFailed        = NewError(CodeBadRequest, http.StatusBadRequest, "api_body_decode_failed")
	ErrBodyTooLarge            = NewError(CodeBadRequest, http.StatusRequestEntityTooLarge, "api_body_too_large")
)
