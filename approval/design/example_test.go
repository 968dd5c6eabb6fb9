package design_test

import (
	"errors"
	"fmt"

	"github.com/svc-framework/svc/approval/design"
)

// A deploy: project the form, then parse the flow against its fields.
func ExampleParseFlow() {
	fields, err := design.ParseFormSchema([]byte(`{"presentations": {"pc": {"children": [
		{"type": "number", "key": "amount", "label": "Amount", "validate": {"required": true}}]}}}`))
	if err != nil {
		panic(err)
	}
	flow, err := design.ParseFlow([]byte(`{
		"nodes": [
			{"id": "start", "kind": "start", "position": {"x": 0, "y": 0}},
			{"id": "boss", "kind": "approval", "position": {"x": 0, "y": 100},
			 "data": {"assignees": [{"kind": "superior", "sortOrder": 0}], "fieldPermissions": {"amount": "editable"}}},
			{"id": "end", "kind": "end", "position": {"x": 0, "y": 200}}],
		"edges": [{"id": "e1", "source": "start", "target": "boss"}, {"id": "e2", "source": "boss", "target": "end"}]}`), fields)
	if err != nil {
		panic(err)
	}
	boss, _ := flow.Node("boss")
	fmt.Println(boss.Task.ApprovalMethod, boss.Task.PassRule, flow.Next("boss").ID)

	// The same flow with a permission on a field the form does not have.
	_, err = design.ParseFlow([]byte(`{
		"nodes": [
			{"id": "start", "kind": "start"},
			{"id": "boss", "kind": "approval", "data": {"fieldPermissions": {"total": "editable"}}},
			{"id": "end", "kind": "end"}],
		"edges": [{"id": "e1", "source": "start", "target": "boss"}, {"id": "e2", "source": "boss", "target": "end"}]}`), fields)
	var re *design.RuleError
	if errors.As(err, &re) {
		fmt.Println(re.Rule, re.NodeID)
	}
	// Output:
	// parallel all end
	// field_permission_key_unknown boss
}

// Form data is checked against the fields; the error carries the message key and its params.
func ExampleValidateFormData() {
	fields := []design.FormField{{Key: "amount", Kind: design.FieldNumber, Label: "Amount", IsRequired: true}}
	err := design.ValidateFormData(fields, map[string]any{"amount": "12"}, 0)
	var fe *design.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Key, fe.Params["field"])
	}
	// Output: approval_form_field_must_be_number Amount
}
