package rpc

import (
	"encoding/json"
	"strings"
	"testing"
)

var validJSONCases = []string{
	``, ` `, `{}`, ` {} `, `[]`, `[ ]`, `{ }`, `{`, `}`, `[`, `]`, `{]`, `[}`, `[1,]`, `[,1]`, `{,}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1}{}`, `{} x`, `1`, `-`, `-0`, `-01`, `01`, `0.`,
	`0.1`, `1e`, `1e+`, `1E-2`, `1.5e300`, `.5`, `+1`, `1x`, `true`, `tru`, `truex`, `false`, `null`,
	`nul`, `NULL`, `"`, `""`, `"\"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u00e9"`, `"\u00G9"`, `"\u12"`, `"\x"`,
	"\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"日本\"", "\t\r\n{}\t\r\n", "\v{}", "\u00a0{}",
	`{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}`,
	`[[[[]]]]`, `[[[[]]]`, `[{"a":[{"b":null}]},true,-1.0e-5,"x"]`, `{"a":{"b":{"c":[1,2,{"d":"e"}]}}}`,
	`{"a":1 "b":2}`, `{"a":1,,"b":2}`, `[1 2]`, `{"\u00e9":"\ud83d\ude00"}`,
	strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
	strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth),
	strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1),
	strings.Repeat(`[{"a":`, 70) + "1" + strings.Repeat("}]", 70),
	strings.Repeat(`[{"a":`, 70) + "1" + strings.Repeat("]}", 70),
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range validJSONCases {
		if got, want := validJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("validJSON(%.60q) = %v, want %v (json.Valid)", in, got, want)
		}
	}
}

// FuzzValidJSON holds validJSON to json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, in := range validJSONCases {
		if len(in) < 1000 {
			f.Add([]byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, want %v (json.Valid)", data, got, want)
		}
	})
}

// BenchmarkValidJSON checks a typical envelope, against json.Valid.
func BenchmarkValidJSON(b *testing.B) {
	body := []byte(`{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}`)
	b.Run("validJSON", func(b *testing.B) {
		for b.Loop() {
			validJSON(body)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(body)
		}
	})
}
