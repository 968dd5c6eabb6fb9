package design

import (
	"encoding/json"
	"testing"
)

// FuzzParseFlow: no definition makes ParseFlow panic, and what it accepts re-parses from its
// normalized form.
func FuzzParseFlow(f *testing.F) {
	valid, _ := json.Marshal(validFlow())
	f.Add(valid)
	f.Add([]byte(`{"nodes":[{"id":"s","kind":"start"},{"id":"e","kind":"end"}],"edges":[{"id":"x","source":"s","target":"e"}]}`))
	f.Add([]byte(`{"nodes":[{"id":"c","kind":"condition","data":{"branches":null}}],"edges":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		flow, err := ParseFlow(raw, testFields())
		if err != nil {
			return
		}
		norm, err := json.Marshal(flow)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseFlow(norm, testFields()); err != nil {
			t.Fatalf("normalized definition %s does not parse: %v", norm, err)
		}
	})
}

// FuzzParseFormSchema: no document makes the projection panic, and what it returns passes
// the contract check and validates data built from nothing.
func FuzzParseFormSchema(f *testing.F) {
	f.Add([]byte(expenseForm))
	f.Add([]byte(`{"presentations":{"pc":{"children":[{"type":"tabs","tabs":[{"children":[{"type":"subform","key":"t","template":[{"type":"number","key":"n"}]}]}]}]}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fields, err := ParseFormSchema(doc)
		if err != nil {
			return
		}
		if err := ValidateFields(fields); err != nil {
			t.Fatalf("projection breaks the contract: %v", err)
		}
		_ = ValidateFormData(fields, map[string]any{}, 0)
	})
}
