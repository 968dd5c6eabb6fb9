package design

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormDataCode is the business code of every form-data failure (wire-approval §13: 40401).
const FormDataCode = 40401

// DefaultFormDataMaxBytes is svc.approval.form_data_max_bytes' default (wire-approval §2).
const DefaultFormDataMaxBytes = 65536

// Message keys of form-data failures (wire-approval §13), all answered with FormDataCode.
const (
	KeyNotDefined        = "approval_form_field_not_defined"
	KeyRequired          = "approval_form_field_required"
	KeyMustBeString      = "approval_form_field_must_be_string"
	KeyMustBeNumber      = "approval_form_field_must_be_number"
	KeyMustBeInteger     = "approval_form_field_must_be_integer"
	KeyMinLength         = "approval_form_field_min_length"
	KeyMaxLength         = "approval_form_field_max_length"
	KeyInvalidValidation = "approval_form_field_invalid_validation"
	KeyPatternMismatch   = "approval_form_field_pattern_mismatch"
	KeyMinValue          = "approval_form_field_min_value"
	KeyMaxValue          = "approval_form_field_max_value"
	KeyEmpty             = "approval_form_field_empty"
	KeyInvalidFileItem   = "approval_form_field_invalid_file_item"
	KeyMustBeFile        = "approval_form_field_must_be_file"
	KeyInvalidValue      = "approval_form_field_invalid_value"
	KeyMustBeRowList     = "approval_form_field_must_be_row_list"
	KeyMustBeRowObject   = "approval_form_field_must_be_row_object"
	KeyMinRows           = "approval_form_field_min_rows"
	KeyMaxRows           = "approval_form_field_max_rows"
	KeyTableCell         = "approval_form_field_table_cell"
	KeyFormDataTooLarge  = "approval_form_data_too_large"
)

// FieldError is a form-data failure: the message Key with its Params (placeholders of the
// message catalog: field is the field's label, plus min, max, row, column, … per key), the
// field's key Path ("amount", or "items.price" for a table cell), and for a table cell the
// failure of the cell itself (rendered into the "message" param by Render and Args). Message,
// when set, is a literal replacing the rendered key: the field's validation.message on a
// pattern mismatch. The approval module answers it with FormDataCode, e.g.
//
//	rpc.NewError(design.FormDataCode, 200, fe.Key).WithArgs(fe.Args(catalog.T)...)
//
// (WithMessage(fe.Message) when Message is set).
type FieldError struct {
	Key     string
	Path    string
	Params  map[string]string
	Message string
	Cell    *FieldError
}

// Error renders the key, path and params (English, for logs and tests).
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Key)
	if e.Path != "" {
		b.WriteString(" (" + e.Path + ")")
	}
	for _, k := range sortedKeys(e.Params) {
		fmt.Fprintf(&b, " %s=%s", k, e.Params[k])
	}
	if e.Cell != nil {
		b.WriteString(": " + e.Cell.Error())
	}
	return b.String()
}

// Translator renders a message key with its params: an i18n catalog's T.
type Translator func(key string, args map[string]string) string

// RenderParams returns Params for rendering Key; for a table cell it adds "message", the cell's
// own error rendered with t (the table_cell message embeds it).
func (e *FieldError) RenderParams(t Translator) map[string]string {
	p := make(map[string]string, len(e.Params)+1)
	for k, v := range e.Params {
		p[k] = v
	}
	if e.Cell != nil {
		p["message"] = e.Cell.Render(t)
	}
	return p
}

// Render renders the whole message with t: the literal Message when set, else Key with
// RenderParams.
func (e *FieldError) Render(t Translator) string {
	if e.Message != "" {
		return e.Message
	}
	return t(e.Key, e.RenderParams(t))
}

// Args returns RenderParams flattened to key/value pairs in key order, ready for
// rpc.Error.WithArgs.
func (e *FieldError) Args(t Translator) []string {
	p := e.RenderParams(t)
	kv := make([]string, 0, 2*len(p))
	for _, k := range sortedKeys(p) {
		kv = append(kv, k, p[k])
	}
	return kv
}

// ValidateFormData checks submitted form data (start, resubmit) against a version's fields
// (wire-approval §5 "Form data validation"): its JSON encoding must not exceed maxBytes
// (≤ 0 means DefaultFormDataMaxBytes); with fields, unknown keys are refused and every field's
// value is checked by kind. A version without fields accepts any object under the cap.
// It returns a *FieldError.
func ValidateFormData(fields []FormField, data map[string]any, maxBytes int) error {
	size, err := encodedSize(data)
	if err != nil {
		return err
	}
	if limit := capOf(maxBytes); size > limit {
		return tooLarge(size, limit)
	}
	return validateFields(fields, data)
}

// ValidateWritable checks what a task decision submits (wire-approval §8 process_task):
// only the keys the node lets its assignee write (editable or required) count, exactly the
// subset MergeWritable keeps; such a key that is not a form field is not_defined, an empty
// value is left to ValidateRequired (filling is an obligation of approve and handle, not a
// value error) and every other value is checked like ValidateFormData checks it.
func ValidateWritable(fields []FormField, submitted map[string]any, perms map[string]Permission) error {
	byKey := make(map[string]*FormField, len(fields))
	for i := range fields {
		byKey[fields[i].Key] = &fields[i]
	}
	for _, k := range sortedKeys(submitted) {
		if !perms[k].Writable() {
			continue
		}
		f, ok := byKey[k]
		if !ok {
			return &FieldError{Key: KeyNotDefined, Path: k, Params: map[string]string{"field": k}}
		}
		if v := submitted[k]; !isBlank(v) {
			if err := validateValue(f, v, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidateGrowth is the size rule of task decisions, where submitted values are merged into
// stored data: the merged data may exceed the cap only if the merge did not enlarge it, so an
// instance stored before the cap was lowered stays actionable (maxBytes ≤ 0 means
// DefaultFormDataMaxBytes).
func ValidateGrowth(before, after map[string]any, maxBytes int) error {
	size, err := encodedSize(after)
	if err != nil {
		return err
	}
	limit := capOf(maxBytes)
	if size <= limit {
		return nil
	}
	prev, err := encodedSize(before)
	if err != nil {
		return err
	}
	if size > prev {
		return tooLarge(size, limit)
	}
	return nil
}

// ValidateRequired checks that every field a node marks required (perms) has a value: the
// approve and handle decisions of part 2. It returns a *FieldError with KeyRequired.
func ValidateRequired(fields []FormField, perms map[string]Permission, formData map[string]any) error {
	for i := range fields {
		f := &fields[i]
		if perms[f.Key] == PermRequired && isBlank(formData[f.Key]) {
			return fail(KeyRequired, f, f.Key)
		}
	}
	return nil
}

func capOf(maxBytes int) int {
	if maxBytes <= 0 {
		return DefaultFormDataMaxBytes
	}
	return maxBytes
}

func encodedSize(m map[string]any) (int, error) {
	if m == nil {
		return 0, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return 0, &FieldError{Key: KeyInvalidValue, Params: map[string]string{"field": "formData"}}
	}
	return len(b), nil
}

func tooLarge(size, limit int) *FieldError {
	return &FieldError{Key: KeyFormDataTooLarge,
		Params: map[string]string{"size": strconv.Itoa(size), "max": strconv.Itoa(limit)}}
}

func validateFields(fields []FormField, formData map[string]any) error {
	if len(fields) == 0 {
		return nil
	}
	if err := unknownKeys(fields, formData, ""); err != nil {
		return err
	}
	ordered := sortFields(fields)
	for i := range ordered {
		f := &ordered[i]
		if err := validateValue(f, formData[f.Key], f.Key); err != nil {
			return err
		}
	}
	return nil
}

func unknownKeys(fields []FormField, m map[string]any, prefix string) *FieldError {
	known := make(map[string]bool, len(fields))
	for i := range fields {
		known[fields[i].Key] = true
	}
	for _, k := range sortedKeys(m) {
		if !known[k] {
			return &FieldError{Key: KeyNotDefined, Path: prefix + k, Params: map[string]string{"field": k}}
		}
	}
	return nil
}

func label(f *FormField) string {
	if strings.TrimSpace(f.Label) != "" {
		return f.Label
	}
	return f.Key
}

func fail(key string, f *FormField, path string, kv ...string) *FieldError {
	p := map[string]string{"field": label(f)}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return &FieldError{Key: key, Path: path, Params: p}
}

// isBlank reports whether v counts as no value: absent/null, a blank string or an empty array.
func isBlank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	}
	rv := reflect.ValueOf(v)
	return (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Len() == 0
}

func validateValue(f *FormField, v any, path string) *FieldError {
	if isBlank(v) { // absent, null, blank or []: only a required field objects
		if f.IsRequired {
			return fail(KeyRequired, f, path)
		}
		return nil
	}
	switch f.Kind {
	case FieldInput, FieldTextarea, FieldDate:
		return validateString(f, v, path)
	case FieldNumber:
		return validateNumber(f, v, path)
	case FieldSelect:
		return validateSelect(f, v, path)
	case FieldUpload:
		return validateUpload(f, v, path)
	case FieldTable:
		return validateTable(f, v, path)
	}
	return nil
}

func validateString(f *FormField, v any, path string) *FieldError {
	s, ok := v.(string)
	if !ok {
		return fail(KeyMustBeString, f, path)
	}
	r := f.Validation
	if r == nil {
		return nil
	}
	n := utf8.RuneCountInString(s)
	if r.MinLength != nil && n < *r.MinLength {
		return fail(KeyMinLength, f, path, "min", strconv.Itoa(*r.MinLength))
	}
	if r.MaxLength != nil && n > *r.MaxLength {
		return fail(KeyMaxLength, f, path, "max", strconv.Itoa(*r.MaxLength))
	}
	if r.Pattern != "" {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return fail(KeyInvalidValidation, f, path)
		}
		if !re.MatchString(s) {
			e := fail(KeyPatternMismatch, f, path, "pattern", r.Pattern)
			if strings.TrimSpace(r.Message) != "" {
				e.Message = r.Message
			}
			return e
		}
	}
	return nil
}

// number reads a JSON number (float64 or json.Number) or a Go numeric value.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case bool, string, nil:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32:
		return rv.Float(), true
	}
	return 0, false
}

func validateNumber(f *FormField, v any, path string) *FieldError {
	n, ok := number(v)
	if !ok {
		return fail(KeyMustBeNumber, f, path)
	}
	if f.ColumnType == ColumnInteger && n != math.Trunc(n) {
		return fail(KeyMustBeInteger, f, path)
	}
	if r := f.Validation; r != nil {
		if r.Min != nil && n < *r.Min {
			return fail(KeyMinValue, f, path, "min", formatNumber(*r.Min))
		}
		if r.Max != nil && n > *r.Max {
			return fail(KeyMaxValue, f, path, "max", formatNumber(*r.Max))
		}
	}
	return nil
}

func formatNumber(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// validateSelect accepts one value or an array of values; when the field lists options every
// value must be one of them. Values compare by their text, as the original does, so "1"
// selects the option 1 (and 1.0 is 1).
func validateSelect(f *FormField, v any, path string) *FieldError {
	if len(f.Options) == 0 {
		return nil
	}
	values := []any{v}
	if arr, ok := v.([]any); ok {
		values = arr
	}
	for _, x := range values {
		if !hasOption(f.Options, x) {
			return fail(KeyInvalidValue, f, path, "value", compact(x))
		}
	}
	return nil
}

func hasOption(options []Option, v any) bool {
	for _, o := range options {
		if sameScalar(o.Value, v) {
			return true
		}
	}
	return false
}

func sameScalar(a, b any) bool { return optionText(a) == optionText(b) }

// optionText is a value's text for option matching: numbers in shortest form, strings as
// they are, anything else as compact JSON.
func optionText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if n, ok := number(v); ok {
		return formatNumber(n)
	}
	return compact(v)
}

func compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// validateUpload accepts a non-blank string (one file reference) or a non-empty array of
// non-blank strings. Blank values never get here from validateValue (they are "no value");
// the empty branch guards direct callers.
func validateUpload(f *FormField, v any, path string) *FieldError {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return fail(KeyEmpty, f, path)
		}
		return nil
	case []any:
		if len(x) == 0 {
			return fail(KeyEmpty, f, path)
		}
		for i, item := range x {
			if s, ok := item.(string); !ok || strings.TrimSpace(s) == "" {
				return fail(KeyInvalidFileItem, f, path, "index", strconv.Itoa(i+1))
			}
		}
		return nil
	}
	return fail(KeyMustBeFile, f, path)
}

// validateTable checks a table value: an array of row objects within validation's row bounds
// (minLength/maxLength), each cell valid for its column and no unknown column. Rows are
// numbered from 1 in params.
func validateTable(f *FormField, v any, path string) *FieldError {
	rows, ok := v.([]any)
	if !ok {
		return fail(KeyMustBeRowList, f, path)
	}
	if r := f.Validation; r != nil {
		if r.MinLength != nil && len(rows) < *r.MinLength {
			return fail(KeyMinRows, f, path, "min", strconv.Itoa(*r.MinLength))
		}
		if r.MaxLength != nil && len(rows) > *r.MaxLength {
			return fail(KeyMaxRows, f, path, "max", strconv.Itoa(*r.MaxLength))
		}
	}
	for i, raw := range rows {
		row, ok := raw.(map[string]any)
		if !ok {
			return fail(KeyMustBeRowObject, f, path, "row", strconv.Itoa(i+1))
		}
		cell := unknownKeys(f.Columns, row, path+".")
		for c := 0; cell == nil && c < len(f.Columns); c++ {
			col := &f.Columns[c]
			cell = validateValue(col, row[col.Key], path+"."+col.Key)
		}
		if cell != nil {
			e := fail(KeyTableCell, f, cell.Path, "row", strconv.Itoa(i+1), "column", cell.Params["field"])
			e.Cell = cell
			return e
		}
	}
	return nil
}

// sortFields orders fields by SortOrder (stable), the order validation reports them in.
func sortFields(fields []FormField) []FormField {
	out := append([]FormField(nil), fields...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].SortOrder < out[j].SortOrder })
	return out
}
