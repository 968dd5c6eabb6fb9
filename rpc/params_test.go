package rpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
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
	if err := decodeParams(raw, &typed, planParams(reflect.TypeFor[typedOnly]())); err != nil {
		t.Fatal(err)
	}
	if typed.ID != 9007199254740993 || typed.IDs[0] != 18446744073709551615 || typed.Big != "123456789012345678901234567890" {
		t.Errorf("typed = %+v", typed)
	}
	var loose withAny
	if err := decodeParams(raw, &loose, planParams(reflect.TypeFor[withAny]())); err != nil {
		t.Fatal(err)
	}
	if n, ok := loose.Meta["n"].(json.Number); !ok || n != "9007199254740993" {
		t.Errorf("meta.n = %#v, want json.Number 9007199254740993", loose.Meta["n"])
	}
	for _, bad := range []string{`{"id":"x"}`, `{"id":1.5}`, `[1]`} {
		if err := decodeParams(json.RawMessage(bad), &typed, paramsPlan{}); !errors.Is(err, ErrInvalidRequestParams) {
			t.Errorf("decodeParams(%s) = %v, want ErrInvalidRequestParams", bad, err)
		}
	}
	for _, empty := range []string{``, ` `, `null`, `{}`} {
		var p typedOnly
		if err := decodeParams(json.RawMessage(empty), &p, paramsPlan{}); err != nil || p.ID != 0 {
			t.Errorf("decodeParams(%q) = %+v, %v", empty, p, err)
		}
	}
}

// TestParamsPooledDecoderMatchesUnmarshal: the pooled decoders give json.Unmarshal's answer for
// every input (typedOnly has no interface field, so UseNumber changes nothing), in any order — a failed decode (type error, syntax error) does not leave state that
// changes the next one — and params over the pooling limit take the same path.
func TestParamsPooledDecoderMatchesUnmarshal(t *testing.T) {
	long := `{"id":7,"ids":[` + strings.Repeat("1,", maxPooledParams) + `2]}`
	inputs := []string{
		`{"id":1,"ids":[1,2],"inner":{"N":3},"big":1e400}`,
		`{"id":"x"}`,
		`{"id":9007199254740993}`,
		`{"id":1.5}`,
		`{"inner":{"N":`, // never valid: the envelope refuses it, yet it must not poison a decoder
		`{"ids":[1,2,3]}`,
		`[1]`,
		long,
		`{"ID":5,"unknown":{"a":[true,null]}}`,
		`{"id":2}`,
	}
	for round := range 3 { // several rounds, so pooled decoders are reused after every input
		for _, in := range inputs {
			for _, useNumber := range []bool{false, true} {
				var got, want typedOnly
				gotErr := decodeJSON([]byte(in), &got, useNumber)
				wantErr := json.Unmarshal([]byte(in), &want)
				if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("round %d, useNumber %v, %.40q: decodeJSON = %+v, %v; json.Unmarshal = %+v, %v",
						round, useNumber, in, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

// TestCheckParamText (issue #11 item 5): invalid UTF-8 and the escape \u0000 anywhere in the
// params are refused; an escaped backslash followed by the letters u0000 is not a NUL.
func TestCheckParamText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		ok   bool
	}{
		{"plain", `{"a":"b","n":1}`, true},
		{"unicode", `{"a":"žluťoučký 中文 \u00e9"}`, true},
		{"NUL escape", `{"a":"x\u0000y"}`, false},
		{"NUL escape in a key", `{"\u0000":1}`, false},
		{"NUL escape deep", `{"a":[{"b":["\u0000"]}]}`, false},
		{"escaped backslash then u0000", `{"a":"x\\u0000y"}`, true},
		{"escaped backslash then a real NUL", `{"a":"\\\u0000"}`, false},
		{"other control escape", `{"a":"\u0001"}`, true}, // refused per field by Check.Identifier
		{"invalid UTF-8", "{\"a\":\"\xff\"}", false},
		{"truncated UTF-8", "{\"a\":\"\xe4\xb8\"}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkParamText([]byte(tt.raw))
			if (err == nil) != tt.ok {
				t.Errorf("checkParamText(%q) = %v, want ok %v", tt.raw, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrValidationInvalid) {
				t.Errorf("checkParamText(%q) = %v, want ErrValidationInvalid (400/1400)", tt.raw, err)
			}
		})
	}
}

// TestCheckIdentifier: control characters (C0, DEL, C1), invalid UTF-8 and overlong values fail;
// printable Unicode passes.
func TestCheckIdentifier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		want *Error
	}{
		{"plain", "a@b", nil},
		{"unicode", "用户ž", nil},
		{"at the limit", "abcd", nil},
		{"NUL", "a\x00", ErrValidationInvalid},
		{"escape", "a\x1b[2J", ErrValidationInvalid},
		{"newline", "a\nb", ErrValidationInvalid},
		{"DEL", "a\x7f", ErrValidationInvalid},
		{"C1 NEL", "a\u0085", ErrValidationInvalid},
		{"invalid UTF-8", "a\xff", ErrValidationInvalid},
		{"too long", "abcde", ErrValidationMaxLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c Check
			c.Identifier("id", tt.s, 4)
			err := c.Err()
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Identifier(%q) = %v, want %v", tt.s, err, tt.want)
			}
		})
	}
}

// TestLogText: short values pass unchanged; long ones are cut to at most MaxLoggedBytes at a
// character boundary and marked.
func TestLogText(t *testing.T) {
	t.Parallel()
	short := strings.Repeat("a", MaxLoggedBytes)
	if got := LogText(short); got != short {
		t.Errorf("LogText(%d bytes) changed the value", len(short))
	}
	for _, s := range []string{strings.Repeat("a", 1<<20), strings.Repeat("界", 100), "a" + strings.Repeat("界", 100)} {
		got := LogText(s)
		body, ok := strings.CutSuffix(got, TruncatedSuffix)
		if !ok || len(body) > MaxLoggedBytes || len(body) < MaxLoggedBytes-3 || !utf8.ValidString(body) || !strings.HasPrefix(s, body) {
			t.Errorf("LogText(%d bytes) = %d bytes %q…; want a valid prefix of at most %d bytes and the suffix", len(s), len(got), got[:min(len(got), 20)], MaxLoggedBytes)
		}
	}
}
