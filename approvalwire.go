package svc

import (
	"context"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/security"
)

// approvalOptions completes the host's approval options: the built-in directory (departments,
// superiors and roles of the built-in user store, docs/approval.md) for every directory part
// the host left nil, and the schema module's inspector for business bindings.
func approvalOptions(o approval.Options, dir *security.Directory, sch *schema.Service) approval.Options {
	if o.Directory == nil {
		o.Directory = builtinDirectory{dir}
	}
	if o.Tables == nil {
		o.Tables = schemaTables{sch}
	}
	return o
}

// builtinDirectory adapts the security module's directory to approval.Directory.
type builtinDirectory struct{ d *security.Directory }

var _ approval.Directory = builtinDirectory{}

func (b builtinDirectory) Superior(ctx context.Context, userID string) (string, error) {
	return b.d.Superior(ctx, userID)
}

func (b builtinDirectory) DepartmentLeaders(ctx context.Context, deptID string) ([]string, error) {
	return b.d.DepartmentLeaders(ctx, deptID)
}

func (b builtinDirectory) RoleUsers(ctx context.Context, role string) ([]string, error) {
	return b.d.RoleUsers(ctx, role)
}

func (b builtinDirectory) ResolveUsers(ctx context.Context, ids []string) (map[string]approval.UserInfo, error) {
	users, err := b.d.ResolveUsers(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]approval.UserInfo, len(users))
	for id, u := range users {
		out[id] = approval.UserInfo(u)
	}
	return out, nil
}

func (b builtinDirectory) UserDepartment(ctx context.Context, userID string) (string, string, error) {
	return b.d.UserDepartment(ctx, userID)
}

// schemaTables adapts the schema module's inspector to approval.TableInspector.
type schemaTables struct{ s *schema.Service }

func (t schemaTables) InspectTable(ctx context.Context, name string) (*approval.Table, error) {
	ts, err := t.s.InspectTable(ctx, name)
	if err != nil || ts == nil {
		return nil, err
	}
	out := &approval.Table{Columns: make(map[string]bool, len(ts.Columns))}
	for _, c := range ts.Columns {
		out.Columns[c.Name] = c.Nullable
	}
	if ts.PrimaryKey != nil {
		out.PrimaryKey = ts.PrimaryKey.Columns
	}
	for _, u := range ts.UniqueKeys {
		if u.Predicate == "" && !u.HasExpressions {
			out.UniqueKeys = append(out.UniqueKeys, u.Columns)
		}
	}
	return out, nil
}
