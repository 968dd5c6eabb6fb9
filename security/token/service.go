package token

import (
	"context"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
)

// JWTOptions are what NewJWT builds the jwt_token service from. Keys, Feed and State are shared
// with the rest of the security module (challenge tokens, the user store's caches).
type JWTOptions struct {
	Config *config.Config
	DB     *db.DB
	Keys   *Keys
	Now    func() time.Time
	Logger *slog.Logger
	// State refuses tokens of disabled principals and tokens from before a password change.
	State *State
	// Principals reloads the principal at refresh (nil: the login's snapshot).
	Principals PrincipalLoader
	// Feed carries the family revocations between nodes; NewJWT subscribes to them.
	Feed *Feed
	// Signals publishes SignalFamilyRevoked on this node's bus.
	Signals *Signals
	// Audit receives the refresh-reuse and forced-revocation events (nil: none).
	Audit Auditor
}

// NewJWT returns the jwt_token service with its token families in o.DB (spec §5.2, wire-core
// §5.4, issue #13): signing and verifying, the verified-token cache, the revocation set, the
// group-committing revoker, and the family revocations of the change feed. It does no I/O; Start
// loads the revocation set.
func NewJWT(o JWTOptions) *JWTTokens {
	families := &familyStore{db: o.DB}
	t := &JWTTokens{
		signer: signer{keys: o.Keys, audience: o.Config.App.Name, now: o.Now,
			lifetimes: map[string]time.Duration{typAccess: AccessTTL(o.Config), typRefresh: o.Config.Security.TokenExpires}},
		refreshTTL:       o.Config.Security.TokenExpires,
		refreshNotBefore: o.Config.Security.RefreshNotBefore,
		families:         families,
		state:            o.State,
		reload:           o.Principals,
		audit:            o.Audit,
		signals:          o.Signals,
		logger:           o.Logger,
		verified:         newVerifiedCache(),
		revoked:          &revokedSet{},
		revocations:      &revoker{families: families},
		feed:             o.Feed,
		failClosed:       o.Config.Security.Revocation.FailMode == config.RevocationFailClosed,
		maxFeedAge:       o.Config.Security.Revocation.MaxFeedAge,
	}
	if t.maxFeedAge <= 0 { // a configuration built in code, without config.Load's default
		t.maxFeedAge = 10 * time.Second
	}
	o.Feed.On(ChangeFamily, t.familyRevoked)
	return t
}

// Start loads the revocation set (after the feed's Start placed the cursor, so a revocation
// committed meanwhile is in the table or in the feed) and has the feed reload it after a pause
// longer than the change log keeps rows: the module's start step.
func (t *JWTTokens) Start(ctx context.Context) error {
	if err := t.loadRevoked(ctx); err != nil {
		return err
	}
	t.feed.resync = t.loadRevoked
	return nil
}

// PurgeFamilies deletes token families whose refresh token has expired and drops the expired
// entries of the revocation set (the token_family_purge worker body).
func (t *JWTTokens) PurgeFamilies(ctx context.Context) error {
	now := t.signer.now()
	t.revoked.sweep(now)
	n, err := t.families.purge(ctx, now.Add(-jwtLeeway))
	if err == nil && n > 0 {
		t.logger.Debug("token families purged", slog.Int64("count", n))
	}
	return err
}
