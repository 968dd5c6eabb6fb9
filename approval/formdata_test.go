package approval_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestValidateFormData: the module answers form-data failures as 40401 with the design
// package's message keys, rendered from the module's catalog in both languages, honours
// svc.approval.form_data_max_bytes, and lets a field's validation.message replace the
// pattern-mismatch text.
func TestValidateFormData(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Approval.FormDataMaxBytes = 64 }),
		svctest.WithOptions(approvalOption()))
	apv := srv.Approval()
	fields := []design.FormField{
		{Key: "amount", Kind: design.FieldNumber, Label: "Amount", IsRequired: true},
		{Key: "code", Kind: design.FieldInput, Label: "Code", Validation: &design.ValidationRule{Pattern: "^[A-Z]+$", Message: "upper-case letters only"}},
	}
	en := i18n.MustNew("en", approval.Messages())
	zh := i18n.MustNew("zh-CN", approval.Messages())
	for _, tt := range []struct {
		name    string
		data    map[string]any
		wantKey string
		wantMsg string // literal message, when the field sets one
	}{
		{"required", map[string]any{}, "approval_form_field_required", ""},
		{"not a number", map[string]any{"amount": "x"}, "approval_form_field_must_be_number", ""},
		{"unknown field", map[string]any{"amount": 1, "other": 1}, "approval_form_field_not_defined", ""},
		{"pattern message", map[string]any{"amount": 1, "code": "abc"}, "approval_form_field_pattern_mismatch", "upper-case letters only"},
		{"over the cap", map[string]any{"amount": 1, "code": strings.Repeat("A", 80)}, "approval_form_data_too_large", ""},
	} {
		err := apv.ValidateFormData(fields, tt.data)
		var e *rpc.Error
		if !errors.As(err, &e) || e.Code != approval.ErrCodeFormValidationFailed || e.Key != tt.wantKey || e.Message != tt.wantMsg {
			t.Errorf("%s: %v, want 40401 %s %q", tt.name, err, tt.wantKey, tt.wantMsg)
			continue
		}
		for _, c := range []*i18n.Catalog{en, zh} {
			if !c.Has(e.Key) || strings.Contains(c.T(e.Key, e.Args), "{{") {
				t.Errorf("%s: %s renders %q in %s", tt.name, e.Key, c.T(e.Key, e.Args), c.Language())
			}
		}
	}
	if err := apv.ValidateFormData(fields, map[string]any{"amount": 12.5, "code": "OK"}); err != nil {
		t.Errorf("valid data: %v", err)
	}
	before := map[string]any{"amount": 1, "code": strings.Repeat("A", 80)}
	if err := apv.ValidateGrowth(before, before); err != nil {
		t.Errorf("unchanged data over the cap: %v, want accepted", err)
	}
	after := map[string]any{"amount": 1, "code": strings.Repeat("A", 90)}
	if err := apv.ValidateGrowth(before, after); !errors.Is(err, approval.ErrFormDataTooLarge) {
		t.Errorf("grown data over the cap: %v, want ErrFormDataTooLarge", err)
	}
	table := []design.FormField{{Key: "items", Kind: design.FieldTable, Label: "Items",
		Columns: []design.FormField{{Key: "price", Kind: design.FieldNumber, Label: "Price"}}}}
	var e *rpc.Error
	err := apv.ValidateFormData(table, map[string]any{"items": []any{map[string]any{"price": "x"}}})
	if !errors.As(err, &e) || e.Key != "approval_form_field_table_cell" || !strings.Contains(en.T(e.Key, e.Args), "Price") ||
		strings.Contains(e.Args["message"], "approval_form_field") {
		t.Errorf("table cell: %v %v", err, e)
	}
}
