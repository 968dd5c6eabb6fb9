package approval

import (
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the approval module (wire-approval §13); every one answers HTTP 200 (business
// errors ride 200). 40015 is retired and never reused.
const (
	ErrCodeFlowNotFound                = 40001
	ErrCodeFlowNotActive               = 40002
	ErrCodeNoPublishedVersion          = 40003
	ErrCodeVersionNotDraft             = 40004
	ErrCodeInvalidFlowDesign           = 40005
	ErrCodeFlowCodeExists              = 40006
	ErrCodeVersionNotFound             = 40007
	ErrCodeInvalidBusinessIdentifier   = 40008
	ErrCodeInvalidTitleTemplate        = 40009
	ErrCodeInvalidFormDesign           = 40010
	ErrCodeBindingIncomplete           = 40011
	ErrCodeInvalidBindingMode          = 40012
	ErrCodeInvalidInitiatorKind        = 40013
	ErrCodeInvalidStorageMode          = 40014
	ErrCodeBindingColumnsConflict      = 40016
	ErrCodeBindingUnexpected           = 40017
	ErrCodeBindingSchemaInvalid        = 40018
	ErrCodeBindingKeyNotUnique         = 40019
	ErrCodeBindingStatusMappingInvalid = 40020
	ErrCodeInstanceNotFound            = 40101
	ErrCodeInstanceCompleted           = 40102
	ErrCodeNotAllowedInitiate          = 40103
	ErrCodeWithdrawNotAllowed          = 40104
	ErrCodeResubmitNotAllowed          = 40105
	ErrCodeInvalidInstanceTransition   = 40106
	ErrCodeBusinessRefRequired         = 40107
	ErrCodeBindingTargetBusy           = 40108
	ErrCodeInvalidBusinessRef          = 40109
	ErrCodeBindingProjectionNotFound   = 40110
	ErrCodeTaskNotFound                = 40201
	ErrCodeTaskNotPending              = 40202
	ErrCodeNotAssignee                 = 40203
	ErrCodeInvalidTaskTransition       = 40204
	ErrCodeRollbackNotAllowed          = 40205
	ErrCodeAddAssigneeNotAllowed       = 40206
	ErrCodeTransferNotAllowed          = 40207
	ErrCodeOpinionRequired             = 40208
	ErrCodeManualCcNotAllowed          = 40209
	ErrCodeRemoveAssigneeNotAllowed    = 40210
	ErrCodeInvalidAddAssigneeType      = 40211
	ErrCodeNotApplicant                = 40212
	ErrCodeInvalidRollbackTarget       = 40213
	ErrCodeLastAssigneeRemoval         = 40214
	ErrCodeInvalidTransferTarget       = 40215
	ErrCodeNoUsersSpecified            = 40216
	ErrCodeNoAssignee                  = 40301
	ErrCodeAssigneeResolveFailed       = 40302
	ErrCodeFormValidationFailed        = 40401
	ErrCodeUrgeCooldown                = 40601
	ErrCodeAccessDenied                = 40701
	ErrCodeTerminateNotAllowed         = 40702
)

// Error templates of the approval module (wire-approval §13), message keys approval_*. Templates
// with a {{detail}} placeholder are derived with Detail; compare with errors.Is.
var (
	// ErrFlowNotFound: The flow does not exist (40001).
	ErrFlowNotFound = rpc.NewError(ErrCodeFlowNotFound, http.StatusOK, "approval_flow_not_found")
	// ErrFlowNotActive: The flow is not active (40002).
	ErrFlowNotActive = rpc.NewError(ErrCodeFlowNotActive, http.StatusOK, "approval_flow_not_active")
	// ErrNoPublishedVersion: The flow has no published version (40003).
	ErrNoPublishedVersion = rpc.NewError(ErrCodeNoPublishedVersion, http.StatusOK, "approval_no_published_version")
	// ErrVersionNotDraft: Only a draft version can be published (40004).
	ErrVersionNotDraft = rpc.NewError(ErrCodeVersionNotDraft, http.StatusOK, "approval_version_not_draft")
	// ErrInvalidFlowDesign: Invalid flow design: … (40005).
	ErrInvalidFlowDesign = rpc.NewError(ErrCodeInvalidFlowDesign, http.StatusOK, "approval_invalid_flow_design")
	// ErrFlowCodeExists: A flow with this code already exists (40006).
	ErrFlowCodeExists = rpc.NewError(ErrCodeFlowCodeExists, http.StatusOK, "approval_flow_code_exists")
	// ErrVersionNotFound: The flow version does not exist (40007).
	ErrVersionNotFound = rpc.NewError(ErrCodeVersionNotFound, http.StatusOK, "approval_version_not_found")
	// ErrInvalidBusinessIdentifier: Invalid identifier: … (40008).
	ErrInvalidBusinessIdentifier = rpc.NewError(ErrCodeInvalidBusinessIdentifier, http.StatusOK, "approval_invalid_business_identifier")
	// ErrInvalidTitleTemplate: Invalid instance title template: … (40009).
	ErrInvalidTitleTemplate = rpc.NewError(ErrCodeInvalidTitleTemplate, http.StatusOK, "approval_invalid_title_template")
	// ErrInvalidFormDesign: Invalid form design: … (40010).
	ErrInvalidFormDesign = rpc.NewError(ErrCodeInvalidFormDesign, http.StatusOK, "approval_invalid_form_design")
	// ErrBindingIncomplete: The business binding is incomplete: … (40011).
	ErrBindingIncomplete = rpc.NewError(ErrCodeBindingIncomplete, http.StatusOK, "approval_binding_incomplete")
	// ErrInvalidBindingMode: The binding mode must be standalone or business (40012).
	ErrInvalidBindingMode = rpc.NewError(ErrCodeInvalidBindingMode, http.StatusOK, "approval_invalid_binding_mode")
	// ErrInvalidInitiatorKind: Invalid initiator kind: … (40013).
	ErrInvalidInitiatorKind = rpc.NewError(ErrCodeInvalidInitiatorKind, http.StatusOK, "approval_invalid_initiator_kind")
	// ErrInvalidStorageMode: The storage mode must be json or table (40014).
	ErrInvalidStorageMode = rpc.NewError(ErrCodeInvalidStorageMode, http.StatusOK, "approval_invalid_storage_mode")
	// ErrBindingColumnsConflict: Business binding columns conflict: … (40016).
	ErrBindingColumnsConflict = rpc.NewError(ErrCodeBindingColumnsConflict, http.StatusOK, "approval_binding_columns_conflict")
	// ErrBindingUnexpected: A standalone flow takes no business binding (40017).
	ErrBindingUnexpected = rpc.NewError(ErrCodeBindingUnexpected, http.StatusOK, "approval_binding_unexpected")
	// ErrBindingSchemaInvalid: The business binding does not match the database: … (40018).
	ErrBindingSchemaInvalid = rpc.NewError(ErrCodeBindingSchemaInvalid, http.StatusOK, "approval_binding_schema_invalid")
	// ErrBindingKeyNotUnique: The key columns are not a complete primary or unique key: … (40019).
	ErrBindingKeyNotUnique = rpc.NewError(ErrCodeBindingKeyNotUnique, http.StatusOK, "approval_binding_key_not_unique")
	// ErrBindingStatusMappingInvalid: Invalid status mapping: … (40020).
	ErrBindingStatusMappingInvalid = rpc.NewError(ErrCodeBindingStatusMappingInvalid, http.StatusOK, "approval_binding_status_mapping_invalid")
	// ErrInstanceNotFound: The approval instance does not exist (40101).
	ErrInstanceNotFound = rpc.NewError(ErrCodeInstanceNotFound, http.StatusOK, "approval_instance_not_found")
	// ErrInstanceCompleted: The approval instance is already completed (40102).
	ErrInstanceCompleted = rpc.NewError(ErrCodeInstanceCompleted, http.StatusOK, "approval_instance_completed")
	// ErrNotAllowedInitiate: You may not start this flow (40103).
	ErrNotAllowedInitiate = rpc.NewError(ErrCodeNotAllowedInitiate, http.StatusOK, "approval_not_allowed_initiate")
	// ErrWithdrawNotAllowed: The instance cannot be withdrawn (40104).
	ErrWithdrawNotAllowed = rpc.NewError(ErrCodeWithdrawNotAllowed, http.StatusOK, "approval_withdraw_not_allowed")
	// ErrResubmitNotAllowed: The instance cannot be resubmitted (40105).
	ErrResubmitNotAllowed = rpc.NewError(ErrCodeResubmitNotAllowed, http.StatusOK, "approval_resubmit_not_allowed")
	// ErrInvalidInstanceTransition: Invalid instance state transition (40106).
	ErrInvalidInstanceTransition = rpc.NewError(ErrCodeInvalidInstanceTransition, http.StatusOK, "approval_invalid_instance_transition")
	// ErrBusinessRefRequired: A business reference is required (40107).
	ErrBusinessRefRequired = rpc.NewError(ErrCodeBusinessRefRequired, http.StatusOK, "approval_business_ref_required")
	// ErrBindingTargetBusy: The business record is owned by a running approval (40108).
	ErrBindingTargetBusy = rpc.NewError(ErrCodeBindingTargetBusy, http.StatusOK, "approval_binding_target_busy")
	// ErrInvalidBusinessRef: Invalid business reference (40109).
	ErrInvalidBusinessRef = rpc.NewError(ErrCodeInvalidBusinessRef, http.StatusOK, "approval_invalid_business_ref")
	// ErrBindingProjectionNotFound: The business projection does not exist (40110).
	ErrBindingProjectionNotFound = rpc.NewError(ErrCodeBindingProjectionNotFound, http.StatusOK, "approval_binding_projection_not_found")
	// ErrTaskNotFound: The task does not exist (40201).
	ErrTaskNotFound = rpc.NewError(ErrCodeTaskNotFound, http.StatusOK, "approval_task_not_found")
	// ErrTaskNotPending: The task is not pending (40202).
	ErrTaskNotPending = rpc.NewError(ErrCodeTaskNotPending, http.StatusOK, "approval_task_not_pending")
	// ErrNotAssignee: You are not the assignee of this task (40203).
	ErrNotAssignee = rpc.NewError(ErrCodeNotAssignee, http.StatusOK, "approval_not_assignee")
	// ErrInvalidTaskTransition: Invalid task state transition (40204).
	ErrInvalidTaskTransition = rpc.NewError(ErrCodeInvalidTaskTransition, http.StatusOK, "approval_invalid_task_transition")
	// ErrRollbackNotAllowed: Rollback is not allowed at this node (40205).
	ErrRollbackNotAllowed = rpc.NewError(ErrCodeRollbackNotAllowed, http.StatusOK, "approval_rollback_not_allowed")
	// ErrAddAssigneeNotAllowed: Adding assignees is not allowed at this node (40206).
	ErrAddAssigneeNotAllowed = rpc.NewError(ErrCodeAddAssigneeNotAllowed, http.StatusOK, "approval_add_assignee_not_allowed")
	// ErrTransferNotAllowed: Transfer is not allowed at this node (40207).
	ErrTransferNotAllowed = rpc.NewError(ErrCodeTransferNotAllowed, http.StatusOK, "approval_transfer_not_allowed")
	// ErrOpinionRequired: An opinion is required (40208).
	ErrOpinionRequired = rpc.NewError(ErrCodeOpinionRequired, http.StatusOK, "approval_opinion_required")
	// ErrManualCcNotAllowed: Manual carbon copies are not allowed at this node (40209).
	ErrManualCcNotAllowed = rpc.NewError(ErrCodeManualCcNotAllowed, http.StatusOK, "approval_manual_cc_not_allowed")
	// ErrRemoveAssigneeNotAllowed: Removing assignees is not allowed at this node (40210).
	ErrRemoveAssigneeNotAllowed = rpc.NewError(ErrCodeRemoveAssigneeNotAllowed, http.StatusOK, "approval_remove_assignee_not_allowed")
	// ErrInvalidAddAssigneeType: This add-assignee type is not allowed (40211).
	ErrInvalidAddAssigneeType = rpc.NewError(ErrCodeInvalidAddAssigneeType, http.StatusOK, "approval_invalid_add_assignee_type")
	// ErrNotApplicant: Only the applicant may do this (40212).
	ErrNotApplicant = rpc.NewError(ErrCodeNotApplicant, http.StatusOK, "approval_not_applicant")
	// ErrInvalidRollbackTarget: Invalid rollback target (40213).
	ErrInvalidRollbackTarget = rpc.NewError(ErrCodeInvalidRollbackTarget, http.StatusOK, "approval_invalid_rollback_target")
	// ErrLastAssigneeRemoval: The last assignee cannot be removed (40214).
	ErrLastAssigneeRemoval = rpc.NewError(ErrCodeLastAssigneeRemoval, http.StatusOK, "approval_last_assignee_removal")
	// ErrInvalidTransferTarget: Invalid transfer target (40215).
	ErrInvalidTransferTarget = rpc.NewError(ErrCodeInvalidTransferTarget, http.StatusOK, "approval_invalid_transfer_target")
	// ErrNoUsersSpecified: No users specified (40216).
	ErrNoUsersSpecified = rpc.NewError(ErrCodeNoUsersSpecified, http.StatusOK, "approval_no_users_specified")
	// ErrNoAssignee: No assignee could be resolved (40301).
	ErrNoAssignee = rpc.NewError(ErrCodeNoAssignee, http.StatusOK, "approval_no_assignee")
	// ErrAssigneeResolveFailed: Resolving the assignees failed (40302).
	ErrAssigneeResolveFailed = rpc.NewError(ErrCodeAssigneeResolveFailed, http.StatusOK, "approval_assignee_resolve_failed")
	// ErrFormValidationFailed: Form validation failed (40401).
	ErrFormValidationFailed = rpc.NewError(ErrCodeFormValidationFailed, http.StatusOK, "approval_form_validation_failed")
	// ErrUrgeCooldown: Urged too often: wait … minutes (40601).
	ErrUrgeCooldown = rpc.NewError(ErrCodeUrgeCooldown, http.StatusOK, "approval_urge_too_frequent")
	// ErrAccessDenied: Access denied (40701).
	ErrAccessDenied = rpc.NewError(ErrCodeAccessDenied, http.StatusOK, "approval_access_denied")
	// ErrTerminateNotAllowed: The instance cannot be terminated (40702).
	ErrTerminateNotAllowed = rpc.NewError(ErrCodeTerminateNotAllowed, http.StatusOK, "approval_terminate_not_allowed")
	// ErrFormDataTooLarge: the JSON-encoded form data exceeds svc.approval.form_data_max_bytes (40401).
	ErrFormDataTooLarge = rpc.NewError(ErrCodeFormValidationFailed, http.StatusOK, "approval_form_data_too_large")
	// ErrBusinessRefMalformed: a composite key's businessRef is not a JSON object of exactly the
	// key columns with string or number values (40109; which column is logged, never sent).
	ErrBusinessRefMalformed = rpc.NewError(ErrCodeInvalidBusinessRef, http.StatusOK, "approval_business_ref_malformed")
	// ErrBusinessRecordUnavailable: a synchronous binding's write matched no row — the host's
	// record is missing or its instance column names another instance (40109; the table, key and
	// column are logged with the request id, never sent).
	ErrBusinessRecordUnavailable = rpc.NewError(ErrCodeInvalidBusinessRef, http.StatusOK, "approval_business_record_unavailable")
	// ErrTitleTemplateFailed: the published version's title template does not render at start
	// (40009; the template's error is logged, the applicant reads the catalogue's sentence).
	ErrTitleTemplateFailed = rpc.NewError(ErrCodeInvalidTitleTemplate, http.StatusOK, "approval_title_template_failed")
	// ErrTenantNotResolved: the principal carries details without a tenant (403/1005 would hide the
	// cause; the original fails the request with its internal error, we answer 40701).
	ErrTenantNotResolved = rpc.NewError(ErrCodeAccessDenied, http.StatusOK, "approval_tenant_not_resolved")
)

// Answers 400/1400 of the definitions (the original has no code for them; docs/approval.md
// "Compatibility choices"): each a message of the catalogue.
var (
	// ErrCategoryParentCycle: parentId would make the category its own ancestor.
	ErrCategoryParentCycle = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_category_parent_cycle")
	// ErrCategoryParentNotFound: parentId names no category of the tenant.
	ErrCategoryParentNotFound = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_category_parent_not_found")
	// ErrDelegationWindow: startsAt is not before endsAt.
	ErrDelegationWindow = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_delegation_window_invalid")
	// ErrDelegationCategoryNotFound: flowCategoryId names no category the caller sees.
	ErrDelegationCategoryNotFound = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_delegation_category_not_found")
	// ErrDelegationFlowNotFound: flowId names no flow the caller sees.
	ErrDelegationFlowNotFound = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_delegation_flow_not_found")
	// ErrDelegationSelf: delegateeId equals delegatorId.
	ErrDelegationSelf = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_delegation_self")
	// ErrFlowCategoryNotFound: categoryId names no category of the flow's tenant.
	ErrFlowCategoryNotFound = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_flow_category_not_found")
	// ErrInvalidLabels: a label breaks the shared labels rule (crud.LabelProblem; which one is
	// logged).
	ErrInvalidLabels = rpc.NewError(rpc.CodeBadRequest, http.StatusBadRequest, "approval_invalid_labels")
)

// Table storage refusals (40014 with their own messages): no form fields, or a field whose key
// cannot name a column or table ({{field}}: the designer's key).
var (
	// ErrTableStorageNoFields: table storage needs a form document with fields.
	ErrTableStorageNoFields = rpc.NewError(ErrCodeInvalidStorageMode, http.StatusOK, "approval_table_storage_no_fields")
	// ErrTableStorageField: field {{field}} cannot be stored in a table.
	ErrTableStorageField = rpc.NewError(ErrCodeInvalidStorageMode, http.StatusOK, "approval_table_storage_field")
)

// Detail derives the error e with its {{detail}} placeholder filled.
func Detail(e *rpc.Error, detail string) *rpc.Error {
	return e.WithArgs("detail", detail)
}
