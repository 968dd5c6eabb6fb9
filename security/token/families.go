package token

import (
	"context"
	"encoding/json"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// TokenFamily is one live login under jwt_token: the refresh-token family it started, which its
// access and refresh tokens carry.
type TokenFamily struct {
	ID       string
	UserID   string
	ClientIP string // "" for families created before migration 006
	// CreatedAt is the login time, RefreshedAt the last refresh (the login time before one).
	CreatedAt   time.Time
	RefreshedAt time.Time
	// ExpiresAt is when the family's current refresh token expires.
	ExpiresAt time.Time
}

// Families returns the live (neither revoked nor expired) token families of a principal id,
// oldest first.
func (t *JWTTokens) Families(ctx context.Context, userID string) ([]TokenFamily, error) {
	rows, err := t.families.live(ctx, userID, t.signer.now())
	if err != nil {
		return nil, err
	}
	out := make([]TokenFamily, len(rows))
	for i, f := range rows {
		out[i] = TokenFamily{ID: f.ID, UserID: f.PrincipalID, ClientIP: f.ClientIP, CreatedAt: f.CreatedAt.UTC(),
			RefreshedAt: f.RefreshedAt.UTC(), ExpiresAt: f.ExpiresAt.UTC()}
	}
	return out, nil
}

// RevokeFamily ends the token family id (forced logout): its refresh token and every access
// token carrying it are refused from then on, at once on this node and within the bound of
// security/doc.go on the others. It reports whether the family was live.
func (t *JWTTokens) RevokeFamily(ctx context.Context, id string) (bool, error) {
	f, err := t.families.get(ctx, id)
	if err != nil || f == nil || f.RevokedAt != nil || !t.signer.now().Before(f.ExpiresAt) {
		return false, err
	}
	if err := t.revokeFamily(ctx, id, revokeForced); err != nil {
		return false, err
	}
	if t.audit != nil {
		t.audit.FamilyForced(ctx, f.PrincipalID, id)
	}
	return true, nil
}

// RevokeUserFamilies ends every live token family of a principal id ("sign out everywhere") and
// returns how many it ended.
func (t *JWTTokens) RevokeUserFamilies(ctx context.Context, userID string) (int, error) {
	live, err := t.Families(ctx, userID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range live {
		ok, err := t.RevokeFamily(ctx, f.ID)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Owner returns the principal id of token family id, "" when there is no such family.
func (t *JWTTokens) Owner(ctx context.Context, id string) (string, error) {
	f, err := t.families.get(ctx, id)
	if err != nil || f == nil {
		return "", err
	}
	return f.PrincipalID, nil
}

// LoginPrincipals returns the principal snapshot taken at login (and kept by every refresh) of
// each live token family of userID, oldest first: the roles each login holds.
func (t *JWTTokens) LoginPrincipals(ctx context.Context, userID string) ([]*rpc.Principal, error) {
	fs, err := t.families.live(ctx, userID, t.signer.now())
	if err != nil {
		return nil, err
	}
	out := make([]*rpc.Principal, 0, len(fs))
	for _, f := range fs {
		var p rpc.Principal
		if err := json.Unmarshal([]byte(f.Principal), &p); err != nil || p.ID != f.PrincipalID {
			return nil, ErrTokenInvalid
		}
		out = append(out, &p)
	}
	return out, nil
}
