package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// Token lifetimes and claim values (wire-core §5.4).
const (
	// DefaultAccessTokenTTL is the access-token lifetime when svc.security.access_token_expires
	// is unset: the fixed 30 minutes of spec §5.2 and the original.
	DefaultAccessTokenTTL = 30 * time.Minute
	// Issuer is the iss claim of every token svc issues.
	Issuer = "svc"
	// jwtLeeway tolerates clock skew between nodes when checking exp and nbf.
	jwtLeeway = 10 * time.Second

	typAccess    = "access"
	typRefresh   = "refresh"
	typChallenge = "challenge"
)

// AccessTTL is the lifetime of access tokens for cfg: svc.security.access_token_expires
// (ours; spec §5.2's fixed 30 minutes by default), or that default for a configuration built in
// code without config.Load's defaults. Tokens living longer are refused. It is the one place the
// access lifetime is read.
func AccessTTL(cfg *config.Config) time.Duration {
	if ttl := cfg.Security.AccessTokenExpires; ttl > 0 {
		return ttl
	}
	return DefaultAccessTokenTTL
}

// claims are the JWT claims of access, refresh and challenge tokens. aud is a single string, as
// the original sends it; uid and pnm carry the principal's id and name explicitly so that ids
// containing "@" survive the sub = "<id>@<name>" form kept for compatibility. rls and det are
// omitted from refresh and challenge tokens but always written on access tokens (MarshalJSON);
// parsing accepts tokens without them.
type claims struct {
	Issuer    string           `json:"iss"`
	Audience  string           `json:"aud"`
	Subject   string           `json:"sub"`
	ID        string           `json:"jti"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	Expires   *jwt.NumericDate `json:"exp"`
	Type      string           `json:"typ"`
	UserID    string           `json:"uid,omitempty"`
	Name      string           `json:"pnm,omitempty"`
	PType     string           `json:"ptp,omitempty"`
	Roles     []string         `json:"rls,omitempty"`
	Details   json.RawMessage  `json:"det,omitempty"`
	Family    string           `json:"fid,omitempty"`
	// LoginAt is the instant of the login the token descends from, in Unix microseconds (ours,
	// issue #42): the login itself for its pair, kept by every refresh, and the issue time of a
	// challenge token. iat has whole seconds only, so the token state compares this instead
	// (tokenstate.go); a token without it counts as issued at its iat.
	LoginAt int64 `json:"lat,omitempty"`
	// Challenge state (typ "challenge"): login mechanism, identifier, pending and resolved.
	Mechanism  string   `json:"mech,omitempty"`
	Identifier string   `json:"unm,omitempty"`
	Pending    []string `json:"pnd,omitempty"`
	Resolved   []string `json:"rsd,omitempty"`
}

var (
	_ jwt.Claims     = (*claims)(nil)
	_ json.Marshaler = (*claims)(nil)
)

// MarshalJSON writes the claims. An access token always carries rls and det (wire-core §5.4, as
// the original, which sets both on every access token): rls is [] for a principal without roles
// and det is null without details. Other token types omit them when empty.
func (c *claims) MarshalJSON() ([]byte, error) {
	type plain claims // the same fields without this method
	if c.Type != typAccess {
		return json.Marshal((*plain)(c))
	}
	roles, det := c.Roles, c.Details
	if roles == nil {
		roles = []string{}
	}
	if len(det) == 0 {
		det = json.RawMessage("null")
	}
	// the outer fields shadow the embedded rls and det (shallower fields win in encoding/json)
	return json.Marshal(struct {
		*plain
		Roles   []string        `json:"rls"`
		Details json.RawMessage `json:"det"`
	}{(*plain)(c), roles, det})
}

// loginTime is the instant the token state compares with ValidAfter: LoginAt, else iat.
func (c *claims) loginTime() time.Time {
	if c.LoginAt > 0 {
		return time.UnixMicro(c.LoginAt).UTC()
	}
	if c.IssuedAt == nil {
		return time.Time{}
	}
	return c.IssuedAt.Time
}

func (c *claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.Expires, nil }
func (c *claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *claims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore, nil }
func (c *claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *claims) GetAudience() (jwt.ClaimStrings, error)       { return jwt.ClaimStrings{c.Audience}, nil }

// principal rebuilds the caller from the claims (no database, wire-core §3.1).
func (c *claims) principal() (*rpc.Principal, error) {
	id, name := c.UserID, c.Name
	if id == "" { // a token without uid: sub is "<id>@<name>"
		id, name, _ = strings.Cut(c.Subject, "@")
	}
	if id == "" {
		return nil, ErrTokenInvalid
	}
	p := &rpc.Principal{Type: rpc.PrincipalUser, ID: id, Name: name, Roles: c.Roles}
	if c.PType != "" {
		p.Type = rpc.PrincipalType(c.PType)
	}
	if p.Type == rpc.PrincipalSystem { // never issued: a token must not bypass permission checks
		return nil, ErrTokenInvalid
	}
	if p.Roles == nil {
		p.Roles = []string{}
	}
	if len(c.Details) > 0 && string(c.Details) != "null" {
		var d any
		if err := json.Unmarshal(c.Details, &d); err != nil {
			return nil, ErrTokenInvalid.Wrap(err)
		}
		p.Details = d
	}
	return p, nil
}

// setPrincipal writes p into the claims.
func (c *claims) setPrincipal(p *rpc.Principal) error {
	if p.Type == rpc.PrincipalSystem {
		return errors.New("security: no token is issued to the system principal")
	}
	c.Subject = p.ID + "@" + p.Name
	c.UserID, c.Name = p.ID, p.Name
	if p.Type != "" && p.Type != rpc.PrincipalUser {
		c.PType = string(p.Type)
	}
	c.Roles = p.Roles
	if p.Details != nil {
		b, err := json.Marshal(p.Details)
		if err != nil {
			return fmt.Errorf("security: principal details: %w", err)
		}
		c.Details = b
	}
	return nil
}

// signer signs and verifies HS256 JWTs with one key and audience.
type signer struct {
	keys     *Keys
	purpose  string // the key of keys to use: typChallenge, or "" for access and refresh tokens
	audience string
	now      func() time.Time
	// lifetimes bounds exp − iat per token type: a token whose lifetime exceeds its type's
	// (plus jwtLeeway) was not issued by svc and is refused like any other invalid token, even
	// when its signature verifies (a leaked key cannot mint ten-year tokens). A type without an
	// entry is refused.
	lifetimes map[string]time.Duration
}

// sign returns the compact JWT of c.
func (s *signer) sign(c *claims) (string, error) {
	key, err := s.keys.get(s.purpose)
	if err != nil {
		return "", err
	}
	c.Issuer, c.Audience = Issuer, s.audience
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("security: sign token: %w", err)
	}
	return tok, nil
}

// parse verifies the signature (HS256 only: "none", RS*/ES* and other HMAC sizes are refused
// before any key is used), then the typ claim and the lifetime (exp − iat within the type's),
// then iss, aud, exp and nbf. Errors are the 401 templates of wire-core §2.3; a bad signature
// always wins over a bad claim.
func (s *signer) parse(token, typ string) (*claims, error) {
	key, err := s.keys.get(s.purpose)
	if err != nil {
		return nil, ErrTokenInvalid.Wrap(err)
	}
	c := &claims{}
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithoutClaimsValidation())
	if _, err := p.ParseWithClaims(token, c, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		return nil, mapJWTError(err)
	}
	// the type is checked before the times: a refresh token presented as an access token is
	// invalid (1003), not "not valid yet"
	if c.Type != typ || c.ID == "" {
		return nil, ErrTokenInvalid
	}
	if !s.lifetimeOK(c) {
		return nil, ErrTokenInvalid
	}
	v := jwt.NewValidator(jwt.WithTimeFunc(s.now), jwt.WithLeeway(jwtLeeway), jwt.WithIssuer(Issuer),
		jwt.WithAudience(s.audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err := v.Validate(c); err != nil {
		return nil, mapJWTError(err)
	}
	return c, nil
}

// lifetimeOK reports whether the token carries iat and exp and lives no longer than its type's
// lifetime, with jwtLeeway for clock skew between the node that issued it and this one.
func (s *signer) lifetimeOK(c *claims) bool {
	max, ok := s.lifetimes[c.Type]
	if !ok || c.IssuedAt == nil || c.Expires == nil {
		return false
	}
	return c.Expires.Sub(c.IssuedAt.Time) <= max+jwtLeeway
}

// mapJWTError turns a jwt parse error into the wire codes of wire-core §2.3. A signature or
// format error is checked first, so a forged token never reports "expired".
func mapJWTError(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed), errors.Is(err, jwt.ErrTokenSignatureInvalid),
		errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, jwt.ErrSignatureInvalid):
		return ErrTokenInvalid.Wrap(err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrTokenExpired.Wrap(err)
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return ErrTokenNotValidYet.Wrap(err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return ErrTokenInvalidIssuer.Wrap(err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return ErrTokenInvalidAudience.Wrap(err)
	default:
		return ErrTokenInvalid.Wrap(err)
	}
}

// deriveKey returns a purpose-bound subkey of key, so that a token made for one purpose (a
// challenge state) can never verify as another (an access token) even if claims were confused.
func deriveKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("svc.security." + purpose))
	return m.Sum(nil)
}
