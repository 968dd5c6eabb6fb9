package approval

import "context"

// UserInfo is a person as every approval projection shows it (wire-approval §6.7): id, name and,
// when the directory knows them, the department.
type UserInfo struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	DepartmentID   string `json:"departmentId,omitempty"`
	DepartmentName string `json:"departmentName,omitempty"`
}

// AssigneeService resolves the assignee kinds that depend on the organisation (wire-approval §1,
// §8): a user's superior, a department's leaders and a role's users. An unknown id resolves to
// nothing (empty result, nil error); an error means the directory failed.
type AssigneeService interface {
	// Superior returns the id of userID's superior, or "" when there is none.
	Superior(ctx context.Context, userID string) (string, error)
	// DepartmentLeaders returns the ids of the leaders of department deptID.
	DepartmentLeaders(ctx context.Context, deptID string) ([]string, error)
	// RoleUsers returns the ids of the users holding role.
	RoleUsers(ctx context.Context, role string) ([]string, error)
}

// UserInfoResolver turns user ids into names and departments for the snapshots an instance keeps
// (applicant, assignees, operators). Ids it does not know are absent from the map.
type UserInfoResolver interface {
	ResolveUsers(ctx context.Context, ids []string) (map[string]UserInfo, error)
}

// DepartmentResolver answers a user's department (id and name; "" when none): the applicant's
// department of an instance and the department initiator rule.
type DepartmentResolver interface {
	UserDepartment(ctx context.Context, userID string) (id, name string, err error)
}

// Directory is everything the module asks of the host's organisation. The ready binary's
// default is the built-in user store's departments and superiors (docs/approval.md); a host
// replaces it, or any single part, with svc.WithApproval.
type Directory interface {
	AssigneeService
	UserInfoResolver
	DepartmentResolver
}

// TableInspector describes a table of the primary database for the business-binding check
// (wire-approval §6.3). The composition root passes the schema module's inspector.
type TableInspector interface {
	// InspectTable returns the table, or nil and no error when it does not exist.
	InspectTable(ctx context.Context, name string) (*Table, error)
}

// Table is what the business-binding check needs to know of a table.
type Table struct {
	// Columns maps each column name to whether it is nullable.
	Columns map[string]bool
	// PrimaryKey lists the primary key's columns (empty without one).
	PrimaryKey []string
	// UniqueKeys lists the columns of each full (non-partial, expression-free) unique key.
	UniqueKeys [][]string
}
