package config

import (
	"fmt"
	"strings"
)

// Menu types of svc.security.menus[].type (wire-core §5.7).
var menuTypes = map[string]bool{"directory": true, "menu": true, "view": true, "dashboard": true, "report": true}

// Menu is one svc.security.menus[] entry (ours): a node of the menu tree that get_user_info
// answers for users of the built-in user store, in the shape of wire-core §5.7. The original's
// starter app builds its routes and its access check from this tree, so a page is reachable only
// when some visible entry carries its route path.
//
// An entry is visible to a user when it lists neither roles nor permissions, when the user has
// one of its roles, or when the user's roles grant one of its permission tokens (svc.security.
// roles, wildcards included). A directory is shown only while at least one of its children is.
type Menu struct {
	// Type is svc.security.menus[].type: directory, menu (default), view, dashboard or report.
	Type string `toml:"type"`
	// Path is svc.security.menus[].path: the client route path, starting with "/" (may hold
	// route parameters such as "/report/$key").
	Path string `toml:"path"`
	// Name is svc.security.menus[].name (required): the label.
	Name string `toml:"name"`
	// Icon is svc.security.menus[].icon: the client's icon name; empty sends null.
	Icon string `toml:"icon"`
	// Meta is svc.security.menus[].meta: the extension map sent as "meta"; the starter app reads
	// meta.params and meta.search (tables of strings) and passes the rest through.
	Meta map[string]any `toml:"meta"`
	// Roles is svc.security.menus[].roles: role names that see the entry.
	Roles []string `toml:"roles"`
	// Permissions is svc.security.menus[].permissions: permission tokens that see the entry.
	Permissions []string `toml:"permissions"`
	// Children is svc.security.menus[].children: nested entries.
	Children []Menu `toml:"children"`
}

// applyMenuDefaults fills the default type of every entry: "directory" for an entry with
// children, else "menu".
func applyMenuDefaults(menus []Menu) {
	for i := range menus {
		m := &menus[i]
		if m.Type == "" {
			m.Type = "menu"
			if len(m.Children) > 0 {
				m.Type = "directory"
			}
		}
		applyMenuDefaults(m.Children)
	}
}

// validateMenus checks every entry of a menu tree.
func validateMenus(key string, menus []Menu) []error {
	var errs []error
	for i, m := range menus {
		at := fmt.Sprintf("%s[%d]", key, i)
		if !menuTypes[m.Type] {
			errs = append(errs, fmt.Errorf("%s.type %q: want directory, menu, view, dashboard or report: %w", at, m.Type, ErrInvalidMenu))
		}
		if strings.TrimSpace(m.Name) == "" {
			errs = append(errs, fmt.Errorf("%s.name: required: %w", at, ErrInvalidMenu))
		}
		if !strings.HasPrefix(m.Path, "/") {
			errs = append(errs, fmt.Errorf("%s.path %q: must start with \"/\": %w", at, m.Path, ErrInvalidMenu))
		}
		for _, k := range []string{"params", "search"} {
			if v, ok := m.Meta[k]; ok && !stringTable(v) {
				errs = append(errs, fmt.Errorf("%s.meta.%s: want a table of strings: %w", at, k, ErrInvalidMenu))
			}
		}
		errs = append(errs, validateMenus(at+".children", m.Children)...)
	}
	return errs
}

// stringTable reports whether v is a table whose values are all strings.
func stringTable(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, e := range m {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}
