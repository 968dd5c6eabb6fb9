package approval

import (
	"context"
	"strings"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// CategorySearch filters find_tree (wire-approval §6.1): name contains, isActive equal; a
// super-admin may also ask for one tenant.
type CategorySearch struct {
	TenantID string `json:"tenantId"`
	Name     string `json:"name"`
	IsActive *bool  `json:"isActive"`
}

// CategoryParams are create and update's params (§6.1 CategoryParams).
type CategoryParams struct {
	ID        string  `json:"id"`
	TenantID  string  `json:"tenantId"`
	Code      string  `json:"code"`
	Name      string  `json:"name"`
	Icon      *string `json:"icon"`
	ParentID  *string `json:"parentId"`
	SortOrder int     `json:"sortOrder"`
	IsActive  *bool   `json:"isActive"`
	Remark    *string `json:"remark"`
}

// Validate: code and name are required, within their column lengths (400/1400).
func (p *CategoryParams) Validate() error {
	var c rpc.Check
	c.Required("code", strings.TrimSpace(p.Code) != "")
	c.Required("name", strings.TrimSpace(p.Name) != "")
	c.MaxLen("code", p.Code, 64)
	c.MaxLen("name", p.Name, 128)
	c.MaxLen("tenantId", p.TenantID, 64)
	if p.Icon != nil {
		c.MaxLen("icon", *p.Icon, 128)
	}
	if p.Remark != nil {
		c.MaxLen("remark", *p.Remark, 256)
	}
	return c.Err()
}

// categoryResource is approval/category: find_tree, create ({id}), update and delete under
// approval.category.*, on the shared crud helper, scoped to the caller's tenant (a super-admin
// sees every tenant). A parent must be a category of the same tenant that is not the category
// itself or one of its descendants; deleting a category with children or flows answers 2003.
func (s *Service) categoryResource() rpc.Resource {
	r := &crud.Resource[Category, *Category, CategorySearch, CategoryParams]{
		Query: crud.Query[Category, CategorySearch]{Name: "approval/category", Permission: "approval.category", DB: s.db,
			Search: crud.NewSearch(
				crud.Eq("tenant_id", func(q *CategorySearch) string { return q.TenantID }),
				crud.Contains("name", func(q *CategorySearch) string { return q.Name }),
				crud.EqPtr("is_active", func(q *CategorySearch) *bool { return q.IsActive }),
			).Sortable("code", "name", "sortOrder").OrderBy("sort_order ASC, created_at ASC, id ASC"),
			Scope: tenantScope("tenant_id"),
		},
		Clock: s.clock, ID: func(p *CategoryParams) string { return p.ID },
		Stamp: func(_ context.Context, c rpc.Call, p *CategoryParams) error {
			cl, err := callerOf(c)
			p.TenantID = cl.writeTenant(p.TenantID)
			return err
		},
		Build: s.buildCategory,
	}
	ops := []rpc.Op{rpc.Handle("find_tree", func(ctx context.Context, c rpc.Call, p CategorySearch) ([]*Category, error) {
		return s.findTree(ctx, c, &r.Query, p)
	}, rpc.RequiredPermission("approval.category.query"))}
	for _, op := range r.Ops() {
		switch op.Action {
		case "create", "update", "delete":
			ops = append(ops, op)
		}
	}
	return rpc.Resource{Name: r.Name, Ops: ops}
}

// tenantScope is the crud Scope of a tenant-owned table: the caller's tenant, every tenant for a
// super-admin.
func tenantScope(column string) func(c rpc.Call, q *bun.SelectQuery) (*bun.SelectQuery, error) {
	return func(c rpc.Call, q *bun.SelectQuery) (*bun.SelectQuery, error) {
		cl, err := callerOf(c)
		if err != nil {
			return nil, err
		}
		return cl.tenantFilter(q, column, ""), nil
	}
}

func (s *Service) buildCategory(ctx context.Context, tx bun.IDB, p *CategoryParams, old *Category) (*Category, error) {
	row := &Category{TenantID: p.TenantID, Code: strings.TrimSpace(p.Code), Name: strings.TrimSpace(p.Name), Icon: p.Icon,
		ParentID: blankNil(p.ParentID), SortOrder: p.SortOrder, IsActive: p.IsActive == nil || *p.IsActive, Remark: p.Remark}
	if old != nil {
		row.TenantID = old.TenantID // a category never changes tenant
	}
	if row.ParentID == nil {
		return row, nil
	}
	// Walk up from the parent: it must exist in the same tenant and never reach the row itself.
	for id, depth := *row.ParentID, 0; id != ""; depth++ {
		if old != nil && id == old.ID || depth > 1000 {
			return nil, ErrCategoryParentCycle
		}
		var up Category
		if err := tx.NewSelect().Model(&up).Column("id", "tenant_id", "parent_id").Where("id = ?", id).Scan(ctx); err != nil {
			return nil, ErrCategoryParentNotFound
		}
		if up.TenantID != row.TenantID {
			return nil, ErrCategoryParentNotFound
		}
		id = deref(up.ParentID)
	}
	return row, nil
}

// findTree answers the categories the search keeps as a forest: each under its parent when the
// parent is kept too, else as a root; siblings by sortOrder, then creation.
func (s *Service) findTree(ctx context.Context, c rpc.Call, q *crud.Query[Category, CategorySearch], p CategorySearch) ([]*Category, error) {
	var rows []Category
	sel, err := q.SelectFor(c, &rows, &p, crud.ReadMeta(c.Meta))
	if err != nil {
		return nil, err
	}
	if err := sel.Limit(crud.DefaultFindAllLimit).Scan(ctx); err != nil {
		return nil, err
	}
	byID := make(map[string]*Category, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	roots := []*Category{}
	for i := range rows {
		row := &rows[i]
		if parent, ok := byID[deref(row.ParentID)]; ok && row.ParentID != nil {
			parent.Children = append(parent.Children, row)
			continue
		}
		roots = append(roots, row)
	}
	return roots, nil
}

// blankNil is nil for a nil or blank string.
func blankNil(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return s
}

func deref[T ~string](s *T) T {
	if s == nil {
		return ""
	}
	return *s
}
