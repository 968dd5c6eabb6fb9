package rpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

type typedOnly struct {
	ID    int64             `json:"id"`
	IDs   []uint64          `json:"ids"`
	Inner struct{ N int64 } `json:"inner"`
	Big   json.Number       `json:"big"`
}

type recursive struct {
	Next *recursive `json:"next"`
	Val  int64      `json:"val"`
}

type withAny struct {
	Next *withAny       `json:"next"`
	Meta map[string]any `json:"meta"`
	raw  any            // unexported: never decoded
}

func TestNumbersNeedCare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[typedOnly](), false},
		{reflect.TypeFor[recursive](), false},
		{reflect.TypeFor[NoParams](), false},
		{reflect.TypeFor[withAny](), true},
		{reflect.TypeFor[map[string]any](), true},
		{reflect.TypeFor[[]any](), true},
		{reflect.TypeFor[echoParams](), true},
		{reflect.TypeFor[*struct{ X [2]any }](), true},
	}
	for _, tt := range tests {
		if got := numbersNeedCare(tt.typ); got != tt.want {
			t.Errorf("numbersNeedCare(%s) = %v, want %v", tt.typ, got, tt.want)
		}
	}
	_ = withAny{}.raw
}

// TestParamsKeepDigits: int64 above 2^53 survives both decoding paths.
func TestParamsKeepDigits(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"id":9007199254740993,"ids":[18446744073709551615],"big":123456789012345678901234567890,"meta":{"n":9007199254740993}}`)
	var typed typedOnly
	if err := decodeParams(raw, &typed, numbersNeedCare(reflect.TypeFor[typedOnly]())); err != nil {
		t.Fatal(err)
	}
	if typed.ID != 9007199254740993 || typed.IDs[0] != 18446744073709551615 || typed.Big != "123456789012345678901234567890" {
		t.Errorf("typed = %+v", typed)
	}
	var loose withAny
	if err := decodeParams(raw, &loose, numbersNeedCare(reflect.TypeFor[withAny]())); err != nil {
		t.Fatal(err)
	}
	if n, ok := loose.Meta["n"].(json.Number); !ok || n != "9007199254740993" {
		t.Errorf("meta.n = %#v, want json.Number 9007199254740993", loose.Meta["n"])
	}
	for _, bad := range []string{`{"id":"x"}`, `{"id":1.5}`, `[1]`} {
		if err := decodeParams(json.RawMessage(bad), &typed, false); !errors.Is(err, ErrInvalidRequestParams) {
			t.Errorf("decodeParams(%s) = %v, want ErrInvalidRequestParams", bad, err)
		}
	}
	for _, empty := range []string{``, ` `, `null`, `{}`} {
		var p typedOnly
		if err := decodeParams(json.RawMessage(empty), &p, false); err != nil || p.ID != 0 {
			t.Errorf("decodeParams(%q) = %+v, %v", empty, p, err)
		}
	}
}
