package security

import (
	"context"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// ResourceDepartment lists the built-in directory's departments over /api (svc's own resource,
// issue #46; the original's client has none): what `svc dept list` prints, for the console's
// department picker and any other client. It is read-only: departments are managed with
// `svc dept`.
const ResourceDepartment = "security/department"

// PermDepartmentQuery is the permission token of security/department find_tree.
const PermDepartmentQuery = "security.department.query"

// maxDepartmentKeyword bounds DepartmentSearch.Keyword (a department's name is at most 128
// characters).
const maxDepartmentKeyword = 128

// DepartmentSearch are the params of find_tree: Keyword ("" = every department) keeps the
// departments whose name or code contains it, in any case, with their ancestors.
type DepartmentSearch struct {
	Keyword string `json:"keyword"`
}

// Validate implements rpc.Validator.
func (p *DepartmentSearch) Validate() error {
	var c rpc.Check
	c.MaxLen("keyword", p.Keyword, maxDepartmentKeyword)
	return c.Err()
}

// DepartmentNode is a department of find_tree's answer with the departments under it, each
// level ordered by code.
type DepartmentNode struct {
	Department
	Children []DepartmentNode `json:"children"`
}

// departmentResource is security/department. It has no operations when the host gave the
// approval module its own organisation (Options.HideDepartments): the built-in tables would
// then list departments the flows' ids do not name.
func (s *Service) departmentResource() rpc.Resource {
	if s.hideDepartments {
		return rpc.Resource{Name: ResourceDepartment}
	}
	return rpc.Resource{Name: ResourceDepartment, Ops: []rpc.Op{
		rpc.Handle("find_tree", s.findDepartments, rpc.RequiredPermission(PermDepartmentQuery)),
	}}
}

func (s *Service) findDepartments(ctx context.Context, _ rpc.Call, p DepartmentSearch) ([]DepartmentNode, error) {
	all, err := s.directory.Departments(ctx)
	if err != nil {
		return nil, err
	}
	return departmentTree(all, strings.TrimSpace(p.Keyword)), nil
}

// departmentTree nests depts (ordered by code) under their parents; a department whose parent
// is not listed is a root. With a keyword only the matching departments and their ancestors
// are kept.
func departmentTree(depts []Department, keyword string) []DepartmentNode {
	byID := make(map[string]Department, len(depts))
	for _, d := range depts {
		byID[d.ID] = d
	}
	keep := make(map[string]bool, len(depts))
	low := strings.ToLower(keyword)
	for _, d := range depts {
		if keyword != "" && !strings.Contains(strings.ToLower(d.Name), low) && !strings.Contains(strings.ToLower(d.Code), low) {
			continue
		}
		// the department and its ancestors; a cycle, which AddDepartment cannot make, ends the walk
		for id := d.ID; id != "" && !keep[id]; id = byID[id].ParentID {
			if _, ok := byID[id]; !ok {
				break
			}
			keep[id] = true
		}
	}
	children := make(map[string][]Department, len(depts))
	var roots []Department
	for _, d := range depts {
		if !keep[d.ID] {
			continue
		}
		if _, ok := byID[d.ParentID]; ok && d.ParentID != d.ID {
			children[d.ParentID] = append(children[d.ParentID], d)
		} else {
			roots = append(roots, d)
		}
	}
	var nest func(ds []Department) []DepartmentNode
	nest = func(ds []Department) []DepartmentNode {
		out := make([]DepartmentNode, len(ds))
		for i, d := range ds {
			out[i] = DepartmentNode{Department: d, Children: nest(children[d.ID])}
		}
		return out
	}
	return nest(roots)
}
