package mcp

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/rpc"
)

// Keys of auth.TokenInfo.Extra set for an authenticated call.
const (
	extraPrincipal = "principal"
	extraClientIP  = "client_ip"
	extraRequestID = "request_id"
	// extraAuthorization is the credential the principal was verified from, as the
	// Authorization header value "Bearer <token>": operation tools hand it to rpc.Engine.CallAs
	// so that an operation reading the request's credential (logout) sees the caller's.
	extraAuthorization = "authorization"
)

// principalKey carries the verified caller from authenticate to the SDK's token verifier.
type principalKey struct{}

// writerKey carries the *callWriter of a request to its tool handlers.
type writerKey struct{}

// callWriter is the HTTP response of a request the SDK or the fast path serves, as its tool
// handlers see it: database_query bounds the answer's write by the call's deadline
// (limitWrite).
type callWriter struct {
	w http.ResponseWriter
}

// withWriter returns ctx carrying a callWriter of w.
func withWriter(ctx context.Context, w http.ResponseWriter) context.Context {
	return context.WithValue(ctx, writerKey{}, &callWriter{w: w})
}

// limitWrite sets the write deadline of the HTTP response that carries ctx's call to ctx's
// deadline: a client that reads the answer too slowly cannot hold the call, and its buffers,
// past it. The answer is written after the handler returns, on the same connection; net/http
// clears the deadline once the request is finished.
func limitWrite(ctx context.Context) {
	cw, _ := ctx.Value(writerKey{}).(*callWriter)
	if d, ok := ctx.Deadline(); ok && cw != nil {
		_ = http.NewResponseController(cw.w).SetWriteDeadline(d) // not supported: the server's own limits apply
	}
}

// verified is a principal and the bearer token it was verified from.
type verified struct {
	principal *rpc.Principal
	token     string
}

// authenticate is the endpoint's authentication (spec §5.1, wire-runtime §4): a request with an
// "Authorization: Bearer <token>" header (exactly two fields, the scheme in any case; no query
// parameter) is verified by the shared bearer strategy, so the configured token type (JWT or
// opaque sessions), expiry and revocation apply as on /api; a bad token answers 401. Without
// the header, the request answers 401 unless svc.mcp.require_auth is explicitly false, when it
// runs as the anonymous user. Every 401 carries "WWW-Authenticate: Bearer" (the original sends
// none). The principal reaches the tools through the SDK's auth.TokenInfo (Extra "principal").
func (s *Service) authenticate(next http.Handler) http.Handler {
	withToken := auth.RequireBearerToken(verifyBound, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			if !s.cfg.AuthRequired() && r.Header.Get("Authorization") == "" {
				if !s.serveFast(w, r, nil) {
					ctx := withWriter(r.Context(), w)
					next.ServeHTTP(w, r.WithContext(ctx))
				}
				return
			}
			unauthorized(w, http.StatusUnauthorized, "no bearer token")
			return
		}
		p, err := s.auth.Authenticate(r.Context(), headerOnly(r, token), rpc.StrategyBearer)
		if err != nil {
			status, msg := http.StatusUnauthorized, "invalid token"
			if re, ok := rpc.AsError(err); ok && re.HTTPStatus() >= http.StatusInternalServerError {
				status, msg = re.HTTPStatus(), "authentication unavailable"
			} else if ok {
				msg += ": " + re.Key
			}
			unauthorized(w, status, msg)
			return
		}
		v := verified{principal: p, token: token}
		if s.serveFast(w, r, tokenInfo(r.Context(), v)) {
			return
		}
		ctx := withWriter(context.WithValue(r.Context(), principalKey{}, v), w)
		withToken.ServeHTTP(w, r.WithContext(ctx))
	})
}

// verifyBound is the SDK verifier: the token was verified by authenticate, which bound the
// principal to the request context; it becomes the call's TokenInfo. The UserID ties a session
// to its user should the endpoint ever run stateful.
func verifyBound(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	v, ok := ctx.Value(principalKey{}).(verified)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return tokenInfo(ctx, v), nil
}

// tokenInfo is the SDK's view of an authenticated call: the principal and its credential, the
// client IP and the request id of ctx's request.
func tokenInfo(ctx context.Context, v verified) *auth.TokenInfo {
	info := rpc.RequestInfoFrom(ctx)
	p := v.principal
	return &auth.TokenInfo{
		UserID: string(p.Type) + ":" + p.ID,
		Extra: map[string]any{extraPrincipal: p, extraAuthorization: "Bearer " + v.token,
			extraClientIP: info.ClientIP, extraRequestID: info.ID},
	}
}

// bearerToken returns the token of an "Authorization: Bearer <token>" header: exactly two
// fields, the scheme matched case-insensitively (the SDK's rule).
func bearerToken(r *http.Request) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		return "", false
	}
	return fields[1], true
}

// headerOnly returns a request for the bearer strategy that carries the token in its header
// only: the strategy's __accessToken query fallback does not apply to /mcp. A request without a
// query whose header is exactly "Bearer <token>" is already such a request (the strategy reads
// that header first) and is used as it is.
func headerOnly(r *http.Request, token string) *http.Request {
	if h := r.Header["Authorization"]; r.URL.RawQuery == "" && len(h) == 1 && len(h[0]) == len("Bearer ")+len(token) &&
		strings.EqualFold(h[0][:len("Bearer ")], "Bearer ") && h[0][len("Bearer "):] == token {
		return r
	}
	c := new(http.Request)
	*c = *r // a shallow copy: the strategy reads the header, the URL and the remote address
	c.URL = &url.URL{Path: r.URL.Path}
	c.Header = http.Header{"Authorization": {"Bearer " + token}}
	return c
}

// unauthorized writes a plain-text failure with the Bearer challenge.
func unauthorized(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	http.Error(w, msg, status)
}

// Principal returns the caller of an MCP request: the principal bound by the endpoint's
// authentication, or the anonymous user when svc.mcp.require_auth = false and no token was sent.
// Host tool, resource and prompt handlers call it with req.Extra.
func Principal(extra *sdk.RequestExtra) *rpc.Principal {
	if extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra[extraPrincipal].(*rpc.Principal); ok {
			return p
		}
	}
	return rpc.Anonymous()
}

// caller is who runs an operation tool: the principal of Principal and the credential it was
// verified from (none for the anonymous user, whom rpc.Engine.CallAs refuses every operation
// that is not public, as /api refuses a request without a credential).
func caller(extra *sdk.RequestExtra) rpc.Caller {
	c := rpc.Caller{Principal: Principal(extra)}
	if extra != nil && extra.TokenInfo != nil {
		c.Authorization, _ = extra.TokenInfo.Extra[extraAuthorization].(string)
	}
	return c
}

// requestInfo returns the client IP and request id of the HTTP request that carried a call.
func requestInfo(extra *sdk.RequestExtra) rpc.RequestInfo {
	if extra == nil || extra.TokenInfo == nil {
		return rpc.RequestInfo{}
	}
	ip, _ := extra.TokenInfo.Extra[extraClientIP].(string)
	id, _ := extra.TokenInfo.Extra[extraRequestID].(string)
	return rpc.RequestInfo{ID: id, ClientIP: ip}
}
