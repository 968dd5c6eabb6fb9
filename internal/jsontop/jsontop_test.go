package jsontop

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzMembers holds Members to encoding/json: for every valid JSON text, it reports an object
// exactly when encoding/json decodes one into a map, and keeping the last value of each name
// gives the map encoding/json decodes, value bytes included.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y" } `, `{"a":1,"a":2}`,
		`{"n\u0061me":"v","e\\":null}`, `[1]`, `"s"`, `{"a":{"b":{"c":[[],{}]}},"z":-1.5e3}`, `null`, `{"":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		got := map[string]json.RawMessage{}
		isObject := Members(b, func(name, value []byte) { got[string(name)] = json.RawMessage(value) })
		var want map[string]json.RawMessage
		err := json.Unmarshal(b, &want)
		if isObject != (err == nil && want != nil) {
			t.Fatalf("%q: Members says object %v, encoding/json %v, %v", b, isObject, want, err)
		}
		if isObject && !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("%q: Members %q, encoding/json %q", b, got, want)
		}
	})
}
