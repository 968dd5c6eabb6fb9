package approval

import (
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/rpc"
)

// ValidateFormData checks form data against a version's fields and the
// svc.approval.form_data_max_bytes cap (start, resubmit; wire-approval §5) and answers a
// failure as the wire error: code 40401 with the approval_form_field_* (or
// approval_form_data_too_large) message and its params; a field's validation.message replaces
// the pattern-mismatch text.
func (s *Service) ValidateFormData(fields []design.FormField, data map[string]any) error {
	return FormDataError(design.ValidateFormData(fields, data, s.cfg.FormDataMaxBytes))
}

// ValidateFormDataGrowth is ValidateFormData for task processing: only growth beyond the cap is
// refused, so an instance whose stored data is already over it stays actionable.
func (s *Service) ValidateFormDataGrowth(fields []design.FormField, before, after map[string]any) error {
	return FormDataError(design.ValidateFormDataGrowth(fields, before, after, s.cfg.FormDataMaxBytes))
}

// FormDataError turns a *design.FieldError into its wire error (40401, the error's key and
// params, its literal message when it has one); other errors, and nil, are returned as they are.
func FormDataError(err error) error {
	var fe *design.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	kv := make([]string, 0, 2*len(fe.Params))
	for _, k := range slices.Sorted(maps.Keys(fe.Params)) {
		kv = append(kv, k, fe.Params[k])
	}
	e := rpc.NewError(ErrCodeFormValidationFailed, http.StatusOK, fe.Key).WithArgs(kv...)
	if fe.Message != "" {
		e = e.WithMessage(fe.Message)
	}
	return e.Wrap(err)
}
