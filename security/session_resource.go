package security

import (
	"context"
	"net/http"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// ResourceSession lists and revokes the logins of a user over /api (svc addition, issue #35):
// token families with jwt_token, opaque sessions with opaque_token.
const ResourceSession = "security/session"

// Permission tokens of security/session.
const (
	PermSessionQuery  = "security.session.query"  // list
	PermSessionRevoke = "security.session.revoke" // revoke, revoke_user
)

// Kinds of SessionView.
const (
	SessionKindFamily  = "token_family" // jwt_token: one login's refresh-token family
	SessionKindSession = "session"      // opaque_token: one opaque session
)

// SessionView is one login as security/session lists it.
type SessionView struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"`
	UserID       string     `json:"userId"`
	ClientIP     string     `json:"clientIp"`
	CreatedAt    time.Time  `json:"createdAt"`
	LastSeenAt   time.Time  `json:"lastSeenAt"`
	ExpiresAt    time.Time  `json:"expiresAt"`
	MaxExpiresAt *time.Time `json:"maxExpiresAt,omitempty"`
	Current      bool       `json:"current"`
}

// SessionList is the data of list.
type SessionList struct {
	TokenType string        `json:"tokenType"`
	Items     []SessionView `json:"items"`
}

// SessionUserParams address the logins of one principal id.
type SessionUserParams struct {
	UserID string `json:"userId"`
}

// Validate implements rpc.Validator.
func (p *SessionUserParams) Validate() error {
	var c rpc.Check
	c.Required("userId", p.UserID != "")
	c.Identifier("userId", p.UserID, maxPrincipalLength)
	return c.Err()
}

// SessionIDParams address one session or token family.
type SessionIDParams struct {
	ID string `json:"id"`
}

// Validate implements rpc.Validator.
func (p *SessionIDParams) Validate() error {
	var c rpc.Check
	c.Required("id", p.ID != "")
	c.Identifier("id", p.ID, 128)
	return c.Err()
}

// RevokedCount is the data of revoke_user.
type RevokedCount struct {
	Revoked int `json:"revoked"`
}

// logins is what security/session needs of the token service: the built-in sessions or token
// families behind one shape.
type logins interface {
	tokenType() string
	list(ctx context.Context, userID string) ([]SessionView, error)
	// current is the id of the login the request's bearer token belongs to ("" when none).
	current(r *http.Request) string
	revoke(ctx context.Context, id string) (bool, error)
	revokeUser(ctx context.Context, userID string) (int, error)
	// owner is the principal id of the login id ("" when there is no such login).
	owner(ctx context.Context, id string) (string, error)
	// roles are the roles of the principal snapshots of a principal id's live logins.
	roles(ctx context.Context, userID string) ([]string, error)
}

// sessionLogins are opaque sessions.
type sessionLogins struct{ s *Sessions }

func (l sessionLogins) tokenType() string { return string(config.TokenTypeOpaque) }

func (l sessionLogins) list(ctx context.Context, userID string) ([]SessionView, error) {
	ss, err := l.s.List(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]SessionView, len(ss))
	for i, s := range ss {
		maxAt := s.MaxExpiresAt.UTC()
		out[i] = SessionView{ID: s.ID, Kind: SessionKindSession, UserID: s.UserID, ClientIP: s.ClientIP, CreatedAt: s.CreatedAt.UTC(),
			LastSeenAt: s.LastSeenAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), MaxExpiresAt: &maxAt}
	}
	return out, nil
}

func (l sessionLogins) current(r *http.Request) string {
	if tok := BearerToken(r); tok != "" {
		return SessionID(tok)
	}
	return ""
}

func (l sessionLogins) revoke(ctx context.Context, id string) (bool, error) {
	return l.s.Revoke(ctx, id)
}
func (l sessionLogins) revokeUser(ctx context.Context, userID string) (int, error) {
	return l.s.RevokeUser(ctx, userID)
}

func (l sessionLogins) owner(ctx context.Context, id string) (string, error) {
	sess, err := l.s.load(ctx, id, l.s.now())
	if err != nil || sess == nil {
		return "", err
	}
	return sess.UserID, nil
}

func (l sessionLogins) roles(ctx context.Context, userID string) ([]string, error) {
	ss, err := l.s.List(ctx, userID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sess := range ss {
		if sess.Principal != nil {
			out = append(out, sess.Principal.Roles...)
		}
	}
	return out, nil
}

// familyLogins are jwt_token families.
type familyLogins struct{ t *JWTTokens }

func (l familyLogins) tokenType() string { return string(config.TokenTypeJWT) }

func (l familyLogins) list(ctx context.Context, userID string) ([]SessionView, error) {
	fs, err := l.t.Families(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]SessionView, len(fs))
	for i, f := range fs {
		out[i] = SessionView{ID: f.ID, Kind: SessionKindFamily, UserID: f.UserID, ClientIP: f.ClientIP, CreatedAt: f.CreatedAt,
			LastSeenAt: f.RefreshedAt, ExpiresAt: f.ExpiresAt}
	}
	return out, nil
}

func (l familyLogins) current(r *http.Request) string {
	if info, ok := l.t.Inspect(BearerToken(r)); ok {
		return info.Family
	}
	return ""
}

func (l familyLogins) revoke(ctx context.Context, id string) (bool, error) {
	return l.t.RevokeFamily(ctx, id)
}
func (l familyLogins) revokeUser(ctx context.Context, userID string) (int, error) {
	return l.t.RevokeUserFamilies(ctx, userID)
}

func (l familyLogins) owner(ctx context.Context, id string) (string, error) {
	return l.t.Owner(ctx, id)
}

func (l familyLogins) roles(ctx context.Context, userID string) ([]string, error) {
	ps, err := l.t.LoginPrincipals(ctx, userID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Roles...)
	}
	return out, nil
}

// logins returns the built-in token service's logins, or nil with a host token service.
func (s *Service) logins() logins {
	switch t := s.tokens.(type) {
	case *JWTTokens:
		return familyLogins{t}
	case *OpaqueTokens:
		if s.sessions != nil {
			return sessionLogins{s.sessions}
		}
	}
	return nil
}

// sessionResource is security/session; with a host token service it has no operations.
// Revocations are audited and pass the grant rule (CheckGrant) on the roles of the account
// whose logins they end.
func (s *Service) sessionResource() rpc.Resource {
	l := s.logins()
	if l == nil {
		return rpc.Resource{Name: ResourceSession}
	}
	return rpc.Resource{Name: ResourceSession, Ops: []rpc.Op{
		rpc.Handle("list", func(ctx context.Context, c rpc.Call, p SessionUserParams) (*SessionList, error) {
			items, err := l.list(ctx, p.UserID)
			if err != nil {
				return nil, err
			}
			if cur := l.current(c.Request); cur != "" {
				for i := range items {
					items[i].Current = items[i].ID == cur
				}
			}
			return &SessionList{TokenType: l.tokenType(), Items: items}, nil
		}, rpc.RequiredPermission(PermSessionQuery)),
		rpc.Handle("revoke", func(ctx context.Context, c rpc.Call, p SessionIDParams) (any, error) {
			owner, err := l.owner(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			if owner != "" {
				if err := s.checkLoginsGrant(ctx, c.Principal, l, owner); err != nil {
					return nil, err
				}
			}
			ok, err := l.revoke(ctx, p.ID)
			if err == nil && !ok {
				err = rpc.ErrRecordNotFound
			}
			return nil, err
		}, rpc.RequiredPermission(PermSessionRevoke), rpc.Audit()),
		rpc.Handle("revoke_user", func(ctx context.Context, c rpc.Call, p SessionUserParams) (*RevokedCount, error) {
			if err := s.checkLoginsGrant(ctx, c.Principal, l, p.UserID); err != nil {
				return nil, err
			}
			n, err := l.revokeUser(ctx, p.UserID)
			if err != nil {
				return nil, err
			}
			return &RevokedCount{Revoked: n}, nil
		}, rpc.RequiredPermission(PermSessionRevoke), rpc.Audit()),
	}}
}
