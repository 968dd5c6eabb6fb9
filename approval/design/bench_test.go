package design

import (
	"encoding/json"
	"testing"
)

// go test -run X -bench . -benchmem ./approval/design

func BenchmarkParseFlow(b *testing.B) {
	raw, _ := json.Marshal(validFlow())
	fields := testFields()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFlow(raw, fields); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFormSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFormSchema([]byte(expenseForm)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateFormData(b *testing.B) {
	fields, data := dataFields(), validData()
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateFormData(fields, data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChoose(b *testing.B) {
	raw, _ := json.Marshal(validFlow())
	f, err := ParseFlow(raw, testFields())
	if err != nil {
		b.Fatal(err)
	}
	env := Env{FormData: map[string]any{"amount": 6000.0, "items": []any{map[string]any{"price": 1.0}}}, ApplicantID: "u1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := f.Choose("c1", env); err != nil {
			b.Fatal(err)
		}
	}
}
