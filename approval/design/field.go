package design

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// FormField is one entry of a version's formFields, JSON exactly as wire-approval §5's
// FormFieldDefinition. A table field lists its row shape in Columns (single level).
//
// OptionSource is an addition of the newest upstream parser: a select whose options come from
// a remote data source carries that source's request descriptor instead of Options, so a
// client can replay it to label a stored value. Such a field accepts any submitted value.
type FormField struct {
	Key          string          `json:"key"`
	Kind         FieldKind       `json:"kind"`
	Label        string          `json:"label"`
	Placeholder  string          `json:"placeholder,omitempty"`
	DefaultValue any             `json:"defaultValue,omitempty"`
	IsRequired   bool            `json:"isRequired,omitempty"`
	Options      []Option        `json:"options,omitempty"`
	OptionSource *OptionSource   `json:"optionSource,omitempty"`
	Validation   *ValidationRule `json:"validation,omitempty"`
	Props        map[string]any  `json:"props,omitempty"`
	SortOrder    int             `json:"sortOrder"`
	ColumnType   ColumnType      `json:"columnType,omitempty"`
	Scale        *int            `json:"scale,omitempty"`
	Columns      []FormField     `json:"columns,omitempty"`
}

// Option is one selectable value of a select field.
type Option struct {
	Label string `json:"label"`
	Value any    `json:"value"`
}

// ValidationRule bounds a field's value. On a table field MinLength/MaxLength bound the row
// count. Message, when set, replaces only the pattern-mismatch message.
type ValidationRule struct {
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Message   string   `json:"message,omitempty"`
}

// OptionSource describes where a select field's options come from at run time.
type OptionSource struct {
	Kind    string         `json:"kind"` // "remote"
	Request *RemoteRequest `json:"request,omitempty"`
	Mapping *RemoteMapping `json:"mapping,omitempty"`
}

// RemoteRequest is the /api call that lists a remote source's options.
type RemoteRequest struct {
	Resource string         `json:"resource"`
	Action   string         `json:"action"`
	Version  string         `json:"version,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
}

// RemoteMapping names the properties of a remote source's rows.
type RemoteMapping struct {
	LabelKey       string `json:"labelKey,omitempty"`
	ValueKey       string `json:"valueKey,omitempty"`
	DisabledKey    string `json:"disabledKey,omitempty"`
	DescriptionKey string `json:"descriptionKey,omitempty"`
}

// Column returns the table column named key, or nil.
func (f *FormField) Column(key string) *FormField {
	for i := range f.Columns {
		if f.Columns[i].Key == key {
			return &f.Columns[i]
		}
	}
	return nil
}

// SchemaError is a form design that cannot be deployed: a form-editor document that does not
// project, or a field list that breaks the FormFieldDefinition contract. Path is the field key
// chain ("amount", "items.price"). The approval module answers it as 40010 (InvalidFormDesign).
//
// Args are the values the message names, in the order of the rule's parameters (Params); the
// module answers with the rule's catalogue text (MessageKey) in the process language.
type SchemaError struct {
	Rule    string
	Path    string
	Message string
	Args    []string
}

// schemaErr is the SchemaError of rule at path with the message format fills with args.
func schemaErr(rule, path, format string, args ...any) *SchemaError {
	return &SchemaError{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...), Args: argStrings(args)}
}

// MessageKey is the catalogue key of the rule's text: approval_design_form_<rule>.
func (e *SchemaError) MessageKey() string { return "approval_design_form_" + e.Rule }

// Params names Args by the rule's parameters (the {{name}} placeholders of its text).
func (e *SchemaError) Params() map[string]string { return zipParams(schemaParams[e.Rule], e.Args) }

// schemaParams names, per form design rule, the values its check passes (SchemaError.Args).
// Every rule has an entry (TestRuleMessages).
var schemaParams = map[string][]string{
	SchemaInvalidJSON: {"error"}, SchemaUnmappableFieldType: {"widget"}, SchemaUnknownFieldType: {"widget"},
	SchemaNestedSubform: nil, SchemaTableColumnsEmpty: nil, SchemaKindMismatch: {"kind", "other"},
	SchemaTableMismatch: nil, SchemaRemoteRequest: nil, SchemaEmptyKey: nil, SchemaDuplicateKey: nil,
	SchemaInvalidKind: {"kind"}, SchemaInvalidColumnType: {"type"}, SchemaInvalidPattern: {"pattern", "error"},
	SchemaInvalidBounds: nil, SchemaColumnsOnScalar: {"kind"},
}

// Error renders "invalid form design [rule] (field path): message".
func (e *SchemaError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("invalid form design [%s]: %s", e.Rule, e.Message)
	}
	return fmt.Sprintf("invalid form design [%s] (field %s): %s", e.Rule, e.Path, e.Message)
}

// Form design rules (the SchemaError.Rule values).
const (
	SchemaInvalidJSON         = "invalid_json"
	SchemaUnmappableFieldType = "unmappable_field_type"
	SchemaUnknownFieldType    = "unknown_field_type"
	SchemaNestedSubform       = "nested_subform_unsupported"
	SchemaTableColumnsEmpty   = "table_columns_empty"
	SchemaKindMismatch        = "cross_device_kind_mismatch"
	SchemaTableMismatch       = "cross_device_table_mismatch"
	SchemaRemoteRequest       = "remote_source_request_missing"
	SchemaEmptyKey            = "empty_field_key"
	SchemaDuplicateKey        = "duplicate_field_key"
	SchemaInvalidKind         = "invalid_field_kind"
	SchemaInvalidColumnType   = "invalid_column_type"
	SchemaInvalidPattern      = "invalid_pattern"
	SchemaInvalidBounds       = "invalid_validation_bounds"
	SchemaColumnsOnScalar     = "columns_on_scalar_field"
)

// ValidateFields checks a field list against the FormFieldDefinition contract: non-empty keys
// unique per level, known kinds and column types, tables with at least one column and no
// nested table, columns only on tables, compilable (RE2) patterns and ordered bounds. ParseFormSchema's output always
// passes; call it on lists from a host's own parser.
func ValidateFields(fields []FormField) error {
	return validateLevel(fields, "", false)
}

func validateLevel(fields []FormField, prefix string, inTable bool) error {
	seen := map[string]bool{}
	for i := range fields {
		f := &fields[i]
		path := prefix + f.Key
		if strings.TrimSpace(f.Key) == "" {
			return schemaErr(SchemaEmptyKey, prefix, "a field has an empty key")
		}
		if seen[f.Key] {
			return schemaErr(SchemaDuplicateKey, path, "the key is used by two fields")
		}
		seen[f.Key] = true
		if !f.Kind.Valid() {
			return schemaErr(SchemaInvalidKind, path, "unknown field kind %q", f.Kind)
		}
		if f.ColumnType != "" && !f.ColumnType.Valid() {
			return schemaErr(SchemaInvalidColumnType, path, "unknown column type %q", f.ColumnType)
		}
		if err := validateRule(f.Validation, path); err != nil {
			return err
		}
		if f.Kind != FieldTable {
			if len(f.Columns) > 0 {
				return schemaErr(SchemaColumnsOnScalar, path, "a %s field cannot declare columns", f.Kind)
			}
			continue
		}
		if inTable {
			return schemaErr(SchemaNestedSubform, path, "a table column cannot itself be a table")
		}
		if len(f.Columns) == 0 {
			return schemaErr(SchemaTableColumnsEmpty, path, "a table field needs at least one column")
		}
		if err := validateLevel(f.Columns, path+".", true); err != nil {
			return err
		}
	}
	return nil
}

func validateRule(r *ValidationRule, path string) error {
	if r == nil {
		return nil
	}
	if r.Pattern != "" {
		if _, err := regexp.Compile(r.Pattern); err != nil {
			return schemaErr(SchemaInvalidPattern, path, "pattern %q does not compile (RE2: no lookaround or backreferences): %v", r.Pattern, err)
		}
	}
	if (r.MinLength != nil && *r.MinLength < 0) || (r.MaxLength != nil && *r.MaxLength < 0) ||
		(r.MinLength != nil && r.MaxLength != nil && *r.MinLength > *r.MaxLength) ||
		(r.Min != nil && r.Max != nil && *r.Min > *r.Max) {
		return schemaErr(SchemaInvalidBounds, path, "validation bounds are negative or reversed")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
