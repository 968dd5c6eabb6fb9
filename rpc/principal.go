package rpc

// PrincipalType classifies who is calling (wire-core §3.2).
type PrincipalType string

// The principal types of wire-core §3.2.
const (
	// PrincipalUser is an end user, including the anonymous user of public operations.
	PrincipalUser PrincipalType = "user"
	// PrincipalExternalApp is a machine caller authenticated by api_key, http_basic, ip or signature.
	PrincipalExternalApp PrincipalType = "external_app"
	// PrincipalSystem is the framework itself (cron jobs, workers); it bypasses permission checks.
	PrincipalSystem PrincipalType = "system"
)

// Reserved principal ids (wire-core §2.3, code 1007): no authenticator may produce them for a user.
const (
	AnonymousID = "anonymous"
	SystemID    = "system"
	CronJobID   = "cron_job"
)

// Principal is the authenticated caller, with the JSON shape of wire-core §3.2.
type Principal struct {
	Type    PrincipalType `json:"type"`
	ID      string        `json:"id"`
	Name    string        `json:"name"`
	Roles   []string      `json:"roles"`
	Details any           `json:"details"`
}

// Display names of the built-in principals, as the original's clients see them (wire-core §3.2).
const (
	AnonymousName = "匿名"
	SystemName    = "系统"
)

// Anonymous returns a fresh anonymous principal, the caller of public operations:
// {type "user", id "anonymous", name "匿名"}.
func Anonymous() *Principal {
	return &Principal{Type: PrincipalUser, ID: AnonymousID, Name: AnonymousName, Roles: []string{}}
}

// System returns a fresh system principal, used by workers acting on the framework's behalf:
// {type "system", id "system", name "系统"}.
func System() *Principal {
	return &Principal{Type: PrincipalSystem, ID: SystemID, Name: SystemName, Roles: []string{}}
}

// IsAnonymous reports whether p is nil or the anonymous user.
func (p *Principal) IsAnonymous() bool {
	return p == nil || (p.Type == PrincipalUser && p.ID == AnonymousID)
}

// IsSystem reports whether p is the framework itself.
func (p *Principal) IsSystem() bool { return p != nil && p.Type == PrincipalSystem }

// IsReservedID reports whether id is one of the ids no user may have (wire-core §2.3, code 1007).
func IsReservedID(id string) bool {
	return id == AnonymousID || id == SystemID || id == CronJobID
}
