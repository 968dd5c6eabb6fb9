package approval

import (
	"encoding/json"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// Category is a row of apv_flow_category: a tenant-scoped tree node grouping flows
// (wire-approval §3, §6.1). find_tree answers the tree through Children.
type Category struct {
	bun.BaseModel `bun:"table:apv_flow_category"`
	crud.Audited

	TenantID  string      `bun:"tenant_id" json:"tenantId"`
	Code      string      `bun:"code" json:"code"`
	Name      string      `bun:"name" json:"name"`
	Icon      *string     `bun:"icon" json:"icon"`
	ParentID  *string     `bun:"parent_id" json:"parentId"`
	SortOrder int         `bun:"sort_order" json:"sortOrder"`
	IsActive  bool        `bun:"is_active" json:"isActive"`
	Remark    *string     `bun:"remark" json:"remark"`
	Children  []*Category `bun:"-" json:"children,omitempty"`
}

// Delegation is a row of apv_delegation: tasks of the delegator go to the delegatee inside the
// window [startsAt, endsAt), optionally only for one category or flow (§6.2).
type Delegation struct {
	bun.BaseModel `bun:"table:apv_delegation"`
	crud.Audited

	DelegatorID    string    `bun:"delegator_id" json:"delegatorId"`
	DelegateeID    string    `bun:"delegatee_id" json:"delegateeId"`
	FlowCategoryID *string   `bun:"flow_category_id" json:"flowCategoryId"`
	FlowID         *string   `bun:"flow_id" json:"flowId"`
	StartsAt       crud.Time `bun:"starts_at" json:"startsAt"`
	EndsAt         crud.Time `bun:"ends_at" json:"endsAt"`
	IsActive       bool      `bun:"is_active" json:"isActive"`
	Reason         *string   `bun:"reason" json:"reason"`
}

// Flow is a row of apv_flow: the mutable definition header (§6.3 Flow JSON).
type Flow struct {
	bun.BaseModel `bun:"table:apv_flow"`
	crud.Audited

	TenantID               string            `bun:"tenant_id" json:"tenantId"`
	CategoryID             string            `bun:"category_id" json:"categoryId"`
	Code                   string            `bun:"code" json:"code"`
	Name                   string            `bun:"name" json:"name"`
	Icon                   *string           `bun:"icon" json:"icon"`
	Description            *string           `bun:"description" json:"description"`
	Labels                 map[string]string `bun:"labels,type:json,nullzero" json:"labels,omitempty"`
	BindingMode            string            `bun:"binding_mode" json:"bindingMode"`
	BusinessBinding        *BusinessBinding  `bun:"business_binding,type:json,nullzero" json:"businessBinding,omitempty"`
	AdminUserIDs           []string          `bun:"admin_user_ids,type:json" json:"adminUserIds"`
	IsAllInitiationAllowed bool              `bun:"is_all_initiation_allowed" json:"isAllInitiationAllowed"`
	InstanceTitleTemplate  string            `bun:"instance_title_template" json:"instanceTitleTemplate"`
	IsActive               bool              `bun:"is_active" json:"isActive"`
	CurrentVersion         int               `bun:"current_version" json:"currentVersion"`
}

// Initiator is a row of apv_flow_initiator: who may start a flow that does not allow everyone.
type Initiator struct {
	bun.BaseModel `bun:"table:apv_flow_initiator"`

	ID     string   `bun:"id,pk" json:"id"`
	FlowID string   `bun:"flow_id" json:"flowId"`
	Kind   string   `bun:"kind" json:"kind"`
	IDs    []string `bun:"ids,type:json" json:"ids"`
}

// Version is a row of apv_flow_version: an immutable snapshot made by deploy (§6.3 FlowVersion
// JSON). flowSchema is stored as sent, formSchema verbatim, formFields derived at deploy.
type Version struct {
	bun.BaseModel `bun:"table:apv_flow_version"`
	crud.Audited

	FlowID          string           `bun:"flow_id" json:"flowId"`
	Version         int              `bun:"version" json:"version"`
	Status          string           `bun:"status" json:"status"`
	Description     *string          `bun:"description" json:"description"`
	StorageMode     string           `bun:"storage_mode" json:"storageMode"`
	FlowSchema      json.RawMessage  `bun:"flow_schema,type:json,nullzero" json:"flowSchema"`
	FormSchema      json.RawMessage  `bun:"form_schema,type:json,nullzero" json:"formSchema"`
	FormFields      json.RawMessage  `bun:"form_fields,type:json,nullzero" json:"formFields"`
	PublishedAt     crud.Time        `bun:"published_at,nullzero" json:"publishedAt"`
	PublishedBy     *string          `bun:"published_by" json:"publishedBy"`
	BusinessBinding *BusinessBinding `bun:"business_binding,type:json,nullzero" json:"businessBinding,omitempty"`
}

// VersionSummary is a version without its payloads: what find_versions answers.
type VersionSummary struct {
	ID          string    `json:"id"`
	FlowID      string    `json:"flowId"`
	Version     int       `json:"version"`
	Status      string    `json:"status"`
	Description *string   `json:"description"`
	StorageMode string    `json:"storageMode"`
	PublishedAt crud.Time `json:"publishedAt"`
	PublishedBy *string   `json:"publishedBy"`
	CreatedAt   crud.Time `json:"createdAt"`
	CreatedBy   string    `json:"createdBy"`
}

// Node is a row of apv_flow_node: one materialised node of a deployed graph. Key is the
// designer's node id, ID the persistent id the engine uses.
type Node struct {
	bun.BaseModel `bun:"table:apv_flow_node"`
	crud.Audited

	FlowVersionID             string                           `bun:"flow_version_id" json:"flowVersionId"`
	Key                       string                           `bun:"key" json:"key"`
	Kind                      design.NodeKind                  `bun:"kind" json:"kind"`
	Name                      string                           `bun:"name" json:"name"`
	Description               *string                          `bun:"description" json:"description"`
	ExecutionType             design.ExecutionType             `bun:"execution_type" json:"executionType"`
	ApprovalMethod            design.ApprovalMethod            `bun:"approval_method" json:"approvalMethod"`
	PassRule                  design.PassRule                  `bun:"pass_rule" json:"passRule"`
	PassRatio                 Decimal                          `bun:"pass_ratio" json:"passRatio"`
	EmptyAssigneeAction       design.EmptyAssigneeAction       `bun:"empty_assignee_action" json:"emptyAssigneeAction"`
	FallbackUserIDs           []string                         `bun:"fallback_user_ids,type:json" json:"fallbackUserIds"`
	AdminUserIDs              []string                         `bun:"admin_user_ids,type:json" json:"adminUserIds"`
	SameApplicantAction       design.SameApplicantAction       `bun:"same_applicant_action" json:"sameApplicantAction"`
	IsRollbackAllowed         bool                             `bun:"is_rollback_allowed" json:"isRollbackAllowed"`
	RollbackType              design.RollbackType              `bun:"rollback_type" json:"rollbackType"`
	RollbackDataStrategy      *design.RollbackDataStrategy     `bun:"rollback_data_strategy" json:"rollbackDataStrategy"`
	RollbackTargetKeys        []string                         `bun:"rollback_target_keys,type:json,nullzero" json:"rollbackTargetKeys"`
	IsAddAssigneeAllowed      bool                             `bun:"is_add_assignee_allowed" json:"isAddAssigneeAllowed"`
	AddAssigneeTypes          []design.AddAssigneeType         `bun:"add_assignee_types,type:json" json:"addAssigneeTypes"`
	IsRemoveAssigneeAllowed   bool                             `bun:"is_remove_assignee_allowed" json:"isRemoveAssigneeAllowed"`
	FieldPermissions          map[string]design.Permission     `bun:"field_permissions,type:json" json:"fieldPermissions"`
	IsManualCCAllowed         bool                             `bun:"is_manual_cc_allowed" json:"isManualCcAllowed"`
	IsTransferAllowed         bool                             `bun:"is_transfer_allowed" json:"isTransferAllowed"`
	IsOpinionRequired         bool                             `bun:"is_opinion_required" json:"isOpinionRequired"`
	TimeoutHours              int                              `bun:"timeout_hours" json:"timeoutHours"`
	TimeoutAction             design.TimeoutAction             `bun:"timeout_action" json:"timeoutAction"`
	TimeoutNotifyBeforeHours  int                              `bun:"timeout_notify_before_hours" json:"timeoutNotifyBeforeHours"`
	UrgeCooldownMinutes       int                              `bun:"urge_cooldown_minutes" json:"urgeCooldownMinutes"`
	ConsecutiveApproverAction design.ConsecutiveApproverAction `bun:"consecutive_approver_action" json:"consecutiveApproverAction"`
	IsReadConfirmRequired     bool                             `bun:"is_read_confirm_required" json:"isReadConfirmRequired"`
	Branches                  json.RawMessage                  `bun:"branches,type:json,nullzero" json:"branches"`
}

// NodeAssignee is a row of apv_flow_node_assignee: one assignee rule of an approval or handle
// node, resolved in SortOrder.
type NodeAssignee struct {
	bun.BaseModel `bun:"table:apv_flow_node_assignee"`

	ID        string              `bun:"id,pk" json:"id"`
	NodeID    string              `bun:"node_id" json:"nodeId"`
	Kind      design.AssigneeKind `bun:"kind" json:"kind"`
	IDs       []string            `bun:"ids,type:json" json:"ids"`
	FormField *string             `bun:"form_field" json:"formField"`
	SortOrder int                 `bun:"sort_order" json:"sortOrder"`
}

// NodeCC is a row of apv_flow_node_cc: one carbon-copy rule of a node.
type NodeCC struct {
	bun.BaseModel `bun:"table:apv_flow_node_cc"`

	ID        string          `bun:"id,pk" json:"id"`
	NodeID    string          `bun:"node_id" json:"nodeId"`
	Kind      design.CCKind   `bun:"kind" json:"kind"`
	IDs       []string        `bun:"ids,type:json" json:"ids"`
	FormField *string         `bun:"form_field" json:"formField"`
	Timing    design.CCTiming `bun:"timing" json:"timing"`
}

// Edge is a row of apv_flow_edge: one materialised edge; Key is the designer's edge id and
// SourceHandle the branch id out of a condition node.
type Edge struct {
	bun.BaseModel `bun:"table:apv_flow_edge"`

	ID            string  `bun:"id,pk" json:"id"`
	FlowVersionID string  `bun:"flow_version_id" json:"flowVersionId"`
	Key           *string `bun:"key" json:"key"`
	SourceNodeID  string  `bun:"source_node_id" json:"sourceNodeId"`
	SourceNodeKey string  `bun:"source_node_key" json:"sourceNodeKey"`
	TargetNodeID  string  `bun:"target_node_id" json:"targetNodeId"`
	TargetNodeKey string  `bun:"target_node_key" json:"targetNodeKey"`
	SourceHandle  *string `bun:"source_handle" json:"sourceHandle"`
}

// BusinessBinding is a business-mode flow's BusinessBindingConfig (§6.3): where an instance's
// state is projected in the host's business table.
type BusinessBinding struct {
	TableName        string            `json:"tableName"`
	KeyColumns       []string          `json:"keyColumns"`
	StatusColumn     string            `json:"statusColumn"`
	InstanceIDColumn string            `json:"instanceIdColumn,omitempty"`
	StartedAtColumn  string            `json:"startedAtColumn,omitempty"`
	FinishedAtColumn string            `json:"finishedAtColumn,omitempty"`
	StatusMapping    map[string]string `json:"statusMapping,omitempty"`
}

// Wire values of the enumerations used by part 1 (wire-approval §4).
const (
	BindingStandalone = "standalone"
	BindingBusiness   = "business"

	VersionDraft     = "draft"
	VersionPublished = "published"
	VersionArchived  = "archived"

	StorageJSON  = "json"
	StorageTable = "table"

	InitiatorUser       = "user"
	InitiatorRole       = "role"
	InitiatorDepartment = "department"

	// DefaultTenantID is the tenant of principals that carry no details (the built-in user
	// store) and of flows created without a tenantId.
	DefaultTenantID = "default"
	// SuperAdminRole crosses tenants.
	SuperAdminRole = "approval:super_admin"
	// DefaultTitleTemplate is the instance title template of flows that set none.
	DefaultTitleTemplate = "{{.flowName}}-{{.instanceNo}}"
)
