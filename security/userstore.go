package security

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
	"github.com/uptrace/bun"
)

// maxUsernameLen bounds user names (the column is varchar(128)).
const maxUsernameLen = 128

// User is one account of a user store. PasswordHash is never rendered.
type User struct {
	ID           string   `json:"id"`
	Username     string   `json:"username"`
	DisplayName  string   `json:"displayName"`
	PasswordHash string   `json:"-"`
	Roles        []string `json:"roles"`
	Disabled     bool     `json:"disabled"`
	TOTPSecret   string   `json:"-"`
	TOTPPending  bool     `json:"-"` // an enrollment waits for its confirming code
	// TOTPEnroll: an enrollment was requested for the user by someone else; the user is shown
	// the new secret at its next sign-in (the totp_enrollment challenge).
	TOTPEnroll        bool      `json:"-"`
	PasswordChangedAt time.Time `json:"passwordChangedAt"`
	TokensValidAfter  time.Time `json:"-"`
	CreatedAt         time.Time `json:"createdAt"`
}

// HasTOTP reports whether the user has an activated TOTP secret.
func (u *User) HasTOTP() bool { return u.TOTPSecret != "" }

// Principal returns the principal of u: its id, display name (or user name) and roles.
func (u *User) Principal() *rpc.Principal {
	name := u.displayName()
	roles := slices.Clone(u.Roles)
	if roles == nil {
		roles = []string{}
	}
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: u.ID, Name: name, Roles: roles}
}

// displayName is the name shown for u: its display name, else its user name.
func (u *User) displayName() string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.Username
}

// UserStore is what the built-in password authenticator needs from a user directory. The
// built-in *Store implements it; a host may pass its own (Options.UserStore) to keep the
// built-in password logic over its own table.
type UserStore interface {
	// LookupUser returns the user with the normalized user name, or an error wrapping
	// ErrUserNotFound.
	LookupUser(ctx context.Context, username string) (*User, error)
}

// NormalizeUsername is the canonical form of a login identifier: surrounding white space
// removed and lower-cased, so "Admin", " admin" and "ADMIN\t" are one user and one lockout key.
func NormalizeUsername(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// validUsername: non-empty after normalization, at most 128 characters, no white space or
// control characters.
func validUsername(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > maxUsernameLen {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// userRow is the sys_security_user table.
type userRow struct {
	bun.BaseModel `bun:"table:sys_security_user"`

	ID                string    `bun:"id,pk"`
	Username          string    `bun:"username"`
	DisplayName       string    `bun:"display_name"`
	PasswordHash      string    `bun:"password_hash"`
	Roles             string    `bun:"roles"` // JSON array
	Disabled          bool      `bun:"disabled"`
	TOTPSecret        string    `bun:"totp_secret"`
	TOTPPendingSecret string    `bun:"totp_pending_secret"`
	TOTPEnroll        bool      `bun:"totp_enroll"`
	PasswordChangedAt time.Time `bun:"password_changed_at"`
	TokensValidAfter  time.Time `bun:"tokens_valid_after"`
	CreatedAt         time.Time `bun:"created_at"`
	UpdatedAt         time.Time `bun:"updated_at"`
}

func (r *userRow) user() *User {
	u := &User{ID: r.ID, Username: r.Username, DisplayName: r.DisplayName, PasswordHash: r.PasswordHash,
		Disabled: r.Disabled, TOTPSecret: r.TOTPSecret, TOTPPending: r.TOTPPendingSecret != "", TOTPEnroll: r.TOTPEnroll,
		PasswordChangedAt: r.PasswordChangedAt.UTC(),
		TokensValidAfter:  r.TokensValidAfter.UTC(), CreatedAt: r.CreatedAt.UTC(), Roles: []string{}}
	_ = json.Unmarshal([]byte(r.Roles), &u.Roles)
	return u
}

// passwordHistoryRow is the sys_security_password_history table.
type passwordHistoryRow struct {
	bun.BaseModel `bun:"table:sys_security_password_history"`

	ID           string    `bun:"id,pk"`
	UserID       string    `bun:"user_id"`
	PasswordHash string    `bun:"password_hash"`
	CreatedAt    time.Time `bun:"created_at"`
}

// Store is the built-in user store (spec/README.md): users with argon2id or bcrypt hashes,
// display names, roles, disabled flag, TOTP secret, password history and change time. It is the
// default password authenticator's directory, user-info loader, TOTP secret loader, password
// history store, password metadata loader and token-state loader.
//
// In a server (Build), users read by id (every authenticated request: token state, current
// roles, user info) are served from an in-memory cache. Every change records a row in
// sys_security_change in its own transaction, so the servers' change feeds drop the entry within
// the bound of security/doc.go, and this process drops it at once. A store made by NewStore or
// OpenStore (the CLI) has no cache: nothing would keep it current.
type Store struct {
	db       *db.DB
	hasher   *Hasher
	policy   *Policy
	now      func() time.Time
	users    *token.Cache[*User]   // by id, nil *User = no such user; nil map outside a server
	onChange []func(userID string) // caches built on users (token state, the directory)
	feed     *token.Feed
}

// NewStore returns the built-in store over d (its tables come from Migrations()). policy may be
// nil (no rules).
func NewStore(d *db.DB, hasher *Hasher, policy *Policy, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	if hasher == nil {
		hasher = NewHasher(HashParams{})
	}
	// every time the store writes is whole microseconds, the precision of its columns on every
	// database, so the ValidAfter a node holds in memory is the one the others read back
	clock := func() time.Time { return now().Truncate(time.Microsecond) }
	return &Store{db: d, hasher: hasher, policy: policy, now: clock}
}

var (
	_ UserStore            = (*Store)(nil)
	_ PrincipalLoader      = (*Store)(nil)
	_ TokenStateLoader     = (*Store)(nil)
	_ TOTPSecretLoader     = (*Store)(nil)
	_ PasswordHistoryStore = (*Store)(nil)
	_ PasswordMetadata     = (*Store)(nil)
	_ PasswordHashUpgrader = (*Store)(nil)
)

// changed applies a committed change of user id to this process's caches and tells the other
// servers (the row in sys_security_change reaches them in any case).
func (s *Store) changed(ctx context.Context, id string) {
	s.forget(id)
	s.feed.Publish(ctx, token.ChangeUser, id)
}

// forget drops user id from the caches (a change of this process or from the change feed).
func (s *Store) forget(id string) {
	s.users.Forget(id)
	for _, f := range s.onChange {
		f(id)
	}
}

// Create adds a user. The password must satisfy the policy (the user name is known, the
// history is empty); roles are stored as given.
func (s *Store) Create(ctx context.Context, username, displayName, password string, roles []string) (*User, error) {
	name := NormalizeUsername(username)
	if !validUsername(name) {
		return nil, ErrInvalidUsername
	}
	if err := s.policy.Check(ctx, PasswordCheck{Username: name, Password: password}); err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(password)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	if roles == nil {
		roles = []string{}
	}
	rolesJSON, _ := json.Marshal(roles)
	row := &userRow{ID: newID(), Username: name, DisplayName: strings.TrimSpace(displayName), PasswordHash: hash,
		Roles: string(rolesJSON), PasswordChangedAt: now, TokensValidAfter: now.Add(-time.Second), CreatedAt: now, UpdatedAt: now}
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return err
		}
		if err := s.addHistory(ctx, tx, row.ID, hash, now); err != nil {
			return err
		}
		return token.RecordChange(ctx, tx, token.ChangeUser, row.ID, now)
	})
	if db.IsUniqueViolation(err) {
		return nil, ErrUserExists
	}
	if err != nil {
		return nil, fmt.Errorf("security: create user: %w", err)
	}
	s.changed(ctx, row.ID)
	return row.user(), nil
}

// LookupUser implements UserStore.
func (s *Store) LookupUser(ctx context.Context, username string) (*User, error) {
	row, err := s.row(ctx, "username", NormalizeUsername(username))
	if err != nil {
		return nil, err
	}
	return row.user(), nil
}

// UserByID returns the user with id, from the cache when it holds it (no database read in
// steady state); the caller owns the returned value.
func (s *Store) UserByID(ctx context.Context, id string) (*User, error) {
	u, err := s.cached(ctx, id)
	if err != nil {
		return nil, err
	}
	c := *u
	c.Roles = slices.Clone(u.Roles)
	return &c, nil
}

// cached returns the user with id as the cache holds it: shared with every other caller, so it
// is read and never modified. The per-request readers (TokenState, LoadPrincipal, the built-in
// user info) use it, which spares them UserByID's copy.
func (s *Store) cached(ctx context.Context, id string) (*User, error) {
	if id == "" {
		return nil, ErrUserNotFound
	}
	u, err := s.users.Load(ctx, id, func(ctx context.Context) (*User, error) {
		row, err := s.row(ctx, "id", id)
		if errors.Is(err, ErrUserNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return row.user(), nil
	})
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, ErrUserNotFound
	}
	return u, nil
}

func (s *Store) row(ctx context.Context, column, value string) (*userRow, error) {
	if value == "" {
		return nil, ErrUserNotFound
	}
	var row userRow
	err := s.db.NewSelect().Model(&row).Where("? = ?", bun.Ident(column), value).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("security: load user: %w", err)
	}
	return &row, nil
}

// List returns every user ordered by user name.
func (s *Store) List(ctx context.Context) ([]*User, error) {
	var rows []userRow
	if err := s.db.NewSelect().Model(&rows).Order("username").Scan(ctx); err != nil {
		return nil, fmt.Errorf("security: list users: %w", err)
	}
	out := make([]*User, len(rows))
	for i := range rows {
		out[i] = rows[i].user()
	}
	return out, nil
}

// UserSearch filters Find: Keyword is contained in the user name or the display name (letter
// case ignored), Role is one of the user's roles, Disabled the disabled flag; empty or nil
// fields do not filter.
type UserSearch struct {
	Keyword  string `json:"keyword,omitempty"`
	Role     string `json:"role,omitempty"`
	Disabled *bool  `json:"disabled,omitempty"`
}

// userSearch is the filter plan of UserSearch: ordered by user name unless meta.sort names
// one of the sortable columns.
var userSearch = crud.NewSearch(
	crud.Keyword(func(s *UserSearch) string { return s.Keyword }, "username", "display_name"),
	crud.Where(func(s *UserSearch) bool { return s.Role != "" }, func(q *bun.SelectQuery, s *UserSearch) *bun.SelectQuery {
		role, _ := json.Marshal(s.Role) // roles are stored as a JSON array: match the element with its quotes
		return q.Where("roles LIKE ? ESCAPE '!'", "%"+crud.EscapeLike(string(role))+"%")
	}),
	crud.EqPtr("disabled", func(s *UserSearch) *bool { return s.Disabled }),
).Sortable("username", "displayName", "passwordChangedAt").OrderBy("username ASC")

// Find returns one page of the users matching search, ordered by meta's sort (default: user
// name), and the number of matching users.
func (s *Store) Find(ctx context.Context, search UserSearch, meta crud.Meta) ([]*User, int64, error) {
	var rows []userRow
	q, err := userSearch.Sort(userSearch.Apply(s.db.NewSelect().Model(&rows), &search, nil), meta.Sort)
	if err != nil {
		return nil, 0, err
	}
	total, err := q.Limit(int64(meta.Size)).Offset(int64((meta.Page - 1) * meta.Size)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("security: find users: %w", err)
	}
	out := make([]*User, len(rows))
	for i := range rows {
		out[i] = rows[i].user()
	}
	return out, total, nil
}

// Count returns the number of users.
func (s *Store) Count(ctx context.Context) (int, error) {
	n, err := s.db.NewSelect().Model((*userRow)(nil)).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("security: count users: %w", err)
	}
	return int(n), nil
}

// SetPassword replaces the password of username after checking the policy, including the
// history rule; tokens issued before the change are refused from then on.
func (s *Store) SetPassword(ctx context.Context, username, password string) error {
	u, err := s.LookupUser(ctx, username)
	if err != nil {
		return err
	}
	return s.ChangePassword(ctx, u.ID, password)
}

// ChangePassword replaces the password of the user with id (see SetPassword).
func (s *Store) ChangePassword(ctx context.Context, id, password string) error {
	u, err := s.UserByID(ctx, id)
	if err != nil {
		return err
	}
	if err := s.policy.Check(ctx, PasswordCheck{UserID: u.ID, Username: u.Username, Password: password}); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(password)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*userRow)(nil)).Set("password_hash = ?", hash).
			Set("password_changed_at = ?", now).Set("tokens_valid_after = ?", now).Set("updated_at = ?", now).
			Where("id = ?", u.ID).Exec(ctx); err != nil {
			return err
		}
		if err := s.addHistory(ctx, tx, u.ID, hash, now); err != nil {
			return err
		}
		return token.RecordChange(ctx, tx, token.ChangeUser, u.ID, now)
	})
	if err != nil {
		return fmt.Errorf("security: change password: %w", err)
	}
	s.changed(ctx, u.ID)
	return nil
}

// UpgradePasswordHash implements PasswordHashUpgrader: the hash of userID becomes newHash if it
// is still oldHash. password_changed_at, tokens_valid_after and the history stay as they are.
func (s *Store) UpgradePasswordHash(ctx context.Context, userID, oldHash, newHash string) error {
	_, err := s.db.NewUpdate().Model((*userRow)(nil)).Set("password_hash = ?", newHash).Set("updated_at = ?", s.now().UTC()).
		Where("id = ?", userID).Where("password_hash = ?", oldHash).Exec(ctx)
	if err != nil {
		return fmt.Errorf("security: upgrade password hash: %w", err)
	}
	s.users.Forget(userID) // nothing another server caches depends on the hash
	return nil
}

func (s *Store) addHistory(ctx context.Context, tx bun.Tx, userID, hash string, now time.Time) error {
	_, err := tx.NewInsert().Model(&passwordHistoryRow{ID: newID(), UserID: userID, PasswordHash: hash, CreatedAt: now}).Exec(ctx)
	return err
}

// SetDisabled disables or enables username. Disabling refuses every token already issued.
func (s *Store) SetDisabled(ctx context.Context, username string, disabled bool) error {
	return s.update(ctx, username, func(q *bun.UpdateQuery, now time.Time) *bun.UpdateQuery {
		q = q.Set("disabled = ?", disabled)
		if disabled {
			q = q.Set("tokens_valid_after = ?", now)
		}
		return q
	})
}

// SetRoles replaces the roles of username. Requests check the current roles (through the
// cache), so the change takes effect on every server within the bound of security/doc.go, on
// tokens already issued too.
func (s *Store) SetRoles(ctx context.Context, username string, roles []string) error {
	if roles == nil {
		roles = []string{}
	}
	b, _ := json.Marshal(roles)
	return s.update(ctx, username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("roles = ?", string(b))
	})
}

// SetDisplayName replaces the display name of username.
func (s *Store) SetDisplayName(ctx context.Context, username, displayName string) error {
	return s.update(ctx, username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("display_name = ?", strings.TrimSpace(displayName))
	})
}

func (s *Store) update(ctx context.Context, username string, set func(*bun.UpdateQuery, time.Time) *bun.UpdateQuery) error {
	u, err := s.LookupUser(ctx, username)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	err = s.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		q := set(tx.NewUpdate().Model((*userRow)(nil)), now).Set("updated_at = ?", now).Where("id = ?", u.ID)
		if _, err := q.Exec(ctx); err != nil {
			return err
		}
		return token.RecordChange(ctx, tx, token.ChangeUser, u.ID, now)
	})
	if err != nil {
		return fmt.Errorf("security: update user: %w", err)
	}
	s.changed(ctx, u.ID)
	return nil
}

// LoadPrincipal implements PrincipalLoader: unknown and disabled users wrap ErrUserNotFound.
func (s *Store) LoadPrincipal(ctx context.Context, id string) (*rpc.Principal, error) {
	u, err := s.cached(ctx, id)
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, fmt.Errorf("user disabled: %w", ErrUserNotFound)
	}
	return u.Principal(), nil
}

// TokenState implements TokenStateLoader.
func (s *Store) TokenState(ctx context.Context, id string) (TokenState, error) {
	u, err := s.cached(ctx, id)
	if err != nil {
		return TokenState{}, err
	}
	return TokenState{ValidAfter: u.TokensValidAfter, Disabled: u.Disabled, Roles: u.Roles}, nil
}

// PasswordHashes implements PasswordHistoryStore: the newest depth hashes of the user.
func (s *Store) PasswordHashes(ctx context.Context, userID string, depth int) ([]string, error) {
	var rows []passwordHistoryRow
	err := s.db.NewSelect().Model(&rows).Column("password_hash").Where("user_id = ?", userID).
		Order("created_at DESC", "id DESC").Limit(int64(depth)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("security: password history: %w", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.PasswordHash
	}
	return out, nil
}

// PasswordChangedAt implements PasswordMetadata.
func (s *Store) PasswordChangedAt(ctx context.Context, userID string) (time.Time, error) {
	u, err := s.UserByID(ctx, userID)
	if err != nil {
		return time.Time{}, err
	}
	return u.PasswordChangedAt, nil
}

// OpenStore returns the built-in store over d with the hash parameters and the password policy
// of sec, the policy's history and max_age backed by the store itself: the store `svc user`
// manages, configured like the server's.
func OpenStore(d *db.DB, sec config.Security, hash HashParams, now func() time.Time) *Store {
	s := NewStore(d, NewHasher(hash), nil, now)
	s.policy = NewPolicy(sec.PasswordPolicy, s, s, s.hasher, s.now)
	return s
}
