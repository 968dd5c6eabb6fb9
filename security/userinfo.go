package security

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// Genders of UserInfo (wire-core §5.7).
const (
	GenderMale    = "male"
	GenderFemale  = "female"
	GenderUnknown = "unknown"
)

// UserInfo is the data of get_user_info (wire-core §5.7). Avatar is always present (null when
// unset); PermissionTokens and Menus are never omitted (empty arrays).
type UserInfo struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Gender           string     `json:"gender"`
	Avatar           *string    `json:"avatar"`
	PermissionTokens []string   `json:"permissionTokens"`
	Menus            []UserMenu `json:"menus"`
	Details          any        `json:"details,omitempty"`
}

// Menu types of UserMenu.
const (
	MenuDirectory = "directory"
	MenuMenu      = "menu"
	MenuView      = "view"
	MenuDashboard = "dashboard"
	MenuReport    = "report"
)

// UserMenu is one menu entry. Its extension map is sent as "meta" (the key the client and the
// newest upstream docs use; wire-core §10 #1). Icon is always present (null when unset).
type UserMenu struct {
	Type     string         `json:"type"`
	Path     string         `json:"path"`
	Name     string         `json:"name"`
	Icon     *string        `json:"icon"`
	Meta     map[string]any `json:"meta,omitempty"`
	Children []UserMenu     `json:"children,omitempty"`
}

// UserInfoLoader loads the user info of the calling principal; params is the get_user_info
// params object as sent (application-defined keys, never nil).
type UserInfoLoader interface {
	LoadUserInfo(ctx context.Context, p *rpc.Principal, params map[string]any) (*UserInfo, error)
}

// UserInfoLoaderFunc adapts a function to UserInfoLoader.
type UserInfoLoaderFunc func(ctx context.Context, p *rpc.Principal, params map[string]any) (*UserInfo, error)

// LoadUserInfo implements UserInfoLoader.
func (f UserInfoLoaderFunc) LoadUserInfo(ctx context.Context, p *rpc.Principal, params map[string]any) (*UserInfo, error) {
	return f(ctx, p, params)
}

// builtinUserInfo is the default loader over the built-in store: name from the store (or the
// principal), gender unknown, no avatar, the permission tokens of the roles, and the entries of
// svc.security.menus those roles may see.
//
// Tokens and menus depend only on the role set, and svc.security.roles and menus are fixed for
// the life of the server, so each role set's pair is worked out once and shared by every answer
// (the encoder only reads it): get_user_info is the call a client makes on every page load.
type builtinUserInfo struct {
	store *Store
	perms *RolePermissions
	menus []config.Menu

	views    sync.Map // role-set key → *roleView
	viewsLen atomic.Int32
}

// roleView is what a role set sees: its permission tokens and menus.
type roleView struct {
	tokens []string
	menus  []UserMenu
}

// maxRoleViews bounds the memo; a server with more distinct role sets works the rest out per call.
const maxRoleViews = 4096

func (b *builtinUserInfo) LoadUserInfo(ctx context.Context, p *rpc.Principal, _ map[string]any) (*UserInfo, error) {
	info := &UserInfo{ID: p.ID, Name: p.Name, Gender: GenderUnknown}
	roles := p.Roles
	if b.store != nil {
		u, err := b.store.cached(ctx, p.ID)
		switch {
		case err == nil:
			info.Name, roles = u.displayName(), u.Roles
		case !errors.Is(err, ErrUserNotFound):
			return nil, err
		}
	}
	v := b.view(roles)
	info.PermissionTokens, info.Menus = v.tokens, v.menus
	return info, nil
}

// view returns the memoised roleView of roles.
func (b *builtinUserInfo) view(roles []string) *roleView {
	key := roleKey(roles)
	if v, ok := b.views.Load(key); ok {
		return v.(*roleView)
	}
	v := &roleView{tokens: b.perms.Tokens(roles), menus: visibleMenus(b.menus, roles, b.perms)}
	if b.viewsLen.Load() < maxRoleViews {
		if _, loaded := b.views.LoadOrStore(key, v); !loaded {
			b.viewsLen.Add(1)
		}
	}
	return v
}

// roleKey is the memo key of a role list: the role itself for one role (no allocation), the
// roles joined by a unit separator otherwise.
func roleKey(roles []string) string {
	if len(roles) == 1 {
		return roles[0]
	}
	return strings.Join(roles, "\x1f")
}
