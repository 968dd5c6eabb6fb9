package approval

import (
	"encoding/json"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// Instance is a row of apv_instance: one running request pinned to a flow version (wire-approval
// §6.4 Instance JSON, the answer of start).
type Instance struct {
	bun.BaseModel `bun:"table:apv_instance"`
	crud.Audited

	TenantID                string         `bun:"tenant_id" json:"tenantId"`
	FlowID                  string         `bun:"flow_id" json:"flowId"`
	FlowCode                string         `bun:"flow_code" json:"flowCode"`
	FlowVersionID           string         `bun:"flow_version_id" json:"flowVersionId"`
	Title                   string         `bun:"title" json:"title"`
	InstanceNo              string         `bun:"instance_no" json:"instanceNo"`
	ApplicantID             string         `bun:"applicant_id" json:"applicantId"`
	ApplicantName           string         `bun:"applicant_name" json:"applicantName"`
	ApplicantDepartmentID   *string        `bun:"applicant_department_id" json:"applicantDepartmentId"`
	ApplicantDepartmentName *string        `bun:"applicant_department_name" json:"applicantDepartmentName"`
	Status                  string         `bun:"status" json:"status"`
	CurrentNodeID           *string        `bun:"current_node_id" json:"currentNodeId"`
	FinishedAt              crud.Time      `bun:"finished_at,nullzero" json:"finishedAt"`
	BusinessRef             *string        `bun:"business_ref" json:"businessRef"`
	FormData                map[string]any `bun:"form_data,type:json,nullzero" json:"formData"`
	Globals                 map[string]any `bun:"globals,type:json,nullzero" json:"globals"`
	BusinessProjectionID    *string        `bun:"business_projection_id" json:"businessProjectionId,omitempty"`
}

// Visit is a row of apv_node_visit: one traversal of a node by an instance; re-entry after a
// rollback or resubmit is a new visit with the next sequence.
type Visit struct {
	bun.BaseModel `bun:"table:apv_node_visit"`

	ID         string    `bun:"id,pk" json:"id"`
	CreatedAt  crud.Time `bun:"created_at" json:"createdAt"`
	CreatedBy  string    `bun:"created_by" json:"createdBy"`
	TenantID   string    `bun:"tenant_id" json:"tenantId"`
	InstanceID string    `bun:"instance_id" json:"instanceId"`
	NodeID     string    `bun:"node_id" json:"nodeId"`
	Sequence   int       `bun:"sequence" json:"sequence"`
	Status     string    `bun:"status" json:"status"`
	FinishedAt crud.Time `bun:"finished_at,nullzero" json:"finishedAt"`
}

// Task is a row of apv_task: one assignee's work item at a node visit.
type Task struct {
	bun.BaseModel `bun:"table:apv_task"`
	crud.Audited

	TenantID                string                  `bun:"tenant_id" json:"tenantId"`
	InstanceID              string                  `bun:"instance_id" json:"instanceId"`
	NodeID                  string                  `bun:"node_id" json:"nodeId"`
	VisitID                 string                  `bun:"visit_id" json:"visitId"`
	AssigneeID              string                  `bun:"assignee_id" json:"assigneeId"`
	AssigneeName            string                  `bun:"assignee_name" json:"assigneeName"`
	AssigneeDepartmentID    *string                 `bun:"assignee_department_id" json:"assigneeDepartmentId"`
	AssigneeDepartmentName  *string                 `bun:"assignee_department_name" json:"assigneeDepartmentName"`
	DelegatorID             *string                 `bun:"delegator_id" json:"delegatorId"`
	DelegatorName           *string                 `bun:"delegator_name" json:"delegatorName"`
	DelegatorDepartmentID   *string                 `bun:"delegator_department_id" json:"delegatorDepartmentId"`
	DelegatorDepartmentName *string                 `bun:"delegator_department_name" json:"delegatorDepartmentName"`
	SortOrder               int                     `bun:"sort_order" json:"sortOrder"`
	Status                  string                  `bun:"status" json:"status"`
	ReadAt                  crud.Time               `bun:"read_at,nullzero" json:"readAt"`
	ParentTaskID            *string                 `bun:"parent_task_id" json:"parentTaskId"`
	AddAssigneeType         *design.AddAssigneeType `bun:"add_assignee_type" json:"addAssigneeType"`
	Deadline                crud.Time               `bun:"deadline,nullzero" json:"deadline"`
	IsTimeout               bool                    `bun:"is_timeout" json:"isTimeout"`
	IsPreWarningSent        bool                    `bun:"is_pre_warning_sent" json:"isPreWarningSent"`
	FinishedAt              crud.Time               `bun:"finished_at,nullzero" json:"finishedAt"`
}

// ActionLog is a row of apv_action_log: the audit of one action with the operator's snapshot.
type ActionLog struct {
	bun.BaseModel `bun:"table:apv_action_log"`

	ID         string    `bun:"id,pk" json:"id"`
	CreatedAt  crud.Time `bun:"created_at" json:"createdAt"`
	CreatedBy  string    `bun:"created_by" json:"createdBy"`
	InstanceID string    `bun:"instance_id" json:"instanceId"`
	// Seq orders the instance's history: the next of the instance, assigned under its lock (no
	// node's clock skews it; 0 for rows written before the column). Not on the wire.
	Seq                    int64                   `bun:"seq" json:"-"`
	NodeID                 *string                 `bun:"node_id" json:"nodeId"`
	TaskID                 *string                 `bun:"task_id" json:"taskId"`
	Action                 string                  `bun:"action" json:"action"`
	OperatorID             string                  `bun:"operator_id" json:"operatorId"`
	OperatorName           string                  `bun:"operator_name" json:"operatorName"`
	OperatorDepartmentID   *string                 `bun:"operator_department_id" json:"operatorDepartmentId"`
	OperatorDepartmentName *string                 `bun:"operator_department_name" json:"operatorDepartmentName"`
	Opinion                *string                 `bun:"opinion" json:"opinion"`
	Meta                   json.RawMessage         `bun:"meta,type:json,nullzero" json:"meta,omitempty"`
	TransferToID           *string                 `bun:"transfer_to_id" json:"transferToId"`
	TransferToName         *string                 `bun:"transfer_to_name" json:"transferToName"`
	TransferToDeptID       *string                 `bun:"transfer_to_department_id" json:"transferToDepartmentId"`
	TransferToDeptName     *string                 `bun:"transfer_to_department_name" json:"transferToDepartmentName"`
	RollbackToNodeID       *string                 `bun:"rollback_to_node_id" json:"rollbackToNodeId"`
	AddAssigneeType        *design.AddAssigneeType `bun:"add_assignee_type" json:"addAssigneeType"`
	AddedAssignees         []UserInfo              `bun:"added_assignees,type:json" json:"addedAssignees"`
	RemovedAssignees       []UserInfo              `bun:"removed_assignees,type:json" json:"removedAssignees"`
	CCUsers                []UserInfo              `bun:"cc_users,type:json" json:"ccUsers"`
	Attachments            []string                `bun:"attachments,type:json,nullzero" json:"attachments,omitempty"`
}

// CCRecord is a row of apv_cc_record: a carbon copy delivered to a user, with its read receipt.
type CCRecord struct {
	bun.BaseModel `bun:"table:apv_cc_record"`

	ID                   string    `bun:"id,pk" json:"id"`
	CreatedAt            crud.Time `bun:"created_at" json:"createdAt"`
	CreatedBy            string    `bun:"created_by" json:"createdBy"`
	InstanceID           string    `bun:"instance_id" json:"instanceId"`
	NodeID               *string   `bun:"node_id" json:"nodeId"`
	VisitID              *string   `bun:"visit_id" json:"visitId"`
	TaskID               *string   `bun:"task_id" json:"taskId"`
	CCUserID             string    `bun:"cc_user_id" json:"ccUserId"`
	CCUserName           string    `bun:"cc_user_name" json:"ccUserName"`
	CCUserDepartmentID   *string   `bun:"cc_user_department_id" json:"ccUserDepartmentId"`
	CCUserDepartmentName *string   `bun:"cc_user_department_name" json:"ccUserDepartmentName"`
	IsManual             bool      `bun:"is_manual" json:"isManual"`
	ReadAt               crud.Time `bun:"read_at,nullzero" json:"readAt"`
}

// FormSnapshot is a row of apv_form_snapshot: the form data as it was when a task node was
// entered (rollback with the keep strategy restores it).
type FormSnapshot struct {
	bun.BaseModel `bun:"table:apv_form_snapshot"`

	ID         string    `bun:"id,pk" json:"id"`
	CreatedAt  crud.Time `bun:"created_at" json:"createdAt"`
	CreatedBy  string    `bun:"created_by" json:"createdBy"`
	InstanceID string    `bun:"instance_id" json:"instanceId"`
	NodeID     string    `bun:"node_id" json:"nodeId"`
	// Seq is the sequence of the visit that took the snapshot: a rollback restores the one of
	// the highest (no node's clock decides). Not on the wire.
	Seq      int64          `bun:"seq" json:"-"`
	FormData map[string]any `bun:"form_data,type:json" json:"formData"`
}

// UrgeRecord is a row of apv_urge_record: one reminder of a pending task.
type UrgeRecord struct {
	bun.BaseModel `bun:"table:apv_urge_record"`

	ID             string    `bun:"id,pk" json:"id"`
	CreatedAt      crud.Time `bun:"created_at" json:"createdAt"`
	CreatedBy      string    `bun:"created_by" json:"createdBy"`
	InstanceID     string    `bun:"instance_id" json:"instanceId"`
	NodeID         string    `bun:"node_id" json:"nodeId"`
	TaskID         *string   `bun:"task_id" json:"taskId"`
	UrgerID        string    `bun:"urger_id" json:"urgerId"`
	UrgerName      *string   `bun:"urger_name" json:"urgerName"`
	TargetUserID   string    `bun:"target_user_id" json:"targetUserId"`
	TargetUserName *string   `bun:"target_user_name" json:"targetUserName"`
	Message        string    `bun:"message" json:"message"`
}

// Wire values of the runtime enumerations (wire-approval §4).
const (
	InstanceRunning    = "running"
	InstanceApproved   = "approved"
	InstanceRejected   = "rejected"
	InstanceWithdrawn  = "withdrawn"
	InstanceReturned   = "returned"
	InstanceTerminated = "terminated"

	TaskWaiting     = "waiting"
	TaskPending     = "pending"
	TaskApproved    = "approved"
	TaskRejected    = "rejected"
	TaskHandled     = "handled"
	TaskTransferred = "transferred"
	TaskRolledBack  = "rolled_back"
	TaskCanceled    = "canceled"
	TaskRemoved     = "removed"
	TaskSkipped     = "skipped"

	VisitActive   = "active"
	VisitPassed   = "passed"
	VisitRejected = "rejected"
	VisitReturned = "returned"
	VisitCanceled = "canceled"

	ActionSubmit    = "submit"
	ActionApprove   = "approve"
	ActionHandle    = "handle"
	ActionReject    = "reject"
	ActionTransfer  = "transfer"
	ActionWithdraw  = "withdraw"
	ActionRollback  = "rollback"
	ActionResubmit  = "resubmit"
	ActionExecute   = "execute"
	ActionAddCC     = "add_cc"
	ActionTerminate = "terminate"
)

// assignee is t's assignee as recorded on the task.
func (t *Task) assignee() UserInfo {
	return UserInfo{ID: t.AssigneeID, Name: t.AssigneeName, DepartmentID: deref(t.AssigneeDepartmentID),
		DepartmentName: deref(t.AssigneeDepartmentName)}
}

// event is the instance part of every engine event's payload, as of now.
func (i *Instance) event(now time.Time) InstanceEvent {
	return InstanceEvent{InstanceID: i.ID, InstanceNo: i.InstanceNo, TenantID: i.TenantID, Title: i.Title, FlowID: i.FlowID,
		FlowCode: i.FlowCode, BusinessRef: i.BusinessRef, OccurredTime: now, Applicant: i.applicant()}
}

// applicant is i's applicant as recorded on the instance.
func (i *Instance) applicant() UserInfo {
	return UserInfo{ID: i.ApplicantID, Name: i.ApplicantName, DepartmentID: deref(i.ApplicantDepartmentID),
		DepartmentName: deref(i.ApplicantDepartmentName)}
}

// setTransferTo records u as l's transfer or reassign target.
func (l *ActionLog) setTransferTo(u UserInfo) {
	l.TransferToID, l.TransferToName = &u.ID, &u.Name
	l.TransferToDeptID, l.TransferToDeptName = optional(u.DepartmentID), optional(u.DepartmentName)
}

// transferTo is l's transfer or reassign target (nil: none).
func (l *ActionLog) transferTo() *UserInfo {
	if l.TransferToID == nil {
		return nil
	}
	return &UserInfo{ID: *l.TransferToID, Name: deref(l.TransferToName), DepartmentID: deref(l.TransferToDeptID),
		DepartmentName: deref(l.TransferToDeptName)}
}

// LiveTaskStatuses and OpenInstanceStatuses are the statuses Stats counts.
var (
	LiveTaskStatuses     = []string{TaskPending, TaskWaiting}
	OpenInstanceStatuses = []string{InstanceRunning, InstanceReturned}
)
