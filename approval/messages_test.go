package approval_test

import (
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// TestMessages: the module's catalog (with package design's) has the same keys in en and
// zh-CN, and every error template of errors.go has its message in both (the business codes ride
// 200, the definitions' refusals without a code of their own 400/1400).
func TestMessages(t *testing.T) {
	t.Parallel()
	if err := i18n.CheckLanguages(approval.Messages()); err != nil {
		t.Fatal(err)
	}
	errs := []*rpc.Error{approval.ErrFlowNotFound, approval.ErrFlowNotActive, approval.ErrNoPublishedVersion,
		approval.ErrVersionNotDraft, approval.ErrInvalidFlowDesign, approval.ErrFlowCodeExists, approval.ErrVersionNotFound,
		approval.ErrInvalidBusinessIdentifier, approval.ErrInvalidTitleTemplate, approval.ErrInvalidFormDesign,
		approval.ErrBindingIncomplete, approval.ErrInvalidBindingMode, approval.ErrInvalidInitiatorKind,
		approval.ErrInvalidStorageMode, approval.ErrBindingColumnsConflict, approval.ErrBindingUnexpected,
		approval.ErrBindingSchemaInvalid, approval.ErrBindingKeyNotUnique, approval.ErrBindingStatusMappingInvalid,
		approval.ErrInstanceNotFound, approval.ErrInstanceCompleted, approval.ErrNotAllowedInitiate,
		approval.ErrWithdrawNotAllowed, approval.ErrResubmitNotAllowed, approval.ErrInvalidInstanceTransition,
		approval.ErrBusinessRefRequired, approval.ErrBindingTargetBusy, approval.ErrInvalidBusinessRef,
		approval.ErrBindingProjectionNotFound, approval.ErrTaskNotFound, approval.ErrTaskNotPending, approval.ErrNotAssignee,
		approval.ErrInvalidTaskTransition, approval.ErrRollbackNotAllowed, approval.ErrAddAssigneeNotAllowed,
		approval.ErrTransferNotAllowed, approval.ErrOpinionRequired, approval.ErrManualCcNotAllowed,
		approval.ErrRemoveAssigneeNotAllowed, approval.ErrInvalidAddAssigneeType, approval.ErrNotApplicant,
		approval.ErrInvalidRollbackTarget, approval.ErrLastAssigneeRemoval, approval.ErrInvalidTransferTarget,
		approval.ErrNoUsersSpecified, approval.ErrNoAssignee, approval.ErrAssigneeResolveFailed,
		approval.ErrFormValidationFailed, approval.ErrUrgeCooldown, approval.ErrAccessDenied, approval.ErrTerminateNotAllowed,
		approval.ErrFormDataTooLarge, approval.ErrTenantNotResolved, approval.ErrBusinessRefMalformed,
		approval.ErrBusinessRecordUnavailable, approval.ErrTitleTemplateFailed, approval.ErrTableStorageNoFields, approval.ErrTableStorageField}
	badRequests := []*rpc.Error{approval.ErrCategoryParentCycle, approval.ErrCategoryParentNotFound, approval.ErrDelegationWindow,
		approval.ErrDelegationCategoryNotFound, approval.ErrDelegationFlowNotFound, approval.ErrDelegationSelf,
		approval.ErrFlowCategoryNotFound, approval.ErrInvalidLabels}
	for _, lang := range []string{"en", "zh-CN"} {
		c := i18n.MustNew(lang, approval.Messages())
		for _, e := range errs {
			if !c.Has(e.Key) {
				t.Errorf("%s: no message for %s (%d)", lang, e.Key, e.Code)
			}
			if e.Code < 40001 || e.Code > 40702 || e.HTTPStatus() != 200 {
				t.Errorf("%s: code %d status %d", e.Key, e.Code, e.HTTPStatus())
			}
		}
		for _, e := range badRequests {
			if !c.Has(e.Key) || e.Code != rpc.CodeBadRequest || e.HTTPStatus() != 400 {
				t.Errorf("%s: %s code %d status %d, want a message, 1400, 400", lang, e.Key, e.Code, e.HTTPStatus())
			}
		}
	}
}
