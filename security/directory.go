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
	"unicode/utf8"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/security/token"
	"github.com/uptrace/bun"
)

// Department is one node of the built-in directory's department tree.
type Department struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	ParentID string `json:"parentId,omitempty"`
	// LeaderIDs are the ids of the department's leaders, sorted.
	LeaderIDs []string `json:"leaderIds"`
}

// DirectoryUser is a user as the directory describes it to the approval module: id, display
// name and department.
type DirectoryUser struct {
	ID             string
	Name           string
	DepartmentID   string
	DepartmentName string
}

// Directory is the built-in organisation over the built-in user store's tables: departments (a
// tree with leaders), each user's department and superior. It implements what the approval
// module asks of a directory (superior, department leaders, role users, user names and
// departments); svc adapts it. Managed with `svc dept …` and `svc user set-department|
// set-superior`. A directory from NewDirectory reads the database on every call; the security
// module's (Service.Directory) caches ResolveUsers, kept current by the change feed: every
// change of a user — the store's, and a department assignment here — records a user change in
// its transaction. Departments are never renamed, so a user's entry holds its department's name.
type Directory struct {
	db    *db.DB
	now   func() time.Time
	users *token.Cache[*DirectoryUser] // ResolveUsers by id, nil *DirectoryUser = no such user; nil: no cache
}

// NewDirectory returns the directory over d (tables from Migrations()); now may be nil.
func NewDirectory(d *db.DB, now func() time.Time) *Directory {
	if now == nil {
		now = time.Now
	}
	return &Directory{db: d, now: now}
}

type departmentRow struct {
	bun.BaseModel `bun:"table:sys_security_department"`

	ID        string    `bun:"id,pk"`
	Code      string    `bun:"code"`
	Name      string    `bun:"name"`
	ParentID  *string   `bun:"parent_id"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

type leaderRow struct {
	bun.BaseModel `bun:"table:sys_security_department_leader"`

	DepartmentID string `bun:"department_id,pk"`
	UserID       string `bun:"user_id,pk"`
}

// directoryUserRow is the part of sys_security_user the directory reads.
type directoryUserRow struct {
	bun.BaseModel `bun:"table:sys_security_user,alias:u"`

	ID           string  `bun:"id,pk"`
	Username     string  `bun:"username"`
	DisplayName  string  `bun:"display_name"`
	Roles        string  `bun:"roles"`
	DepartmentID *string `bun:"department_id"`
	SuperiorID   *string `bun:"superior_id"`
}

// AddDepartment creates a department with a unique code under the department parentCode ("" for
// a root).
func (d *Directory) AddDepartment(ctx context.Context, code, name, parentCode string) (*Department, error) {
	code, name = strings.TrimSpace(code), strings.TrimSpace(name)
	if name == "" {
		name = code
	}
	if code == "" || utf8.RuneCountInString(code) > 64 || utf8.RuneCountInString(name) > 128 || strings.ContainsFunc(code, isSpaceOrControl) {
		return nil, fmt.Errorf("%w: code must be 1-64 characters without spaces, name at most 128", ErrInvalidDepartment)
	}
	now := d.now().UTC()
	row := &departmentRow{ID: newID(), Code: code, Name: name, CreatedAt: now, UpdatedAt: now}
	if parentCode != "" {
		parent, err := d.department(ctx, d.db, parentCode)
		if err != nil {
			return nil, err
		}
		row.ParentID = &parent.ID
	}
	if _, err := d.db.NewInsert().Model(row).Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, ErrDepartmentExists
		}
		return nil, fmt.Errorf("security: add department: %w", err)
	}
	return &Department{ID: row.ID, Code: row.Code, Name: row.Name, ParentID: deref(row.ParentID), LeaderIDs: []string{}}, nil
}

// department finds a department by code, or by id.
func (d *Directory) department(ctx context.Context, idb bun.IDB, ref string) (*departmentRow, error) {
	var row departmentRow
	err := idb.NewSelect().Model(&row).Where("code = ? OR id = ?", ref, ref).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrDepartmentNotFound, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("security: load department: %w", err)
	}
	return &row, nil
}

// Departments lists every department ordered by code, with its leaders.
func (d *Directory) Departments(ctx context.Context) ([]Department, error) {
	var rows []departmentRow
	if err := d.db.NewSelect().Model(&rows).Order("code").Scan(ctx); err != nil {
		return nil, fmt.Errorf("security: list departments: %w", err)
	}
	var leaders []leaderRow
	if err := d.db.NewSelect().Model(&leaders).Order("department_id", "user_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("security: list department leaders: %w", err)
	}
	byDept := map[string][]string{}
	for _, l := range leaders {
		byDept[l.DepartmentID] = append(byDept[l.DepartmentID], l.UserID)
	}
	out := make([]Department, len(rows))
	for i, r := range rows {
		out[i] = Department{ID: r.ID, Code: r.Code, Name: r.Name, ParentID: deref(r.ParentID), LeaderIDs: nonNilStrings(byDept[r.ID])}
	}
	return out, nil
}

// SetLeaders replaces the leaders of the department deptRef (code or id) with the users named
// (user names or ids); none clears them.
func (d *Directory) SetLeaders(ctx context.Context, deptRef string, users []string) error {
	return d.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		dept, err := d.department(ctx, tx, deptRef)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(users))
		for _, u := range users {
			row, err := d.user(ctx, tx, u)
			if err != nil {
				return err
			}
			if !slices.Contains(ids, row.ID) {
				ids = append(ids, row.ID)
			}
		}
		if _, err := tx.NewDelete().Model((*leaderRow)(nil)).Where("department_id = ?", dept.ID).Exec(ctx); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.NewInsert().Model(&leaderRow{DepartmentID: dept.ID, UserID: id}).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// user finds a user by normalized user name, or by id.
func (d *Directory) user(ctx context.Context, idb bun.IDB, ref string) (*directoryUserRow, error) {
	var row directoryUserRow
	err := idb.NewSelect().Model(&row).Where("username = ? OR id = ?", NormalizeUsername(ref), ref).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrUserNotFound, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("security: load user: %w", err)
	}
	return &row, nil
}

// SetUserDepartment puts the user (name or id) in the department deptRef (code or id); ""
// removes the user from any department.
func (d *Directory) SetUserDepartment(ctx context.Context, user, deptRef string) error {
	var id string
	err := d.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		u, err := d.user(ctx, tx, user)
		if err != nil {
			return err
		}
		var dept *string
		if deptRef != "" {
			row, err := d.department(ctx, tx, deptRef)
			if err != nil {
				return err
			}
			dept = &row.ID
		}
		now := d.now().UTC()
		_, err = tx.NewUpdate().Model((*directoryUserRow)(nil)).Set("department_id = ?", dept).
			Set("updated_at = ?", now).Where("id = ?", u.ID).Exec(ctx)
		if err != nil {
			return err
		}
		id = u.ID
		return token.RecordChange(ctx, tx, token.ChangeUser, u.ID, now) // every server's caches forget the user
	})
	if err == nil {
		d.users.Forget(id) // this one's at once
	}
	return err
}

// SetSuperior makes superior (name or id) the superior of user; "" clears it. A chain of
// superiors that would come back to the user is refused (ErrSuperiorCycle).
func (d *Directory) SetSuperior(ctx context.Context, user, superior string) error {
	return d.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		u, err := d.user(ctx, tx, user)
		if err != nil {
			return err
		}
		var sup *string
		if superior != "" {
			s, err := d.user(ctx, tx, superior)
			if err != nil {
				return err
			}
			for cur, n := s, 0; cur != nil; n++ {
				if cur.ID == u.ID || n > 10000 {
					return ErrSuperiorCycle
				}
				if cur.SuperiorID == nil {
					break
				}
				if cur, err = d.user(ctx, tx, *cur.SuperiorID); errors.Is(err, ErrUserNotFound) {
					break
				} else if err != nil {
					return err
				}
			}
			sup = &s.ID
		}
		_, err = tx.NewUpdate().Model((*directoryUserRow)(nil)).Set("superior_id = ?", sup).
			Set("updated_at = ?", d.now().UTC()).Where("id = ?", u.ID).Exec(ctx)
		return err
	})
}

// Superior returns the id of userID's superior, "" when none (or no such user).
func (d *Directory) Superior(ctx context.Context, userID string) (string, error) {
	u, err := d.user(ctx, d.db, userID)
	if errors.Is(err, ErrUserNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return deref(u.SuperiorID), nil
}

// DepartmentLeaders returns the ids of the leaders of the department deptID (id or code); an
// unknown department has none.
func (d *Directory) DepartmentLeaders(ctx context.Context, deptID string) ([]string, error) {
	var ids []string
	err := d.db.NewSelect().TableExpr("sys_security_department_leader AS l").
		Join("JOIN sys_security_department AS d ON d.id = l.department_id").ColumnExpr("l.user_id").
		Where("d.id = ? OR d.code = ?", deptID, deptID).OrderExpr("l.user_id").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("security: department leaders: %w", err)
	}
	return nonNilStrings(ids), nil
}

// RoleUsers returns the ids of the enabled users holding role, ordered by user name.
func (d *Directory) RoleUsers(ctx context.Context, role string) ([]string, error) {
	var rows []directoryUserRow
	pattern := "%" + crud.EscapeLike(mustJSON(role)) + "%"
	err := d.db.NewSelect().Model(&rows).Column("id", "roles").Where("roles LIKE ? ESCAPE '!'", pattern).
		Where("disabled = ?", false).Order("username").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("security: role users: %w", err)
	}
	ids := []string{}
	for _, r := range rows {
		var roles []string
		if json.Unmarshal([]byte(r.Roles), &roles) == nil && slices.Contains(roles, role) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// ResolveUsers returns the users of ids that exist, with their display names (else user names)
// and departments: from the cache when the directory has one, the others in one query.
func (d *Directory) ResolveUsers(ctx context.Context, ids []string) (map[string]DirectoryUser, error) {
	out := make(map[string]DirectoryUser, len(ids))
	var missing []string
	for _, id := range ids {
		if u, ok := d.users.Get(id); ok {
			if u != nil {
				out[id] = *u
			}
			continue
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return out, nil
	}
	gen := d.users.Generation()
	var rows []struct {
		ID          string  `bun:"id"`
		Username    string  `bun:"username"`
		DisplayName string  `bun:"display_name"`
		DeptID      *string `bun:"dept_id"`
		DeptName    *string `bun:"dept_name"`
	}
	err := d.db.NewSelect().TableExpr("sys_security_user AS u").
		Join("LEFT JOIN sys_security_department AS d ON d.id = u.department_id").
		ColumnExpr("u.id, u.username, u.display_name, d.id AS dept_id, d.name AS dept_name").
		Where("u.id IN (?)", bun.List(missing)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("security: resolve users: %w", err)
	}
	read := make(map[string]*DirectoryUser, len(missing))
	for _, id := range missing {
		read[id] = nil
	}
	for _, r := range rows {
		name := r.DisplayName
		if name == "" {
			name = r.Username
		}
		u := DirectoryUser{ID: r.ID, Name: name, DepartmentID: deref(r.DeptID), DepartmentName: deref(r.DeptName)}
		out[r.ID], read[r.ID] = u, &u
	}
	d.users.PutAll(gen, read)
	return out, nil
}

// UserDepartment returns the id and name of userID's department ("" when none).
func (d *Directory) UserDepartment(ctx context.Context, userID string) (id, name string, err error) {
	users, err := d.ResolveUsers(ctx, []string{userID})
	if err != nil {
		return "", "", err
	}
	u := users[userID]
	return u.DepartmentID, u.DepartmentName, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
