package security

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/svc-framework/svc/rpc"
)

// The grant rule (issue #42): one function, CheckGrant, that every path changing an account
// over /api calls — the security/user and security/session operations, which the MCP tools of
// those operations and the console run too (mcp calls the same handlers through
// rpc.Engine.CallAs; the console calls /api). The CLI (`svc user`, `svc session`) runs as the
// machine's operator and is not subject to it.
//
// A role is grantable by a caller when the caller holds every permission token the role
// grants (svc.security.roles), "holds" meaning the permission checker the /api engine uses
// answers yes for the token itself: for the built-in checker a pattern of the caller's covers
// it (MatchPermission), so "security.user.*" is held through "security.*" or "*" but not
// through "security.user.query", and "*" only through "*". A role name that svc.security.roles
// does not define has no tokens the rule could compare, yet it may mean something by its name
// (approval's approval:super_admin, approval initiators, push targets, menus), so it is
// grantable only by a caller who holds "*". CheckGrant lets a change pass when every role the
// account has before the change and every role it has after are grantable: the account's
// permissions stay within the caller's (they are covered before — the caller may act on it at
// all — and after, so every role added or removed is one the caller could grant).

// RoleGrantable reports whether caller may grant (or remove) role: it holds every permission
// token of the role (the engine's permission checker decides), "*" when svc.security.roles does
// not define the role. The system principal may grant every role.
func (s *Service) RoleGrantable(ctx context.Context, caller *rpc.Principal, role string) (bool, error) {
	if caller == nil {
		return false, nil
	}
	if caller.IsSystem() {
		return true, nil
	}
	tokens, known := s.cfg.Security.Roles[role]
	if !known {
		tokens = []string{"*"}
	}
	for _, t := range tokens {
		ok, err := s.permissions.HasPermission(ctx, caller, t)
		if err != nil {
			return false, fmt.Errorf("security: grant rule: %w", err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// CheckGrant is the grant rule: caller may change an account whose roles are before (nil for
// an account being created) so that it has the roles after (nil when the change leaves the
// roles alone) only when every one of those roles is RoleGrantable by caller. It returns nil,
// or ErrUserGrantDenied (403/1074). Every account-changing operation calls it before changing
// anything: create (after = the new roles), set_roles (before and after), update, disable,
// enable, reset_password, begin_totp, confirm_totp, remove_totp (before), and security/session's
// revoke and revoke_user (before = the roles of the logins' account). A change of one's own
// account passes as long as the caller's roles are grantable by itself, which a role defined in
// svc.security.roles always is.
func (s *Service) CheckGrant(ctx context.Context, caller *rpc.Principal, before, after []string) error {
	for _, roles := range [][]string{before, after} {
		for _, r := range roles {
			ok, err := s.RoleGrantable(ctx, caller, r)
			if err != nil {
				return err
			}
			if !ok {
				return ErrUserGrantDenied
			}
		}
	}
	return nil
}

// checkLoginsGrant applies the grant rule to ending the logins of the principal id userID.
func (s *Service) checkLoginsGrant(ctx context.Context, caller *rpc.Principal, l logins, userID string) error {
	roles, err := s.accountRoles(ctx, l, userID)
	if err != nil {
		return err
	}
	return s.CheckGrant(ctx, caller, roles, nil)
}

// accountRoles are the roles the grant rule compares for the account behind a principal id
// that security/session acts on: the built-in user's current roles, or else (a principal of a
// host authenticator or user store) the roles of the snapshots its live logins carry, every
// one of them, since each login acts with its own.
func (s *Service) accountRoles(ctx context.Context, l logins, userID string) ([]string, error) {
	if s.store != nil {
		u, err := s.store.UserByID(ctx, userID)
		if err == nil {
			return u.Roles, nil
		}
		if !errors.Is(err, ErrUserNotFound) {
			return nil, err
		}
	}
	roles, err := l.roles(ctx, userID)
	if err != nil {
		return nil, err
	}
	slices.Sort(roles)
	return slices.Compact(roles), nil
}
