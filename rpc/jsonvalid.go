package rpc

// maxJSONDepth is encoding/json's nesting limit: 10000 open objects and arrays are valid, one
// more is not.
const maxJSONDepth = 10000

// validJSON reports whether b is exactly one JSON value with optional surrounding whitespace. It
// accepts and refuses exactly what json.Valid does (FuzzValidJSON holds the two equal): RFC 8259
// syntax, no control bytes in strings, bytes above 0x7F taken as they are (UTF-8 is not checked),
// at most maxJSONDepth levels of nesting.
//
// It exists for speed: every JSON envelope is checked whole before its keys are read, and
// json.Valid's scanner makes an indirect call per byte; this loop is about three times faster on a
// typical envelope (BenchmarkValidJSON), which matters on the request path.
func validJSON(b []byte) bool {
	// open records, per nesting level, whether the container is an object (1) or an array (0);
	// it grows past 128 levels only for deeply nested input.
	var shallow [2]uint64
	open := shallow[:]
	depth := 0
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth == maxJSONDepth {
				return false
			}
			if depth/64 == len(open) {
				open = append(open, 0)
			}
			if c == '{' {
				open[depth/64] |= 1 << (depth % 64)
			} else {
				open[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				depth--
				i++
				break // an empty container is a whole value
			}
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return false
				}
			}
			continue // its first element
		case '"':
			if i = jsonString(b, i); i < 0 {
				return false
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = jsonNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended before b[i]: close containers until the next element, or the end.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			inObject := open[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			switch {
			case b[i] == ',':
				i = skipSpace(b, i+1)
				if inObject {
					if i = objectKey(b, i); i < 0 {
						return false
					}
				}
			case b[i] == '}' && inObject, b[i] == ']' && !inObject:
				depth--
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// objectKey reads `"key" :` and the whitespace after it, returning the index of the value, or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = jsonString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// jsonString returns the index after the string starting at b[i] == '"', or -1 when it is
// unterminated, holds a control byte or has a bad escape.
func jsonString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// literal returns the index after word at b[i], or -1.
func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// jsonNumber returns the index after the number at b[i] (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?
// [0-9]+)?), or -1.
func jsonNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
