package design

import (
	"encoding/json"
	"strings"
)

// ParseFormSchema projects the original's form-editor document (what deploy's formSchema
// carries when the React form designer is used) onto the flat formFields list of
// wire-approval §5. Both device presentations are walked, pc first, then mobile; layout
// containers (section, flex, grid, tabs) are transparent; every keyed node becomes a field in
// document order, a subform becomes a single-level table field whose template's keyed leaves
// are its columns. The first node that cannot be projected aborts with a *SchemaError: a
// switch or daterange widget (its value shape breaks the contract), an unknown widget, a nested
// subform, a subform without columns, a remote option source without a request, or a key
// whose kind or table shape differs between the two devices.
func ParseFormSchema(doc []byte) ([]FormField, error) {
	var s schemaDoc
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, schemaErr(SchemaInvalidJSON, "", "the form schema is not a form-editor document: %v", err)
	}
	p := &projector{sources: map[string]*dataSource{}, seen: map[string]*seenField{}}
	for i := range s.DataSources {
		p.sources[s.DataSources[i].ID] = &s.DataSources[i]
	}
	fields := []FormField{}
	for _, layer := range []*layerDoc{s.Presentations.PC, s.Presentations.Mobile} {
		if layer == nil {
			continue
		}
		err := walkKeyed(layer.Children, func(b *block) error {
			f, err := p.visit(b)
			if f != nil {
				f.SortOrder = len(fields)
				fields = append(fields, *f)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if err := ValidateFields(fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// The subset of the form-editor document the projection reads; everything else (styling,
// linkage, variables, per-device layout) is ignored.
type schemaDoc struct {
	DataSources   []dataSource `json:"dataSources"`
	Presentations struct {
		PC     *layerDoc `json:"pc"`
		Mobile *layerDoc `json:"mobile"`
	} `json:"presentations"`
}

type layerDoc struct {
	Children []block `json:"children"`
}

type block struct {
	Type        string       `json:"type"`
	Key         string       `json:"key"`
	Label       *string      `json:"label"` // nil → the key; "" stays ""
	Placeholder string       `json:"placeholder"`
	ColumnType  ColumnType   `json:"columnType"`
	Precision   *int         `json:"precision"`
	MaxCount    *int         `json:"maxCount"`
	Validate    *validateDoc `json:"validate"`
	DataSource  *dataSource  `json:"dataSource"`
	Template    []block      `json:"template"`
	MinRows     *int         `json:"minRows"`
	MaxRows     *int         `json:"maxRows"`
	Children    []block      `json:"children"`
	Tabs        []struct {
		Children []block `json:"children"`
	} `json:"tabs"`
}

// validateDoc is the designer's validate mixin: required plus the props of a ValidationRule.
type validateDoc struct {
	Required *bool `json:"required"`
	ValidationRule
}

// dataSource is both a field's inline source and a form-level reusable one.
type dataSource struct {
	ID           string         `json:"id"`
	Kind         string         `json:"kind"` // static | ref | remote
	Options      []Option       `json:"options"`
	DataSourceID string         `json:"dataSourceId"`
	Request      *RemoteRequest `json:"request"`
	Mapping      *RemoteMapping `json:"mapping"`
}

// kindByWidget maps a widget type to the field kind whose value validation accepts what the
// widget submits.
var kindByWidget = map[string]FieldKind{
	"textfield":      FieldInput,
	"textarea":       FieldTextarea,
	"code-editor":    FieldTextarea,
	"number":         FieldNumber,
	"select":         FieldSelect,
	"radio":          FieldSelect,
	"checkbox-group": FieldSelect,
	"date":           FieldDate,
	"datetime":       FieldDate,
	"upload":         FieldUpload,
}

// unmappableWidgets bind values the contract cannot carry: switch a boolean, daterange a
// [start, end] pair (input and date values must be strings).
var unmappableWidgets = map[string]bool{"switch": true, "daterange": true}

// columnTypeByWidget is the fixed widget → column type part of the inference.
var columnTypeByWidget = map[string]ColumnType{
	"date":           ColumnDate,
	"datetime":       ColumnDatetime,
	"checkbox-group": ColumnJSON,
	"textarea":       ColumnText,
	"code-editor":    ColumnText,
}

func isLayout(t string) bool {
	return t == "section" || t == "flex" || t == "grid" || t == "tabs"
}

// walkKeyed visits the keyed nodes of one value scope in document order, descending through
// layout containers (their children stay in the scope) but not into subforms.
func walkKeyed(blocks []block, visit func(*block) error) error {
	for i := range blocks {
		b := &blocks[i]
		if isLayout(b.Type) {
			bodies := [][]block{b.Children}
			if b.Type == "tabs" {
				bodies = bodies[:0]
				for _, t := range b.Tabs {
					bodies = append(bodies, t.Children)
				}
			}
			for _, body := range bodies {
				if err := walkKeyed(body, visit); err != nil {
					return err
				}
			}
			continue
		}
		if b.Key == "" { // dividers, paragraphs, buttons: no value
			continue
		}
		if err := visit(b); err != nil {
			return err
		}
	}
	return nil
}

type projector struct {
	sources map[string]*dataSource
	seen    map[string]*seenField
}

type seenField struct {
	kind      FieldKind
	signature string // table fields: column key:kind list
}

// visit projects one root-scope keyed node, or checks a repeat sighting (the other device)
// against the first. The widget is classified before the dedupe so a switch on one device
// aborts even when the other device already projected the key.
func (p *projector) visit(b *block) (*FormField, error) {
	if err := classify(b, b.Key); err != nil {
		return nil, err
	}
	if prev, ok := p.seen[b.Key]; ok {
		kind := peekKind(b)
		if kind != prev.kind {
			return nil, schemaErr(SchemaKindMismatch, b.Key, "the key projects to %q on one device and %q on the other", prev.kind, kind)
		}
		if kind == FieldTable && tableSignature(b) != prev.signature {
			return nil, schemaErr(SchemaTableMismatch, b.Key, "the table's columns differ between the devices")
		}
		return nil, nil
	}
	var f *FormField
	var err error
	if b.Type == "subform" {
		f, err = p.subform(b)
	} else {
		f, err = p.leaf(b, b.Key)
	}
	if err != nil {
		return nil, err
	}
	p.seen[b.Key] = &seenField{kind: f.Kind}
	if f.Kind == FieldTable {
		p.seen[b.Key].signature = tableSignature(b)
	}
	return f, nil
}

func classify(b *block, path string) error {
	if b.Type == "subform" {
		return nil
	}
	if _, ok := kindByWidget[b.Type]; ok {
		return nil
	}
	if unmappableWidgets[b.Type] {
		return schemaErr(SchemaUnmappableFieldType, path, "widget %q submits a value the approval form contract cannot carry", b.Type)
	}
	return schemaErr(SchemaUnknownFieldType, path, "unknown widget type %q", b.Type)
}

func peekKind(b *block) FieldKind {
	if b.Type == "subform" {
		return FieldTable
	}
	return kindByWidget[b.Type]
}

// tableSignature is the ordered, deduplicated key:kind list of a subform's columns.
func tableSignature(b *block) string {
	var parts []string
	seen := map[string]bool{}
	_ = walkKeyed(b.Template, func(c *block) error {
		if !seen[c.Key] {
			seen[c.Key] = true
			kind := string(peekKind(c))
			if kind == "" {
				kind = "?"
			}
			parts = append(parts, c.Key+":"+kind)
		}
		return nil
	})
	return strings.Join(parts, ",")
}

// leaf projects a keyed widget; path is "key" or "table.key" for a column.
func (p *projector) leaf(b *block, path string) (*FormField, error) {
	if err := classify(b, path); err != nil {
		return nil, err
	}
	f := &FormField{Key: b.Key, Kind: kindByWidget[b.Type], Label: b.Key, Placeholder: b.Placeholder}
	if b.Label != nil {
		f.Label = *b.Label
	}
	if v := b.Validate; v != nil {
		f.IsRequired = v.Required != nil && *v.Required
		if rule := v.ValidationRule; rule != (ValidationRule{}) {
			f.Validation = &rule
		}
	}
	var err error
	if f.Options, f.OptionSource, err = p.options(b, path); err != nil {
		return nil, err
	}
	f.ColumnType = columnType(b)
	if f.ColumnType == ColumnDecimal && b.Precision != nil && *b.Precision > 0 {
		scale := *b.Precision
		f.Scale = &scale
	}
	return f, nil
}

// options resolves a field's option source: static (inline or through a ref) → Options; remote
// (inline or through a ref) → OptionSource; a dangling ref or no source → neither, and the
// field then accepts any value.
func (p *projector) options(b *block, path string) ([]Option, *OptionSource, error) {
	src := b.DataSource
	if src == nil {
		return nil, nil, nil
	}
	if src.Kind == "ref" {
		if src = p.sources[src.DataSourceID]; src == nil {
			return nil, nil, nil
		}
	}
	switch src.Kind {
	case "static":
		return src.Options, nil, nil
	case "remote":
		if src.Request == nil || src.Request.Resource == "" || src.Request.Action == "" {
			return nil, nil, schemaErr(SchemaRemoteRequest, path, "a remote option source needs a request with resource and action")
		}
		return nil, &OptionSource{Kind: "remote", Request: src.Request, Mapping: src.Mapping}, nil
	}
	return nil, nil, nil
}

// columnType infers a leaf's storage column type: an explicit override wins; number is
// decimal with a precision and otherwise carries none (an inferred integer would refuse every
// fractional value); upload is json for several files, else text; the fixed widgets map
// through columnTypeByWidget; the rest is a sized string when maxLength is set, else text.
func columnType(b *block) ColumnType {
	if b.ColumnType != "" {
		return b.ColumnType
	}
	switch b.Type {
	case "number":
		if b.Precision != nil && *b.Precision > 0 {
			return ColumnDecimal
		}
		return ""
	case "upload":
		if b.MaxCount != nil && *b.MaxCount > 1 {
			return ColumnJSON
		}
		return ColumnText
	}
	if t, ok := columnTypeByWidget[b.Type]; ok {
		return t
	}
	if b.Validate != nil && b.Validate.MaxLength != nil && *b.Validate.MaxLength > 0 {
		return ColumnString
	}
	return ColumnText
}

// subform projects a root-scope subform into a table field. Its template is one value scope:
// layout containers are transparent, the first sighting of a column key wins, a nested subform
// aborts, and at least one column must remain. minRows ≥ 1 makes the table required; minRows
// (when positive) and maxRows bound the row count.
func (p *projector) subform(b *block) (*FormField, error) {
	var columns []FormField
	seen := map[string]bool{}
	err := walkKeyed(b.Template, func(c *block) error {
		if seen[c.Key] {
			return nil
		}
		seen[c.Key] = true
		path := b.Key + "." + c.Key
		if c.Type == "subform" {
			return schemaErr(SchemaNestedSubform, path, "a table column cannot be another subform")
		}
		col, err := p.leaf(c, path)
		if err != nil {
			return err
		}
		col.SortOrder = len(columns)
		columns = append(columns, *col)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(columns) == 0 {
		return nil, schemaErr(SchemaTableColumnsEmpty, b.Key, "the subform has no keyed column")
	}
	f := &FormField{Key: b.Key, Kind: FieldTable, Label: b.Key, Columns: columns}
	if b.Label != nil {
		f.Label = *b.Label
	}
	f.IsRequired = b.MinRows != nil && *b.MinRows >= 1
	rule := &ValidationRule{}
	if b.MinRows != nil && *b.MinRows > 0 {
		rule.MinLength = b.MinRows
	}
	rule.MaxLength = b.MaxRows
	if rule.MinLength != nil || rule.MaxLength != nil {
		f.Validation = rule
	}
	return f, nil
}
