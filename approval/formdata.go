package approval

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/rpc"
)

// translate renders a message key in the server's language (the cell message of table errors).
func (s *Service) translate(key string, args map[string]string) string {
	if s.i18n == nil {
		return key
	}
	return s.i18n.T(key, args)
}

// ValidateFormData checks form data against a version's fields and the
// svc.approval.form_data_max_bytes cap (start, resubmit; wire-approval §5) and answers a
// failure as the wire error: code 40401 with the approval_form_field_* (or
// approval_form_data_too_large) message and its params; a field's validation.message replaces
// the pattern-mismatch text.
func (s *Service) ValidateFormData(fields []design.FormField, data map[string]any) error {
	return FormDataError(design.ValidateFormData(fields, data, s.cfg.FormDataMaxBytes), s.translate)
}

// ValidateGrowth is the size rule of task decisions: merged data may exceed the cap only when
// the merge did not enlarge it, so an instance whose stored data is already over it stays
// actionable.
func (s *Service) ValidateGrowth(before, after map[string]any) error {
	return FormDataError(design.ValidateGrowth(before, after, s.cfg.FormDataMaxBytes), s.translate)
}

// FormDataError turns a *design.FieldError into its wire error (40401, the error's key and
// params — a table cell's own message rendered with t into "message" —, its literal message when
// it has one); other errors, and nil, are returned as they are.
func FormDataError(err error, t design.Translator) error {
	var fe *design.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	e := rpc.NewError(ErrCodeFormValidationFailed, http.StatusOK, fe.Key).WithArgs(fe.Args(t)...)
	if fe.Message != "" {
		e = e.WithMessage(fe.Message)
	}
	return e.Wrap(err)
}
