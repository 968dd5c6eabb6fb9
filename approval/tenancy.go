package approval

import (
	"encoding/json"
	"slices"

	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// tenantKeys are the keys of Principal.Details that carry the tenant, in the order they are
// tried (wire-approval §8 "Tenancy").
var tenantKeys = []string{"tenant_id", "tenantId", "TenantID", "Tenant"}

// caller is who calls an approval operation: id, name, tenant and whether the tenant check is
// lifted (approval:super_admin, or the system principal).
type caller struct {
	ID     string
	Name   string
	Tenant string
	Super  bool
}

// callerOf resolves the caller of c. The tenant comes from the principal's details under one of
// tenantKeys; a principal without details (the built-in user store, tokens minted without
// details) is in DefaultTenantID; details without a tenant fail closed (ErrTenantNotResolved).
func callerOf(c rpc.Call) (caller, error) {
	p := c.Principal
	if p == nil {
		return caller{}, rpc.ErrUnauthenticated
	}
	cl := caller{ID: p.ID, Name: p.Name, Super: p.Type == rpc.PrincipalSystem || slices.Contains(p.Roles, SuperAdminRole)}
	tenant, ok := tenantOf(p.Details)
	switch {
	case ok:
		cl.Tenant = tenant
	case p.Details == nil:
		cl.Tenant = DefaultTenantID
	case !cl.Super:
		return caller{}, ErrTenantNotResolved
	}
	return cl, nil
}

// tenantOf reads the tenant from details: a map or any value that encodes as a JSON object.
func tenantOf(details any) (string, bool) {
	if details == nil {
		return "", false
	}
	m, ok := details.(map[string]any)
	if !ok {
		b, err := json.Marshal(details)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return "", false
		}
	}
	for _, k := range tenantKeys {
		if s, ok := m[k].(string); ok && s != "" {
			return s, true
		}
	}
	return "", false
}

// sees reports whether the caller may touch a row of tenant: its own tenant, or any for a
// super-admin. Callers answer a row it may not see as not found (fail closed).
func (c caller) sees(tenant string) bool { return c.Super || c.Tenant == tenant }

// tenantFilter restricts q to the caller's tenant (column is the tenant column, qualified when
// the query joins); a super-admin sees every tenant unless it asks for one.
func (c caller) tenantFilter(q *bun.SelectQuery, column, asked string) *bun.SelectQuery {
	switch {
	case !c.Super:
		return q.Where("? = ?", bun.Ident(column), c.Tenant)
	case asked != "":
		return q.Where("? = ?", bun.Ident(column), asked)
	}
	return q
}

// writeTenant is the tenant a new row of the caller goes to: a super-admin's choice (default
// DefaultTenantID), else always the caller's own tenant.
func (c caller) writeTenant(asked string) string {
	switch {
	case !c.Super:
		return c.Tenant
	case asked != "":
		return asked
	}
	return DefaultTenantID
}
