package security

import (
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
)

// The token layer lives in package security/token (issue #44): issuing, verifying, revoking and
// the cross-node change feed. These names keep the module's API, which host code uses in
// Options and through Service.Tokens, as it was.
type (
	// AuthTokens is token.AuthTokens: the token pair of wire-core §5.2.
	AuthTokens = token.AuthTokens
	// TokenService is token.TokenService: the token layer behind security/auth and the bearer
	// strategy.
	TokenService = token.TokenService
	// JWTTokens is token.JWTTokens: the jwt_token service.
	JWTTokens = token.JWTTokens
	// TokenInfo is token.TokenInfo: what can end a long-lived connection bound to a JWT.
	TokenInfo = token.TokenInfo
	// TokenFamily is token.TokenFamily: one live login under jwt_token.
	TokenFamily = token.TokenFamily
	// TokenState is token.TokenState: what a principal's store says about its tokens.
	TokenState = token.TokenState
	// TokenStateLoader is token.TokenStateLoader.
	TokenStateLoader = token.TokenStateLoader
	// PrincipalLoader is token.PrincipalLoader.
	PrincipalLoader = token.PrincipalLoader
)

// Token constants of the token layer, under the names the module has always exported.
const (
	// DefaultAccessTokenTTL is token.DefaultAccessTokenTTL.
	DefaultAccessTokenTTL = token.DefaultAccessTokenTTL
	// ChallengeTokenTTL is token.ChallengeTokenTTL.
	ChallengeTokenTTL = token.ChallengeTokenTTL
	// Issuer is token.Issuer, the iss claim of every token svc issues.
	Issuer = token.Issuer
	// ChangePollInterval is token.ChangePollInterval: how often every server reads the change log.
	ChangePollInterval = token.ChangePollInterval
)

// MintAccessToken is token.MintAccessToken (tests and tools; svctest.As uses it).
var MintAccessToken = token.MintAccessToken

// newID returns a UUIDv7 (user, department and row ids): svc's one generator.
var newID = rpc.NewID
