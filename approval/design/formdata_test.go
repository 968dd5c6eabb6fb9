package design

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-framework/svc/i18n"
)

// dataFields covers every field kind with the validation rules that apply to it.
func dataFields() []FormField {
	return []FormField{
		{Key: "title", Kind: FieldInput, Label: "Title", IsRequired: true,
			Validation: &ValidationRule{MinLength: intp(2), MaxLength: intp(5), Pattern: "^[a-z]+$", Message: "lowercase letters only"}},
		{Key: "code", Kind: FieldInput, Label: "Code", Validation: &ValidationRule{Pattern: "^(?=x)"}},
		{Key: "note", Kind: FieldTextarea},
		{Key: "day", Kind: FieldDate, Label: "Day"},
		{Key: "amount", Kind: FieldNumber, Label: "Amount", Validation: &ValidationRule{Min: floatp(1), Max: floatp(100)}},
		{Key: "count", Kind: FieldNumber, Label: "Count", ColumnType: ColumnInteger},
		{Key: "level", Kind: FieldSelect, Label: "Level", Options: []Option{{"Low", float64(1)}, {"High", float64(2)}}},
		{Key: "tags", Kind: FieldSelect, Label: "Tags", Options: []Option{{"A", "a"}, {"B", "b"}}},
		{Key: "city", Kind: FieldSelect, Label: "City", OptionSource: &OptionSource{Kind: "remote"}},
		{Key: "files", Kind: FieldUpload, Label: "Files"},
		{Key: "items", Kind: FieldTable, Label: "Items", Validation: &ValidationRule{MinLength: intp(2), MaxLength: intp(3)},
			Columns: []FormField{
				{Key: "name", Kind: FieldInput, Label: "Name", IsRequired: true},
				{Key: "price", Kind: FieldNumber, Label: "Price"},
			}},
	}
}

func validData() map[string]any {
	return map[string]any{
		"title":  "abc",
		"note":   "",
		"day":    "2026-11-24",
		"amount": 12.5,
		"count":  json.Number("3"),
		"level":  2,
		"tags":   []any{"a", "b"},
		"city":   "anything",
		"files":  []any{"f1", "f2"},
		"items":  []any{map[string]any{"name": "pen", "price": 1.5}, map[string]any{"name": "ink"}},
	}
}

func TestValidateFormDataValid(t *testing.T) {
	t.Parallel()
	if err := ValidateFormData(dataFields(), validData(), 0); err != nil {
		t.Fatalf("ValidateFormData(valid) = %v", err)
	}
	// Optional fields may be absent or null; without fields any object under the cap passes.
	if err := ValidateFormData(dataFields(), map[string]any{"title": "ab", "amount": nil, "items": nil}, 0); err != nil {
		t.Errorf("ValidateFormData(minimal) = %v", err)
	}
	cleared := map[string]any{"title": "ab", "level": "", "tags": []any{}, "note": "", "day": "  ", "files": "", "items": []any{}}
	if err := ValidateFormData(dataFields(), cleared, 0); err != nil {
		t.Errorf("ValidateFormData(cleared optional fields) = %v", err)
	}
	if err := ValidateFormData(nil, map[string]any{"free": []any{1, "x"}}, 0); err != nil {
		t.Errorf("ValidateFormData(no fields) = %v", err)
	}
}

func TestValidateFormDataErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		key     string
		value   any
		wantKey string
		path    string
		params  map[string]string
		message string
	}{
		{"unknown key", "extra", 1, KeyNotDefined, "extra", map[string]string{"field": "extra"}, ""},
		{"required missing", "title", nil, KeyRequired, "title", map[string]string{"field": "Title"}, ""},
		{"required blank", "title", "  ", KeyRequired, "title", map[string]string{"field": "Title"}, ""},
		{"string expected", "title", 12, KeyMustBeString, "title", map[string]string{"field": "Title"}, ""},
		{"date must be string", "day", 20261124, KeyMustBeString, "day", map[string]string{"field": "Day"}, ""},
		{"too short", "title", "a", KeyMinLength, "title", map[string]string{"field": "Title", "min": "2"}, ""},
		{"too long in characters", "title", "abcdef", KeyMaxLength, "title", map[string]string{"field": "Title", "max": "5"}, ""},
		{"pattern mismatch uses the message", "title", "ABC", KeyPatternMismatch, "title", map[string]string{"field": "Title", "pattern": "^[a-z]+$"}, "lowercase letters only"},
		{"pattern does not compile", "code", "x1", KeyInvalidValidation, "code", map[string]string{"field": "Code"}, ""},
		{"number expected", "amount", "12", KeyMustBeNumber, "amount", map[string]string{"field": "Amount"}, ""},
		{"integer column", "count", 2.5, KeyMustBeInteger, "count", map[string]string{"field": "Count"}, ""},
		{"below min", "amount", 0.5, KeyMinValue, "amount", map[string]string{"field": "Amount", "min": "1"}, ""},
		{"above max", "amount", 100.01, KeyMaxValue, "amount", map[string]string{"field": "Amount", "max": "100"}, ""},
		{"not an option", "level", 3, KeyInvalidValue, "level", map[string]string{"field": "Level", "value": "3"}, ""},
		{"array item not an option", "tags", []any{"a", "z"}, KeyInvalidValue, "tags", map[string]string{"field": "Tags", "value": "z"}, ""},
		{"select object", "level", map[string]any{"id": 1}, KeyInvalidValue, "level", map[string]string{"field": "Level", "value": `{"id":1}`}, ""},
		{"upload bad item", "files", []any{"f1", 7}, KeyInvalidFileItem, "files", map[string]string{"field": "Files", "index": "2"}, ""},
		{"upload object", "files", map[string]any{"url": "x"}, KeyMustBeFile, "files", map[string]string{"field": "Files"}, ""},
		{"table not a list", "items", "rows", KeyMustBeRowList, "items", map[string]string{"field": "Items"}, ""},
		{"row not an object", "items", []any{"row", map[string]any{"name": "b"}}, KeyMustBeRowObject, "items", map[string]string{"field": "Items", "row": "1"}, ""},
		{"too few rows", "items", []any{map[string]any{"name": "a"}}, KeyMinRows, "items", map[string]string{"field": "Items", "min": "2"}, ""},
		{"too many rows", "items", []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": "c"}, map[string]any{"name": "d"}}, KeyMaxRows, "items", map[string]string{"field": "Items", "max": "3"}, ""},
		{"bad cell", "items", []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "price": "free"}}, KeyTableCell, "items.price", map[string]string{"field": "Items", "row": "2", "column": "Price"}, ""},
		{"unknown column", "items", []any{map[string]any{"name": "a", "color": "red"}, map[string]any{"name": "b"}}, KeyTableCell, "items.color", map[string]string{"field": "Items", "row": "1", "column": "color"}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := validData()
			if tt.value == nil {
				delete(data, tt.key)
			} else {
				data[tt.key] = tt.value
			}
			err := ValidateFormData(dataFields(), data, 0)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v, want a *FieldError", err)
			}
			if fe.Key != tt.wantKey || fe.Path != tt.path || fe.Message != tt.message {
				t.Errorf("error = %q path %q message %q; want %q path %q message %q", fe.Key, fe.Path, fe.Message, tt.wantKey, tt.path, tt.message)
			}
			if diff := cmp.Diff(tt.params, fe.Params); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateFormDataCell(t *testing.T) {
	t.Parallel()
	data := validData()
	data["items"] = []any{map[string]any{"price": 1}, map[string]any{"name": "b"}}
	err := ValidateFormData(dataFields(), data, 0)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Key != KeyTableCell || fe.Cell == nil || fe.Cell.Key != KeyRequired {
		t.Fatalf("error = %v, want table_cell wrapping required", err)
	}
	catalog := i18n.MustNew("en", Messages())
	if got, want := fe.Render(catalog.T), "Items, row 1: Name is required"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if got := strings.Join(fe.Args(catalog.T), "|"); got != "column|Name|field|Items|message|Name is required|row|1" {
		t.Errorf("Args = %s", got)
	}
	zh := i18n.MustNew("zh-CN", Messages())
	if got, want := fe.Render(zh.T), "Items第 1 行：Name为必填项"; got != want {
		t.Errorf("zh-CN Render = %q, want %q", got, want)
	}
	// A literal message (validation.message) wins over the key.
	pattern := &FieldError{Key: KeyPatternMismatch, Params: map[string]string{"field": "Code"}, Message: "letters only"}
	if got := pattern.Render(catalog.T); got != "letters only" {
		t.Errorf("Render(pattern) = %q", got)
	}
}

// TestValidateUploadEmpty: a blank upload is "no value" to ValidateFormData (required → required,
// optional → accepted, as in the original); the empty key guards direct callers.
func TestValidateUploadEmpty(t *testing.T) {
	t.Parallel()
	f := &FormField{Key: "files", Kind: FieldUpload, Label: "Files"}
	for _, v := range []any{" ", []any{}} {
		if e := validateUpload(f, v, "files"); e == nil || e.Key != KeyEmpty {
			t.Errorf("validateUpload(%v) = %v, want %s", v, e, KeyEmpty)
		}
	}
	required := []FormField{{Key: "files", Kind: FieldUpload, Label: "Files", IsRequired: true}}
	var fe *FieldError
	if err := ValidateFormData(required, map[string]any{"files": []any{}}, 0); !errors.As(err, &fe) || fe.Key != KeyRequired {
		t.Errorf("required empty upload = %v, want %s", err, KeyRequired)
	}
}

func TestValidateFormDataSize(t *testing.T) {
	t.Parallel()
	small := map[string]any{"note": "12345"} // {"note":"12345"} = 16 bytes
	if err := ValidateFormData(nil, small, 16); err != nil {
		t.Errorf("16 bytes under a 16-byte cap: %v", err)
	}
	err := ValidateFormData(nil, small, 15)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Key != KeyFormDataTooLarge {
		t.Fatalf("error = %v, want %s", err, KeyFormDataTooLarge)
	}
	if diff := cmp.Diff(map[string]string{"size": "16", "max": "15"}, fe.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	big := map[string]any{"note": strings.Repeat("x", DefaultFormDataMaxBytes)}
	if err := ValidateFormData(nil, big, 0); !errors.As(err, &fe) || fe.Key != KeyFormDataTooLarge {
		t.Errorf("0 cap must mean the 64 KiB default, got %v", err)
	}
}

func TestValidateGrowth(t *testing.T) {
	t.Parallel()
	over := map[string]any{"note": strings.Repeat("x", 40)}
	cases := []struct {
		name   string
		before map[string]any
		after  map[string]any
		refuse bool
	}{
		{"under the cap", nil, map[string]any{"note": "x"}, false},
		{"same size over the cap stays actionable", over, map[string]any{"note": strings.Repeat("y", 40)}, false},
		{"shrinking over the cap is fine", over, map[string]any{"note": strings.Repeat("y", 30)}, false},
		{"growing over the cap is refused", over, map[string]any{"note": strings.Repeat("y", 41)}, true},
		{"new data over the cap is refused", nil, over, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateGrowth(tt.before, tt.after, 20)
			var fe *FieldError
			if tt.refuse != (err != nil) || (err != nil && (!errors.As(err, &fe) || fe.Key != KeyFormDataTooLarge)) {
				t.Errorf("ValidateGrowth = %v, refuse %v", err, tt.refuse)
			}
		})
	}
}

func TestValidateWritable(t *testing.T) {
	t.Parallel()
	fields := dataFields()
	perms := map[string]Permission{"amount": PermEditable, "title": PermRequired, "ghost": PermEditable, "day": PermVisible}
	cases := []struct {
		name      string
		submitted map[string]any
		wantKey   string
	}{
		{"writable values are checked", map[string]any{"amount": 500.0}, KeyMaxValue},
		{"read-only keys are ignored", map[string]any{"day": 5, "count": "x"}, ""},
		{"an empty writable value is left to ValidateRequired", map[string]any{"title": ""}, ""},
		{"a writable key that is no field", map[string]any{"ghost": 1}, KeyNotDefined},
		{"valid", map[string]any{"amount": 50.0, "title": "abc"}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateWritable(fields, tt.submitted, perms)
			var fe *FieldError
			switch {
			case tt.wantKey == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			case tt.wantKey != "" && (!errors.As(err, &fe) || fe.Key != tt.wantKey):
				t.Errorf("error = %v, want %s", err, tt.wantKey)
			}
		})
	}
}

func TestValidateRequired(t *testing.T) {
	t.Parallel()
	fields := testFields()
	perms := map[string]Permission{"reason": PermRequired, "amount": PermEditable}
	err := ValidateRequired(fields, perms, map[string]any{"reason": " ", "amount": 3})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Key != KeyRequired || fe.Path != "reason" || fe.Params["field"] != "Reason" {
		t.Errorf("ValidateRequired = %v, want required on reason", err)
	}
	if err := ValidateRequired(fields, perms, map[string]any{"reason": "ok"}); err != nil {
		t.Errorf("ValidateRequired(filled) = %v", err)
	}
}

// TestMessagesCoverKeys: every field key ValidateFormData can return has a message in both
// catalogs, and the catalogs hold nothing else (approval_form_data_too_large belongs to the
// approval module's catalog, which declares the 40401 sentinel).
func TestMessagesCoverKeys(t *testing.T) {
	t.Parallel()
	keys := []string{KeyNotDefined, KeyRequired, KeyMustBeString, KeyMustBeNumber, KeyMustBeInteger, KeyMinLength,
		KeyMaxLength, KeyInvalidValidation, KeyPatternMismatch, KeyMinValue, KeyMaxValue, KeyEmpty, KeyInvalidFileItem,
		KeyMustBeFile, KeyInvalidValue, KeyMustBeRowList, KeyMustBeRowObject, KeyMinRows, KeyMaxRows, KeyTableCell}
	for _, lang := range []string{"en", "zh-CN"} {
		b, err := fsReadFile(lang + "/approval_design.json")
		if err != nil {
			t.Fatal(err)
		}
		var catalog map[string]string
		if err := json.Unmarshal(b, &catalog); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		for _, k := range keys {
			if catalog[k] == "" {
				t.Errorf("%s: no message for %s", lang, k)
			}
		}
		fieldKeys := 0 // the design rules' texts (approval_design_*) are TestRuleMessages'
		for k := range catalog {
			if strings.HasPrefix(k, "approval_form_field_") {
				fieldKeys++
			}
		}
		if fieldKeys != len(keys) {
			t.Errorf("%s: %d approval_form_field_* messages, want %d", lang, fieldKeys, len(keys))
		}
	}
}

func fsReadFile(name string) ([]byte, error) { return fs.ReadFile(Messages(), name) }
