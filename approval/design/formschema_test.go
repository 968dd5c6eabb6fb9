package design

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// expenseForm is a form-editor document in the designer's shape: a pc layout with a section,
// a grid, tabs and a table subform, a mobile layout repeating some keys and adding one, a
// form-level static and remote data source, and non-keyed presentation nodes.
const expenseForm = `{
  "version": 2,
  "dataSources": [
    {"id": "ds-dept", "kind": "static", "name": "departments",
     "options": [{"label": "Sales", "value": "sales"}, {"label": "R&D", "value": 7}]},
    {"id": "ds-proj", "kind": "remote", "name": "projects",
     "request": {"resource": "pm/project", "action": "find_options", "version": "v1", "params": {"active": true}},
     "mapping": {"labelKey": "name", "valueKey": "id"}}
  ],
  "presentations": {
    "pc": {"children": [
      {"id": "n1", "type": "alert-block", "props": {"message": "Fill in every line"}},
      {"id": "n2", "type": "section", "label": "Basics", "children": [
        {"id": "n3", "type": "textfield", "key": "title", "label": "Title", "placeholder": "Short title",
         "validate": {"required": true, "maxLength": 80, "pattern": "^[^<>]*$", "message": "No angle brackets"}},
        {"id": "n4", "type": "grid", "children": [
          {"id": "n5", "type": "number", "key": "amount", "label": "Amount", "precision": 2,
           "validate": {"required": true, "min": 0.01, "max": 100000}},
          {"id": "n6", "type": "number", "key": "days"},
          {"id": "n7", "type": "select", "key": "dept", "label": "Department", "dataSource": {"kind": "ref", "dataSourceId": "ds-dept"}}
        ]}
      ]},
      {"id": "n8", "type": "tabs", "tabs": [
        {"id": "t1", "label": "Details", "children": [
          {"id": "n9", "type": "textarea", "key": "reason", "label": "Reason"},
          {"id": "n10", "type": "date", "key": "day", "label": "Day"},
          {"id": "n11", "type": "datetime", "key": "at", "label": ""}
        ]},
        {"id": "t2", "label": "More", "children": [
          {"id": "n12", "type": "radio", "key": "urgency", "label": "Urgency",
           "dataSource": {"kind": "static", "options": [{"label": "Low", "value": 1}, {"label": "High", "value": 2}]}},
          {"id": "n13", "type": "checkbox-group", "key": "tags", "label": "Tags",
           "dataSource": {"kind": "static", "options": [{"label": "A", "value": "a"}]}},
          {"id": "n14", "type": "select", "key": "project", "label": "Project", "dataSource": {"kind": "ref", "dataSourceId": "ds-proj"}},
          {"id": "n15", "type": "upload", "key": "receipts", "label": "Receipts", "maxCount": 5},
          {"id": "n16", "type": "code-editor", "key": "note", "label": "Note", "columnType": "json"}
        ]}
      ]},
      {"id": "n17", "type": "subform", "variant": "table", "key": "items", "label": "Items", "minRows": 1, "maxRows": 20,
       "template": [
         {"id": "c1", "type": "textfield", "key": "name", "label": "Name", "validate": {"maxLength": 40}},
         {"id": "c2", "type": "flex", "children": [
           {"id": "c3", "type": "number", "key": "price", "label": "Price", "precision": 2},
           {"id": "c4", "type": "select", "key": "unit", "label": "Unit",
            "dataSource": {"kind": "remote", "request": {"resource": "sys/unit", "action": "list"}}}
         ]},
         {"id": "c5", "type": "textfield", "key": "name", "label": "Duplicate column, first wins"},
         {"id": "c6", "type": "divider"}
       ]}
    ]},
    "mobile": {"children": [
      {"id": "m1", "type": "textfield", "key": "title", "label": "Title (mobile)"},
      {"id": "m2", "type": "subform", "variant": "card", "key": "items", "template": [
        {"id": "mc1", "type": "textfield", "key": "name"},
        {"id": "mc2", "type": "number", "key": "price"},
        {"id": "mc3", "type": "select", "key": "unit"}
      ]},
      {"id": "m3", "type": "textfield", "key": "mobileOnly", "label": "Mobile only"}
    ]}
  }
}`

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }

func TestParseFormSchema(t *testing.T) {
	t.Parallel()
	got, err := ParseFormSchema([]byte(expenseForm))
	if err != nil {
		t.Fatalf("ParseFormSchema: %v", err)
	}
	want := []FormField{
		{Key: "title", Kind: FieldInput, Label: "Title", Placeholder: "Short title", IsRequired: true, SortOrder: 0,
			Validation: &ValidationRule{MaxLength: intp(80), Pattern: "^[^<>]*$", Message: "No angle brackets"}, ColumnType: ColumnString},
		{Key: "amount", Kind: FieldNumber, Label: "Amount", IsRequired: true, SortOrder: 1,
			Validation: &ValidationRule{Min: floatp(0.01), Max: floatp(100000)}, ColumnType: ColumnDecimal, Scale: intp(2)},
		{Key: "days", Kind: FieldNumber, Label: "days", SortOrder: 2},
		{Key: "dept", Kind: FieldSelect, Label: "Department", SortOrder: 3, ColumnType: ColumnText,
			Options: []Option{{"Sales", "sales"}, {"R&D", float64(7)}}},
		{Key: "reason", Kind: FieldTextarea, Label: "Reason", SortOrder: 4, ColumnType: ColumnText},
		{Key: "day", Kind: FieldDate, Label: "Day", SortOrder: 5, ColumnType: ColumnDate},
		{Key: "at", Kind: FieldDate, Label: "", SortOrder: 6, ColumnType: ColumnDatetime},
		{Key: "urgency", Kind: FieldSelect, Label: "Urgency", SortOrder: 7, ColumnType: ColumnText,
			Options: []Option{{"Low", float64(1)}, {"High", float64(2)}}},
		{Key: "tags", Kind: FieldSelect, Label: "Tags", SortOrder: 8, ColumnType: ColumnJSON, Options: []Option{{"A", "a"}}},
		{Key: "project", Kind: FieldSelect, Label: "Project", SortOrder: 9, ColumnType: ColumnText,
			OptionSource: &OptionSource{Kind: "remote",
				Request: &RemoteRequest{Resource: "pm/project", Action: "find_options", Version: "v1", Params: map[string]any{"active": true}},
				Mapping: &RemoteMapping{LabelKey: "name", ValueKey: "id"}}},
		{Key: "receipts", Kind: FieldUpload, Label: "Receipts", SortOrder: 10, ColumnType: ColumnJSON},
		{Key: "note", Kind: FieldTextarea, Label: "Note", SortOrder: 11, ColumnType: ColumnJSON},
		{Key: "items", Kind: FieldTable, Label: "Items", IsRequired: true, SortOrder: 12,
			Validation: &ValidationRule{MinLength: intp(1), MaxLength: intp(20)},
			Columns: []FormField{
				{Key: "name", Kind: FieldInput, Label: "Name", SortOrder: 0, Validation: &ValidationRule{MaxLength: intp(40)}, ColumnType: ColumnString},
				{Key: "price", Kind: FieldNumber, Label: "Price", SortOrder: 1, ColumnType: ColumnDecimal, Scale: intp(2)},
				{Key: "unit", Kind: FieldSelect, Label: "Unit", SortOrder: 2, ColumnType: ColumnText,
					OptionSource: &OptionSource{Kind: "remote", Request: &RemoteRequest{Resource: "sys/unit", Action: "list"}}},
			}},
		{Key: "mobileOnly", Kind: FieldInput, Label: "Mobile only", SortOrder: 13, ColumnType: ColumnText},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}

	// The JSON is FormFieldDefinition's: optional members omitted, sortOrder always present.
	b, _ := json.Marshal(got[2])
	if string(b) != `{"key":"days","kind":"number","label":"days","sortOrder":2}` {
		t.Errorf("days JSON = %s", b)
	}
	// A projected list always passes the contract check.
	if err := ValidateFields(got); err != nil {
		t.Errorf("ValidateFields(projection) = %v", err)
	}
}

func TestParseFormSchemaEmpty(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{}`, `{"presentations": {}}`, `{"presentations": {"pc": {"children": []}}}`} {
		got, err := ParseFormSchema([]byte(doc))
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("ParseFormSchema(%s) = %v, %v; want [] and no error", doc, got, err)
		}
	}
}

func TestParseFormSchemaAborts(t *testing.T) {
	t.Parallel()
	pc := func(children string) string {
		return `{"presentations": {"pc": {"children": [` + children + `]}}}`
	}
	cases := []struct {
		name, doc, rule, path string
	}{
		{"malformed", `{"presentations": `, SchemaInvalidJSON, ""},
		{"switch", pc(`{"type": "switch", "key": "flag"}`), SchemaUnmappableFieldType, "flag"},
		{"daterange in a section", pc(`{"type": "section", "children": [{"type": "daterange", "key": "span"}]}`), SchemaUnmappableFieldType, "span"},
		{"unknown widget in tabs", pc(`{"type": "tabs", "tabs": [{"children": [{"type": "rating", "key": "score"}]}]}`), SchemaUnknownFieldType, "score"},
		{"switch column", pc(`{"type": "subform", "key": "items", "template": [{"type": "switch", "key": "ok"}]}`), SchemaUnmappableFieldType, "items.ok"},
		{"nested subform", pc(`{"type": "subform", "key": "items", "template": [{"type": "textfield", "key": "a"}, {"type": "subform", "key": "parts", "template": [{"type": "textfield", "key": "b"}]}]}`), SchemaNestedSubform, "items.parts"},
		{"subform without columns", pc(`{"type": "subform", "key": "items", "template": [{"type": "divider"}]}`), SchemaTableColumnsEmpty, "items"},
		{"remote without request", pc(`{"type": "select", "key": "city", "dataSource": {"kind": "remote"}}`), SchemaRemoteRequest, "city"},
		{"bad pattern", pc(`{"type": "textfield", "key": "code", "validate": {"pattern": "^(?=x)"}}`), SchemaInvalidPattern, "code"},
		{"reversed bounds", pc(`{"type": "number", "key": "n", "validate": {"min": 5, "max": 1}}`), SchemaInvalidBounds, "n"},
		{"kinds differ across devices", `{"presentations": {"pc": {"children": [{"type": "textfield", "key": "amount"}]}, "mobile": {"children": [{"type": "number", "key": "amount"}]}}}`, SchemaKindMismatch, "amount"},
		{"columns differ across devices", `{"presentations": {"pc": {"children": [{"type": "subform", "key": "items", "template": [{"type": "textfield", "key": "a"}]}]}, "mobile": {"children": [{"type": "subform", "key": "items", "template": [{"type": "textfield", "key": "a"}, {"type": "number", "key": "b"}]}]}}}`, SchemaTableMismatch, "items"},
		{"unmappable only on mobile", `{"presentations": {"pc": {"children": [{"type": "textfield", "key": "a"}]}, "mobile": {"children": [{"type": "switch", "key": "a"}]}}}`, SchemaUnmappableFieldType, "a"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseFormSchema([]byte(tt.doc))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error = %v, want a *SchemaError", err)
			}
			if se.Rule != tt.rule || se.Path != tt.path {
				t.Errorf("error = %v, want rule %s at %q", se, tt.rule, tt.path)
			}
		})
	}
}

func TestValidateFields(t *testing.T) {
	t.Parallel()
	table := func(cols ...FormField) FormField {
		return FormField{Key: "t", Kind: FieldTable, Columns: cols}
	}
	cases := []struct {
		name   string
		fields []FormField
		rule   string
	}{
		{"empty key", []FormField{{Kind: FieldInput}}, SchemaEmptyKey},
		{"duplicate key", []FormField{{Key: "a", Kind: FieldInput}, {Key: "a", Kind: FieldNumber}}, SchemaDuplicateKey},
		{"unknown kind", []FormField{{Key: "a", Kind: "slider"}}, SchemaInvalidKind},
		{"unknown column type", []FormField{{Key: "a", Kind: FieldInput, ColumnType: "varchar"}}, SchemaInvalidColumnType},
		{"table without columns", []FormField{table()}, SchemaTableColumnsEmpty},
		{"nested table", []FormField{table(FormField{Key: "x", Kind: FieldTable, Columns: []FormField{{Key: "y", Kind: FieldInput}}})}, SchemaNestedSubform},
		{"duplicate column", []FormField{table(FormField{Key: "x", Kind: FieldInput}, FormField{Key: "x", Kind: FieldInput})}, SchemaDuplicateKey},
		{"columns on a scalar", []FormField{{Key: "a", Kind: FieldInput, Columns: []FormField{{Key: "x", Kind: FieldInput}}}}, SchemaColumnsOnScalar},
		{"negative length", []FormField{{Key: "a", Kind: FieldInput, Validation: &ValidationRule{MinLength: intp(-1)}}}, SchemaInvalidBounds},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var se *SchemaError
			if err := ValidateFields(tt.fields); !errors.As(err, &se) || se.Rule != tt.rule {
				t.Errorf("ValidateFields = %v, want rule %s", err, tt.rule)
			}
		})
	}
	if err := ValidateFields(testFields()); err != nil {
		t.Errorf("ValidateFields(valid) = %v", err)
	}
}
