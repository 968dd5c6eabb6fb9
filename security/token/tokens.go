package token

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// AuthTokens is the token pair of wire-core §5.2. RefreshToken is omitted by token services
// without refresh (opaque sessions).
type AuthTokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken,omitempty"`
}

// TokenService is the token layer behind security/auth and the bearer strategy. The JWT service
// of this package is the default; opaque sessions (issue #5) implement the same interface.
type TokenService interface {
	// Issue returns a fresh token pair for p after a completed login.
	Issue(ctx context.Context, p *rpc.Principal) (AuthTokens, error)
	// Verify checks an access token and returns its principal, or a 401 *rpc.Error.
	Verify(ctx context.Context, accessToken string) (*rpc.Principal, error)
	// Refresh exchanges a refresh token for a new pair. Services without refresh return
	// ErrTokenInvalid.
	Refresh(ctx context.Context, refreshToken string) (AuthTokens, *rpc.Principal, error)
	// Revoke ends what the access token belongs to (logout). It never fails for a token that
	// is already revoked.
	Revoke(ctx context.Context, accessToken string) error
	// SupportsRefresh reports whether the refresh action is mounted.
	SupportsRefresh() bool
}

// TokenState is what a principal's store says about the tokens issued to it.
type TokenState struct {
	// ValidAfter: tokens and sessions whose login was at or before this instant (password
	// change, disable) are refused. It is compared to the microsecond, so a host loader must
	// keep the change's time at least that exactly: one rounded down to the second would let a
	// login from earlier in that second pass.
	ValidAfter time.Time
	// Disabled: every token of the principal is refused.
	Disabled bool
	// Roles, when not nil, are the principal's current roles: they replace the roles its tokens
	// carry on every request, so a role removed from a user stops working on tokens already
	// issued (issue #11). The built-in store sets them; nil keeps the tokens' roles.
	Roles []string
}

// TokenStateLoader returns the TokenState of a principal id, or an error wrapping
// ErrUserNotFound when the store does not know it (its tokens are then not restricted). The
// built-in user store implements it.
type TokenStateLoader interface {
	TokenState(ctx context.Context, principalID string) (TokenState, error)
}

// PrincipalLoader reloads a principal by id at refresh time, so role changes and disabling take
// effect on the next refresh. It returns an error wrapping ErrUserNotFound for an unknown or
// disabled principal. The built-in user store implements it.
type PrincipalLoader interface {
	LoadPrincipal(ctx context.Context, id string) (*rpc.Principal, error)
}

// JWTTokens is the jwt_token TokenService (wire-core §5.4) with refresh-token rotation: each
// login starts a token family recorded in the database; a refresh exchanges the family's
// current refresh token for a new pair, and presenting any older refresh token of the family
// revokes the whole family (reuse detection).
type JWTTokens struct {
	signer           signer
	refreshTTL       time.Duration
	refreshNotBefore time.Duration
	families         *familyStore
	state            *State
	reload           PrincipalLoader
	audit            Auditor
	signals          *Signals
	logger           *slog.Logger
	verified         *verifiedCache
	revoked          *revokedSet // families revoked within one access lifetime, complete once loaded
	revocations      *revoker
	feed             *Feed
	// failClosed and maxFeedAge are svc.security.revocation.fail_mode = closed and max_feed_age:
	// a token is refused (ErrRevocationUnavailable) unless the feed is Current.
	failClosed bool
	maxFeedAge time.Duration
}

var _ TokenService = (*JWTTokens)(nil)

// Issue implements TokenService. The pair shares its jti (wire-core §5.4) and carries the
// family id fid.
func (t *JWTTokens) Issue(ctx context.Context, p *rpc.Principal) (AuthTokens, error) {
	now := t.signer.now()
	fid, jti := newID(), newID()
	pair, err := t.pair(p, fid, jti, now, t.state.LoginTime(ctx, p.ID, now, time.Microsecond))
	if err != nil {
		return AuthTokens{}, err
	}
	if t.families != nil {
		snap, err := json.Marshal(p)
		if err != nil {
			return AuthTokens{}, fmt.Errorf("security: principal snapshot: %w", err)
		}
		if err := t.families.create(ctx, family{ID: fid, PrincipalID: p.ID, CurrentJTI: jti, Principal: string(snap),
			CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(t.refreshTTL), ClientIP: rpc.RequestInfoFrom(ctx).ClientIP}); err != nil {
			return AuthTokens{}, err
		}
	}
	return pair, nil
}

// pair signs an access and a refresh token issued now for the login made at login.
func (t *JWTTokens) pair(p *rpc.Principal, fid, jti string, now, login time.Time) (AuthTokens, error) {
	access, err := mintAccess(&t.signer, p, fid, jti, now, login)
	if err != nil {
		return AuthTokens{}, err
	}
	rc := &claims{ID: jti, Type: typRefresh, Family: fid, IssuedAt: date(now), LoginAt: login.UnixMicro(),
		NotBefore: date(now.Add(t.refreshNotBefore)), Expires: date(now.Add(t.refreshTTL))}
	rc.Subject = p.ID + "@" + p.Name
	rc.UserID, rc.Name = p.ID, p.Name
	if p.Type != "" && p.Type != rpc.PrincipalUser {
		rc.PType = string(p.Type)
	}
	refresh, err := t.signer.sign(rc)
	if err != nil {
		return AuthTokens{}, err
	}
	return AuthTokens{AccessToken: access, RefreshToken: refresh}, nil
}

// mintAccess signs an access token: iat = nbf = now, exp = now + the access lifetime
// (svc.security.access_token_expires), lat = login; rls and det are always present
// (claims.MarshalJSON).
func mintAccess(s *signer, p *rpc.Principal, fid, jti string, now, login time.Time) (string, error) {
	ac := &claims{ID: jti, Type: typAccess, Family: fid, IssuedAt: date(now), NotBefore: date(now), LoginAt: login.UnixMicro(),
		Expires: date(now.Add(s.lifetimes[typAccess]))}
	if err := ac.setPrincipal(p); err != nil {
		return "", err
	}
	return s.sign(ac)
}

// Verify implements TokenService: signature, claims, typ access, then the principal's token
// state (password changed or disabled after issue → 1003) and its family (revoked by logout or
// refresh-token reuse → 1003), both from caches kept current by the change feed. The principal's
// roles are its current roles when the store keeps them.
func (t *JWTTokens) Verify(ctx context.Context, accessToken string) (*rpc.Principal, error) {
	v, ok := t.verified.get(accessToken)
	if ok && t.signer.now().After(v.expires.Add(jwtLeeway)) {
		t.verified.drop(accessToken)
		return nil, ErrTokenExpired
	}
	if !ok {
		c, err := t.signer.parse(accessToken, typAccess)
		if err != nil {
			return nil, err
		}
		p, err := c.principal()
		if err != nil {
			return nil, err
		}
		v = verifiedToken{principal: p, family: c.Family, issuedAt: c.loginTime(), expires: c.Expires.Time}
		t.verified.put(accessToken, v, t.signer.now())
	}
	roles, err := t.Recheck(ctx, v.principal.ID, v.family, v.issuedAt)
	if err != nil {
		return nil, err
	}
	return v.principalWith(roles), nil
}

// Recheck is the part of Verify that a change can revoke after a token was issued: the
// principal's token state (disabled, or the token issued before a password change → 1003) and
// the token's family (revoked → 1003). It returns the principal's current roles (nil: keep the
// token's). Long-lived connections (push) call it again when the principal changes, so they end
// exactly when /api starts refusing the token. Store errors fail open, as in Verify, unless
// svc.security.revocation.fail_mode is closed: then a token is refused with
// ErrRevocationUnavailable (503) while this node's change feed is older than max_feed_age and
// cannot be read, or its token state cannot be read.
func (t *JWTTokens) Recheck(ctx context.Context, principalID, family string, issuedAt time.Time) ([]string, error) {
	if t.failClosed && !t.feed.Current(ctx, t.maxFeedAge) {
		return nil, ErrRevocationUnavailable
	}
	roles, err := t.state.Check(ctx, principalID, issuedAt, false)
	if err != nil {
		return nil, err
	}
	if err := t.familyLive(ctx, family); err != nil {
		return nil, err
	}
	return roles, nil
}

// familyLive refuses the tokens of a revoked family (1003). Tokens without a family (minted by
// tools) have nothing to revoke. Once the revocation set is loaded (the module's start) it is
// complete and nothing is read; before that (a process that never started the module) the
// family row is read, and a store error fails open, like the token state.
func (t *JWTTokens) familyLive(ctx context.Context, fid string) error {
	if fid == "" || t.families == nil {
		return nil
	}
	if t.revoked.isLoaded() {
		if t.revoked.revoked(fid, t.signer.now()) {
			return ErrTokenInvalid
		}
		return nil
	}
	revoked, err := t.families.isRevoked(ctx, fid)
	if err != nil && t.failClosed {
		return ErrRevocationUnavailable.Wrap(err)
	}
	if err != nil {
		t.logger.WarnContext(ctx, "token family state unavailable, accepting the token", slog.Any("error", err))
		return nil
	}
	if revoked {
		return ErrTokenInvalid
	}
	return nil
}

// revokedMargin is added to how long a revoked family is remembered, for the clocks of the
// nodes that issued its tokens.
const revokedMargin = time.Minute

// rememberRevoked is how long after its revocation a family must stay in the revocation set:
// until every access token it could have issued has expired.
func (t *JWTTokens) rememberRevoked() time.Duration {
	return t.signer.lifetimes[typAccess] + jwtLeeway + revokedMargin
}

// familyRevoked applies the revocation of family fid to this node's set (a change of this
// node or from the change feed) and signals it on this node's bus (SignalFamilyRevoked: push
// closes the family's connections on this node; every node signals its own). It may signal one
// family more than once.
func (t *JWTTokens) familyRevoked(fid string) {
	now := t.signer.now()
	t.revoked.add(fid, now.Add(t.rememberRevoked()), now)
	t.signals.Send(context.Background(), SignalFamilyRevoked, fid)
}

// loadRevoked fills the revocation set with the families revoked within one access lifetime
// (from the change log, which keeps an hour, when that covers it) and marks it complete. The module's start calls it after placing the change feed, so a
// revocation committed meanwhile is in the table or in the feed; the feed calls it again after
// a pause longer than the change log keeps rows.
func (t *JWTTokens) loadRevoked(ctx context.Context) error {
	if t.families == nil {
		return nil
	}
	now := t.signer.now()
	keep := t.rememberRevoked()
	err := t.families.revokedSince(ctx, now.Add(-keep), keep < changeRetention, func(id string, at time.Time) {
		t.revoked.add(id, at.Add(keep), now)
	})
	if err != nil {
		return err
	}
	t.revoked.setLoaded()
	return nil
}

// TokenInfo binds a long-lived connection to a JWT: what can end it later.
type TokenInfo struct {
	// Family is the token family ("" for tokens minted without one, such as tools').
	Family string
	// IssuedAt is the instant of the token's login (its lat claim, else its iat): a password
	// change or disable at or after it refuses the token.
	IssuedAt time.Time
	// Expires is the token's exp.
	Expires time.Time
}

// Inspect returns the family, issue time and expiry of an access token with a valid signature
// (for binding long-lived connections to what can end them); ok is false for a token that does
// not verify. It does not check revocation: call Verify or Recheck for that.
func (t *JWTTokens) Inspect(accessToken string) (info TokenInfo, ok bool) {
	if v, hit := t.verified.get(accessToken); hit {
		return TokenInfo{Family: v.family, IssuedAt: v.issuedAt, Expires: v.expires}, true
	}
	c, err := t.signer.parse(accessToken, typAccess)
	if err != nil {
		return TokenInfo{}, false
	}
	return TokenInfo{Family: c.Family, IssuedAt: c.loginTime(), Expires: c.Expires.Time}, true
}

// Refresh implements TokenService with rotation and reuse detection.
func (t *JWTTokens) Refresh(ctx context.Context, refreshToken string) (AuthTokens, *rpc.Principal, error) {
	c, err := t.signer.parse(refreshToken, typRefresh)
	if err != nil {
		return AuthTokens{}, nil, err
	}
	p, err := c.principal()
	if err != nil {
		return AuthTokens{}, nil, err
	}
	if t.families == nil || c.Family == "" {
		return AuthTokens{}, nil, ErrTokenInvalid
	}
	fam, err := t.families.get(ctx, c.Family)
	if err != nil {
		return AuthTokens{}, nil, err
	}
	if fam == nil || fam.RevokedAt != nil {
		return AuthTokens{}, nil, ErrTokenInvalid
	}
	if fam.CurrentJTI != c.ID {
		return AuthTokens{}, nil, t.reused(ctx, fam.ID, p)
	}
	// the new pair keeps the login's instant, so no rotation makes a login look younger than
	// it is (a refresh racing a password change, or on a node the change has not reached yet,
	// mints tokens the change still refuses); a token from before lat had the family's start
	login := c.loginTime()
	if c.LoginAt == 0 && !fam.CreatedAt.IsZero() {
		login = fam.CreatedAt
	}
	if _, err := t.state.Check(ctx, p.ID, login, true); err != nil {
		return AuthTokens{}, nil, err
	}
	if p, err = t.current(ctx, p, fam); err != nil {
		return AuthTokens{}, nil, err
	}
	now := t.signer.now()
	jti := newID()
	ok, err := t.revocations.rotate(ctx, fam.ID, c.ID, jti, now, now.Add(t.refreshTTL))
	if err != nil {
		return AuthTokens{}, nil, err
	}
	if !ok { // another exchange of the same token won the race: that is a reuse too
		return AuthTokens{}, nil, t.reused(ctx, fam.ID, p)
	}
	pair, err := t.pair(p, fam.ID, jti, now, login)
	return pair, p, err
}

// current returns the principal to put in the new pair: reloaded from the store when there is
// a loader, otherwise the snapshot taken at login.
func (t *JWTTokens) current(ctx context.Context, p *rpc.Principal, fam *family) (*rpc.Principal, error) {
	if t.reload != nil {
		q, err := t.reload.LoadPrincipal(ctx, p.ID)
		switch {
		case errors.Is(err, ErrUserNotFound):
			// not a user of this store (a host authenticator's principal): keep the snapshot
		case err != nil:
			return nil, err
		default:
			return q, nil
		}
	}
	var snap rpc.Principal
	if err := json.Unmarshal([]byte(fam.Principal), &snap); err != nil || snap.ID != p.ID {
		return nil, ErrTokenInvalid
	}
	if snap.Roles == nil {
		snap.Roles = []string{}
	}
	return &snap, nil
}

// reused revokes the whole family after a refresh token was presented a second time: its
// refresh and access tokens are refused on every node within the bound of security/doc.go.
func (t *JWTTokens) reused(ctx context.Context, fid string, p *rpc.Principal) error {
	if err := t.revokeFamily(ctx, fid, revokeReuse); err != nil {
		t.logger.ErrorContext(ctx, "revoke token family failed", slog.String("family", fid), slog.Any("error", err))
	}
	if t.audit != nil {
		t.audit.RefreshReused(ctx, p.ID)
	}
	return ErrTokenInvalid
}

// Revoke implements TokenService: the family of the access token is revoked, so its refresh
// token and every access token of the family (this one included) are refused from then on: at
// once on this node, within the bound of security/doc.go on the others. A token this node
// verified is not parsed again.
func (t *JWTTokens) Revoke(ctx context.Context, accessToken string) error {
	if t.families == nil {
		return nil
	}
	v, ok := t.verified.get(accessToken)
	fid := v.family
	if !ok {
		c, err := t.signer.parse(accessToken, typAccess)
		if err != nil {
			return nil
		}
		fid = c.Family
	}
	if fid == "" {
		return nil
	}
	err := t.revokeFamily(ctx, fid, revokeLogout) // applied here even when the write failed
	if ok {
		t.verified.drop(accessToken) // refused from now on: its cached verification is dead weight
	}
	return err
}

// revokeFamily records the revocation (the family row and its change row, in a transaction
// shared with the revocations that arrive meanwhile) and applies it here at once. When the write
// fails it is applied here and published anyway, and the revoker writes it again until the
// database takes it (the other nodes' polls then see it); the error is still returned.
func (t *JWTTokens) revokeFamily(ctx context.Context, fid, reason string) error {
	err := t.revocations.revoke(ctx, fid, reason, t.signer.now())
	t.familyRevoked(fid)
	t.feed.Publish(ctx, ChangeFamily, fid)
	return err
}

// SupportsRefresh implements TokenService.
func (t *JWTTokens) SupportsRefresh() bool { return true }

// newID returns a UUIDv7 (token, family, challenge and row ids): svc's one generator.
var newID = rpc.NewID
