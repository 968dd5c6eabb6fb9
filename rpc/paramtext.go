package rpc

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// nulEscape is how a NUL character appears in JSON text: raw control characters are not valid
// JSON, so a NUL can only arrive escaped.
var nulEscape = []byte(`\u0000`)

// checkParamText refuses params that no database text column can hold, before they are decoded
// (issue #11 item 5): bytes that are not valid UTF-8 anywhere in the raw JSON (encoding/json
// would silently turn them into U+FFFD, but raw JSON kept as json.RawMessage would reach the
// database as is), and a NUL character in any string (PostgreSQL rejects NUL in text and jsonb,
// which made such requests answer 500/1900). Both answer 400/1400. It runs on every operation's
// params; valid input costs one pass of utf8.Valid and one bytes.Index.
func checkParamText(raw []byte) error {
	if !utf8.Valid(raw) {
		return ErrValidationInvalid.WithArgs("field", "params")
	}
	if bytes.Contains(raw, nulEscape) && hasNULEscape(raw) {
		return ErrValidationInvalid.WithArgs("field", "params")
	}
	return nil
}

// hasNULEscape reports whether the JSON text raw contains the escape \u0000 (not an escaped
// backslash followed by the letters u0000). Outside strings JSON has no backslashes, so every
// backslash starts a two-character escape or a six-character \uXXXX.
func hasNULEscape(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if bytes.HasPrefix(raw[i:], nulEscape) {
			return true
		}
		i++ // skip the escaped character (\\, \", \n, or the u of \uXXXX)
	}
	return false
}

// validIdentifier reports whether s is an identifier-like string: valid UTF-8 with no control
// character (NUL, the other C0 controls, DEL and the C1 controls).
func validIdentifier(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
