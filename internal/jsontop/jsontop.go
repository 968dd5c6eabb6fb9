// Package jsontop reads the members of a JSON object without decoding their values: each value
// stays a slice of the input, so a caller decodes only the members it needs, and the numbers in
// them keep every digit. The MCP endpoint's fast path (mcp/fastcall.go), a performance bypass of
// the MCP SDK (docs/architecture.md, "Performance bypasses"), reads its requests with it.
package jsontop

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn with the name and the raw value of each member of the JSON object b, in
// order, and reports whether b is an object (white space around it allowed). The name has its
// quotes removed, its escapes decoded and invalid UTF-8 replaced, as encoding/json decodes an
// object's keys; fn sees
// duplicate names once each, so a caller that keeps the last one decodes as encoding/json does.
// b must be valid JSON (json.Valid): Members finds value boundaries, it does not check syntax.
func Members(b []byte, fn func(name, value []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for i++; i < len(b); {
		if i = skipSpace(b, i); i >= len(b) {
			break
		}
		switch b[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		}
		ks := i
		i = skipString(b, i)
		name := b[ks+1 : i-1]
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) { // as encoding/json: escapes decoded, bad bytes U+FFFD
			var s string
			if json.Unmarshal(b[ks:i], &s) != nil {
				return false
			}
			name = []byte(s)
		}
		i = skipSpace(b, i) + 1 // the colon
		i = skipSpace(b, i)
		vs := i
		i = skipValue(b, i)
		fn(name, b[vs:i])
	}
	return false // unreachable for a valid object
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the (valid) JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return len(b)
}
