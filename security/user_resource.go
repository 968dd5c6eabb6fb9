package security

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
)

// ResourceUser is the resource that manages the built-in user store over /api (svc addition,
// issue #35): what `svc user` does on the command line, for the console and any other client.
const ResourceUser = "security/user"

// Permission tokens of security/user, one per kind of change.
const (
	PermUserQuery    = "security.user.query"    // find_page, get, list_roles
	PermUserCreate   = "security.user.create"   // create
	PermUserUpdate   = "security.user.update"   // update (display name)
	PermUserDisable  = "security.user.disable"  // disable, enable
	PermUserRoles    = "security.user.roles"    // set_roles
	PermUserPassword = "security.user.password" // reset_password
	PermUserTOTP     = "security.user.totp"     // begin_totp, confirm_totp, remove_totp
)

// Bounds of security/user params.
const (
	maxRoleLength     = 64
	maxRoles          = 64
	maxDisplayNameLen = 128
	maxPasswordLength = 1024 // the policy's max_length applies below it
)

// UserView is a user as security/user answers it: never a hash or a TOTP secret.
type UserView struct {
	ID                string    `json:"id"`
	Username          string    `json:"username"`
	DisplayName       string    `json:"displayName"`
	Roles             []string  `json:"roles"`
	Disabled          bool      `json:"disabled"`
	TOTPEnabled       bool      `json:"totpEnabled"`
	TOTPPending       bool      `json:"totpPending"`
	TOTPEnroll        bool      `json:"totpEnrollAtSignIn"` // begin_totp by someone else: enrolls at next sign-in
	PasswordChangedAt time.Time `json:"passwordChangedAt"`
	CreatedAt         time.Time `json:"createdAt"`
}

func viewOf(u *User) UserView {
	roles := slices.Clone(u.Roles)
	if roles == nil {
		roles = []string{}
	}
	return UserView{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Roles: roles, Disabled: u.Disabled,
		TOTPEnabled: u.HasTOTP(), TOTPPending: u.TOTPPending, TOTPEnroll: u.TOTPEnroll, PasswordChangedAt: u.PasswordChangedAt, CreatedAt: u.CreatedAt}
}

// RoleView is one role of svc.security.roles with the permission tokens it grants and whether
// the caller may grant it (the grant rule, Service.RoleGrantable).
type RoleView struct {
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
	Grantable   bool     `json:"grantable"`
}

// UserIDParams address one user by id.
type UserIDParams struct {
	ID string `json:"id"`
}

func (p UserIDParams) userID() string { return p.ID }

// Validate implements rpc.Validator.
func (p *UserIDParams) Validate() error {
	var c rpc.Check
	p.check(&c)
	return c.Err()
}

func (p *UserIDParams) check(c *rpc.Check) {
	c.Required("id", p.ID != "")
	c.Identifier("id", p.ID, maxUsernameLen)
}

// CreateUserParams are the params of create.
type CreateUserParams struct {
	Username    string   `json:"username"`
	DisplayName string   `json:"displayName"`
	Password    string   `json:"password"`
	Roles       []string `json:"roles"`
}

// Validate implements rpc.Validator (the user name's own rule answers 1072, the password's the
// policy's 1050).
func (p *CreateUserParams) Validate() error {
	var c rpc.Check
	c.Required("username", p.Username != "")
	c.Required("password", p.Password != "")
	c.MaxLen("password", p.Password, maxPasswordLength)
	c.MaxLen("displayName", p.DisplayName, maxDisplayNameLen)
	checkRoles(&c, p.Roles)
	return c.Err()
}

// UpdateUserParams are the params of update.
type UpdateUserParams struct {
	UserIDParams
	DisplayName string `json:"displayName"`
}

// Validate implements rpc.Validator.
func (p *UpdateUserParams) Validate() error {
	var c rpc.Check
	p.check(&c)
	c.MaxLen("displayName", p.DisplayName, maxDisplayNameLen)
	return c.Err()
}

// SetRolesParams are the params of set_roles: the complete new list (empty clears).
type SetRolesParams struct {
	UserIDParams
	Roles []string `json:"roles"`
}

// Validate implements rpc.Validator.
func (p *SetRolesParams) Validate() error {
	var c rpc.Check
	p.check(&c)
	c.Required("roles", p.Roles != nil)
	checkRoles(&c, p.Roles)
	return c.Err()
}

// ResetPasswordParams are the params of reset_password.
type ResetPasswordParams struct {
	UserIDParams
	Password string `json:"password"`
}

// Validate implements rpc.Validator.
func (p *ResetPasswordParams) Validate() error {
	var c rpc.Check
	p.check(&c)
	c.Required("password", p.Password != "")
	c.MaxLen("password", p.Password, maxPasswordLength)
	return c.Err()
}

// ConfirmTOTPParams are the params of confirm_totp.
type ConfirmTOTPParams struct {
	UserIDParams
	Code string `json:"code"`
}

// Validate implements rpc.Validator.
func (p *ConfirmTOTPParams) Validate() error {
	var c rpc.Check
	p.check(&c)
	c.Required("code", p.Code != "")
	c.Identifier("code", p.Code, 16)
	return c.Err()
}

func checkRoles(c *rpc.Check, roles []string) {
	c.Max("roles", int64(len(roles)), maxRoles)
	for _, r := range roles {
		c.Valid("roles", r != "")
		c.Identifier("roles", r, maxRoleLength)
	}
}

// TOTPEnrollmentView is the data of begin_totp: for one's own account the secret and the
// otpauth URL to show as a QR code; for another account both are empty and AtNextSignIn is
// true (the account enrolls at its next sign-in, issue #42). Audit records carry neither
// secret nor URL (their keys are credential words).
type TOTPEnrollmentView struct {
	Secret       string `json:"secret"`
	OTPAuthURL   string `json:"otpauthUrl"`
	AtNextSignIn bool   `json:"atNextSignIn"`
}

// userResource is security/user: without the built-in store (a host user store or password
// login) it has no operations. Every change is audited, passes the grant rule (CheckGrant)
// first, and goes through the Store methods the CLI uses.
func (s *Service) userResource() rpc.Resource {
	if s.store == nil {
		return rpc.Resource{Name: ResourceUser}
	}
	perm := rpc.RequiredPermission
	return rpc.Resource{Name: ResourceUser, Ops: []rpc.Op{
		rpc.Handle("find_page", s.findUsers, perm(PermUserQuery)),
		rpc.Handle("get", userOp[UserIDParams](s, nil), perm(PermUserQuery)),
		rpc.Handle("list_roles", s.listRoles, perm(PermUserQuery)),
		rpc.Handle("create", s.createUser, perm(PermUserCreate), rpc.Audit()),
		rpc.Handle("update", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, p UpdateUserParams) error {
			return s.store.SetDisplayName(ctx, u.Username, p.DisplayName)
		}), perm(PermUserUpdate), rpc.Audit()),
		rpc.Handle("disable", userOp(s, func(ctx context.Context, c rpc.Call, u *User, _ UserIDParams) error {
			if u.ID == c.Principal.ID {
				return ErrUserSelfDisable
			}
			return s.store.SetDisabled(ctx, u.Username, true)
		}), perm(PermUserDisable), rpc.Audit()),
		rpc.Handle("enable", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, _ UserIDParams) error {
			return s.store.SetDisabled(ctx, u.Username, false)
		}), perm(PermUserDisable), rpc.Audit()),
		rpc.Handle("set_roles", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, p SetRolesParams) error {
			return s.store.SetRoles(ctx, u.Username, p.Roles)
		}), perm(PermUserRoles), rpc.Audit()),
		rpc.Handle("reset_password", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, p ResetPasswordParams) error {
			return s.store.ChangePassword(ctx, u.ID, p.Password)
		}), perm(PermUserPassword), rpc.Audit()),
		rpc.Handle("begin_totp", s.beginTOTP, perm(PermUserTOTP), rpc.Audit()),
		rpc.Handle("confirm_totp", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, p ConfirmTOTPParams) error {
			return s.store.ConfirmTOTP(ctx, u.Username, p.Code)
		}), perm(PermUserTOTP), rpc.Audit()),
		rpc.Handle("remove_totp", userOp(s, func(ctx context.Context, _ rpc.Call, u *User, _ UserIDParams) error {
			return s.store.DisableTOTP(ctx, u.Username)
		}), perm(PermUserTOTP), rpc.Audit()),
	}}
}

// rolesChange is implemented by the params of a change that replaces the account's roles.
type rolesChange interface{ newRoles() []string }

func (p SetRolesParams) newRoles() []string { return p.Roles }

// userOp adapts a change of one user (nil: none, a read) to an operation that answers the user
// as it is afterwards. The user is addressed by id; the store methods take the user name. A
// change passes the grant rule first: the user's roles, and the new roles of a rolesChange.
func userOp[P interface{ userID() string }](s *Service, change func(ctx context.Context, c rpc.Call, u *User, p P) error) func(context.Context, rpc.Call, P) (*UserView, error) {
	return func(ctx context.Context, c rpc.Call, p P) (*UserView, error) {
		u, err := s.store.UserByID(ctx, p.userID())
		if err != nil {
			return nil, userError(err)
		}
		if change != nil {
			var after []string
			if rc, ok := any(p).(rolesChange); ok {
				after = rc.newRoles()
			}
			if err := s.CheckGrant(ctx, c.Principal, u.Roles, after); err != nil {
				return nil, err
			}
			if err := change(ctx, c, u, p); err != nil {
				return nil, userError(err)
			}
			if u, err = s.store.UserByID(ctx, u.ID); err != nil {
				return nil, userError(err)
			}
		}
		v := viewOf(u)
		return &v, nil
	}
}

func (s *Service) findUsers(ctx context.Context, c rpc.Call, search UserSearch) (*crud.Page[UserView], error) {
	m := crud.ReadMeta(c.Meta)
	users, total, err := s.store.Find(ctx, search, m)
	if err != nil {
		return nil, err
	}
	items := make([]UserView, len(users))
	for i, u := range users {
		items[i] = viewOf(u)
	}
	return &crud.Page[UserView]{Page: m.Page, Size: m.Size, Total: total, Items: items}, nil
}

// listRoles answers the roles of svc.security.roles by name, for a roles picker, each with
// whether the caller may grant it (RoleGrantable).
func (s *Service) listRoles(ctx context.Context, c rpc.Call, _ rpc.NoParams) ([]RoleView, error) {
	out := make([]RoleView, 0, len(s.cfg.Security.Roles))
	for name, perms := range s.cfg.Security.Roles {
		p := slices.Clone(perms)
		if p == nil {
			p = []string{}
		}
		ok, err := s.RoleGrantable(ctx, c.Principal, name)
		if err != nil {
			return nil, err
		}
		out = append(out, RoleView{Name: name, Permissions: p, Grantable: ok})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *Service) createUser(ctx context.Context, c rpc.Call, p CreateUserParams) (*UserView, error) {
	if err := s.CheckGrant(ctx, c.Principal, nil, p.Roles); err != nil {
		return nil, err
	}
	u, err := s.store.Create(ctx, p.Username, p.DisplayName, p.Password, p.Roles)
	if err != nil {
		return nil, userError(err)
	}
	v := viewOf(u)
	return &v, nil
}

// beginTOTP starts an enrollment. The secret goes only to the account's own session: for
// another account (which the grant rule must let the caller act on) the enrollment is requested
// for the account's next sign-in instead, and the answer carries no secret.
func (s *Service) beginTOTP(ctx context.Context, c rpc.Call, p UserIDParams) (*TOTPEnrollmentView, error) {
	u, err := s.store.UserByID(ctx, p.ID)
	if err != nil {
		return nil, userError(err)
	}
	if err := s.CheckGrant(ctx, c.Principal, u.Roles, nil); err != nil {
		return nil, err
	}
	if c.Principal.Type != rpc.PrincipalUser || c.Principal.ID != u.ID {
		if err := s.store.RequestTOTPEnrollment(ctx, u.Username); err != nil {
			return nil, userError(err)
		}
		return &TOTPEnrollmentView{AtNextSignIn: true}, nil
	}
	en, err := s.store.BeginTOTP(ctx, u.Username, s.cfg.App.Name)
	if err != nil {
		return nil, userError(err)
	}
	return &TOTPEnrollmentView{Secret: en.Secret, OTPAuthURL: en.URI}, nil
}

// userError turns the store's plain errors into wire errors; policy errors (1050) and others
// that carry a code pass unchanged, anything else is an internal error.
func userError(err error) error {
	switch {
	case errors.Is(err, ErrUserNotFound):
		return rpc.ErrRecordNotFound
	case errors.Is(err, ErrUserExists):
		return rpc.ErrRecordAlreadyExists
	case errors.Is(err, ErrInvalidUsername):
		return ErrUserInvalidName
	case errors.Is(err, ErrTOTPNotPending):
		return ErrUserTOTPNotPending
	case errors.Is(err, ErrOTPCodeInvalid):
		return ErrUserTOTPCodeInvalid
	}
	return err
}
