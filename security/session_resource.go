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
// doc.go on the others. It reports whether the family was live.
func (t *JWTTokens) RevokeFamily(ctx context.Context, id string) (bool, error) {
	f, err := t.families.get(ctx, id)
	if err != nil || f == nil || f.RevokedAt != nil || !t.signer.now().Before(f.ExpiresAt) {
		return false, err
	}
	if err := t.revokeFamily(ctx, id, RevokeReasonForced); err != nil {
		return false, err
	}
	t.events.emit(ctx, Event{Type: EventSessionRevoked, PrincipalID: f.PrincipalID, SessionID: id, Reason: RevokeReasonForced})
	return true, nil
}

// RevokeUserFamilies ends every live token family of a principal id ("sign out everywhere") and
// returns how many it ended.
func (t *JWTTokens) RevokeUserFamilies(ctx context.Context, userID string) (int, error) {
	live, err := t.Families(ctx, userID)
	if err != nil {
		return 0, err
	}
	return revokeEach(ctx, live, func(f TokenFamily) string { return f.ID }, t.RevokeFamily)
}

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
	f, err := l.t.families.get(ctx, id)
	if err != nil || f == nil {
		return "", err
	}
	return f.PrincipalID, nil
}

func (l familyLogins) roles(ctx context.Context, userID string) ([]string, error) {
	fs, err := l.t.families.live(ctx, userID, l.t.signer.now())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		p, err := decodePrincipal(f.Principal, f.PrincipalID)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Roles...)
	}
	return out, nil
}

// logins returns the built-in token service's logins, or nil with a host token service.
func (s *Service) logins() logins {
	switch t := s.tokens.(type) {
	case *JWTTokens:
		if t.families != nil {
			return familyLogins{t}
		}
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
