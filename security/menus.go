package security

import "github.com/svc-framework/svc/config"

// visibleMenus projects the configured menu tree (svc.security.menus) onto the user-info shape
// of wire-core §5.7, keeping the entries the user's roles may see (config.Menu states the rule).
// A directory whose configured children are all hidden is dropped with them, so the client never
// renders an empty group. The result is never nil; meta maps are shared read-only with the
// configuration.
func visibleMenus(menus []config.Menu, roles []string, perms *RolePermissions) []UserMenu {
	out := make([]UserMenu, 0, len(menus))
	for _, m := range menus {
		if !menuVisible(m, roles, perms) {
			continue
		}
		um := UserMenu{Type: m.Type, Path: m.Path, Name: m.Name, Meta: m.Meta}
		if m.Icon != "" {
			icon := m.Icon
			um.Icon = &icon
		}
		if len(m.Children) > 0 {
			um.Children = visibleMenus(m.Children, roles, perms)
			if len(um.Children) == 0 {
				continue
			}
		}
		out = append(out, um)
	}
	return out
}

// menuVisible: no roles and no permissions listed means every authenticated user; otherwise one
// matching role or one granted permission token suffices.
func menuVisible(m config.Menu, roles []string, perms *RolePermissions) bool {
	if len(m.Roles) == 0 && len(m.Permissions) == 0 {
		return true
	}
	for _, want := range m.Roles {
		for _, r := range roles {
			if r == want {
				return true
			}
		}
	}
	for _, token := range m.Permissions {
		if perms.Grants(roles, token) {
			return true
		}
	}
	return false
}
