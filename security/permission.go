package security

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// RolePermissions is the built-in rpc.PermissionChecker: svc.security.roles maps role names to
// permission tokens, and a principal holds a token when one of its roles grants it. "*" grants
// every token; "cron.*" grants every token that starts with "cron.".
type RolePermissions struct {
	roles map[string][]string
}

var _ rpc.PermissionChecker = (*RolePermissions)(nil)

// NewRolePermissions returns the checker of a role → tokens map (svc.security.roles).
func NewRolePermissions(roles map[string][]string) *RolePermissions {
	m := make(map[string][]string, len(roles))
	for role, tokens := range roles {
		m[role] = slices.Clone(tokens)
	}
	return &RolePermissions{roles: m}
}

// HasPermission implements rpc.PermissionChecker.
func (r *RolePermissions) HasPermission(_ context.Context, p *rpc.Principal, token string) (bool, error) {
	if p == nil {
		return false, nil
	}
	return r.Grants(p.Roles, token), nil
}

// Grants reports whether any of roles grants token.
func (r *RolePermissions) Grants(roles []string, token string) bool {
	if token == "" {
		return false
	}
	for _, role := range roles {
		for _, pattern := range r.roles[role] {
			if MatchPermission(pattern, token) {
				return true
			}
		}
	}
	return false
}

// Tokens lists the permission tokens (patterns included) granted by roles, sorted and without
// duplicates; never nil. It is the permissionTokens of the built-in user info.
func (r *RolePermissions) Tokens(roles []string) []string {
	set := map[string]bool{}
	for _, role := range roles {
		for _, t := range r.roles[role] {
			set[t] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// MatchPermission reports whether a granted pattern covers a required token: equal, "*", or a
// "prefix.*" pattern and a token under prefix.
func MatchPermission(pattern, token string) bool {
	switch {
	case pattern == "*" || pattern == token:
		return true
	case strings.HasSuffix(pattern, ".*"):
		return strings.HasPrefix(token, pattern[:len(pattern)-1]) && len(token) > len(pattern)-1
	}
	return false
}
