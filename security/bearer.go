package security

import (
	"context"
	"net/http"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// QueryAccessToken is the query parameter that may carry the access token instead of the
// Authorization header (wire-core §3.1), for links such as downloads and WebSocket handshakes.
const QueryAccessToken = "__accessToken"

// Bearer is the bearer strategy (the engine default): "Authorization: Bearer <token>" with the
// scheme matched case-insensitively, else the __accessToken query parameter. No token answers
// 401/1000; a bad one 1003; an expired one 1002.
type Bearer struct {
	Tokens TokenService
}

var _ rpc.Strategy = (*Bearer)(nil)

// Name implements rpc.Strategy.
func (b *Bearer) Name() string { return rpc.StrategyBearer }

// Authenticate implements rpc.Strategy.
func (b *Bearer) Authenticate(ctx context.Context, req rpc.AuthRequest) (*rpc.Principal, error) {
	token := BearerToken(req.Request)
	if token == "" {
		return nil, rpc.ErrUnauthenticated
	}
	return b.Tokens.Verify(ctx, token)
}

// BearerToken extracts the access token of r: the Authorization Bearer credential, else the
// __accessToken query parameter, else "".
func BearerToken(r *http.Request) string {
	if r == nil {
		return ""
	}
	if scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok &&
		strings.EqualFold(scheme, "Bearer") {
		if token = strings.TrimSpace(token); token != "" {
			return token
		}
	}
	return r.URL.Query().Get(QueryAccessToken)
}
