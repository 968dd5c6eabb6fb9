package security

import (
	"context"
	"errors"

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
type builtinUserInfo struct {
	store *Store
	perms *RolePermissions
	menus []config.Menu
}

func (b *builtinUserInfo) LoadUserInfo(ctx context.Context, p *rpc.Principal, _ map[string]any) (*UserInfo, error) {
	info := &UserInfo{ID: p.ID, Name: p.Name, Gender: GenderUnknown, Menus: []UserMenu{}}
	roles := p.Roles
	if b.store != nil {
		u, err := b.store.UserByID(ctx, p.ID)
		switch {
		case err == nil:
			info.Name, roles = u.Principal().Name, u.Roles
		case !errors.Is(err, ErrUserNotFound):
			return nil, err
		}
	}
	info.PermissionTokens = b.perms.Tokens(roles)
	info.Menus = visibleMenus(b.menus, roles, b.perms)
	return info, nil
}
