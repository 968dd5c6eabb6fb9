package security

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/svc-framework/svc/rpc"
)

// opaqueTokenBytes is the entropy of an opaque token (wire-core §5.5: 32 random bytes).
const opaqueTokenBytes = 32

// opaqueTokenLen is the length of its unpadded base64url form.
var opaqueTokenLen = base64.RawURLEncoding.EncodedLen(opaqueTokenBytes)

// GenerateOpaqueToken returns 32 random bytes as base64url without padding (43 characters): the
// form of opaque access tokens and trust-login codes (wire-core §5.5, §5.9).
func GenerateOpaqueToken() (string, error) {
	b := make([]byte, opaqueTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// wellFormedOpaque reports whether s has the form GenerateOpaqueToken returns, so malformed
// tokens are refused without a store lookup.
func wellFormedOpaque(s string) bool {
	if len(s) != opaqueTokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// OpaqueTokens is the opaque_token TokenService (wire-core §5.5): every login starts a Session;
// the access token is the session's only credential and there is no refresh token, so the
// refresh action is not mounted (404/1200). Unknown, expired and revoked tokens are 401/1003.
type OpaqueTokens struct {
	sessions *Sessions
}

var _ TokenService = (*OpaqueTokens)(nil)

// NewOpaqueTokens returns the token service over sessions.
func NewOpaqueTokens(sessions *Sessions) *OpaqueTokens { return &OpaqueTokens{sessions: sessions} }

// Issue implements TokenService: a new session under session.max_concurrent (403/1024 with
// on_exceed reject; the oldest sessions are revoked with evict_oldest).
func (o *OpaqueTokens) Issue(ctx context.Context, p *rpc.Principal) (AuthTokens, error) {
	token, err := o.sessions.create(ctx, p)
	if err != nil {
		return AuthTokens{}, err
	}
	return AuthTokens{AccessToken: token}, nil
}

// Verify implements TokenService: the session's principal snapshot, with the expiry slid.
func (o *OpaqueTokens) Verify(ctx context.Context, accessToken string) (*rpc.Principal, error) {
	return o.sessions.verify(ctx, accessToken)
}

// Refresh implements TokenService: opaque sessions have no refresh token.
func (o *OpaqueTokens) Refresh(context.Context, string) (AuthTokens, *rpc.Principal, error) {
	return AuthTokens{}, nil, ErrTokenInvalid
}

// Revoke implements TokenService: logout ends the token's session on every node at once. A
// malformed, unknown or already revoked token is not an error.
func (o *OpaqueTokens) Revoke(ctx context.Context, accessToken string) error {
	if !wellFormedOpaque(accessToken) {
		return nil
	}
	_, err := o.sessions.revoke(ctx, SessionID(accessToken), RevokeReasonLogout)
	return err
}

// SupportsRefresh implements TokenService.
func (o *OpaqueTokens) SupportsRefresh() bool { return false }
