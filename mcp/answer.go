package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/svc-framework/svc/db"
)

// answer is database_query's encoder (issue #42): a db.RowSink that writes the result — a JSON
// array of row objects — as the rows are read, into one buffer that never grows past the cap
// (svc.mcp.query.max_bytes). Every byte of the answer is written by it, so the cap counts
// exactly what the caller receives as the answer text, as it is produced: the keys (each
// column's name, repeated in every row), punctuation, nulls, numbers, the escapes of strings
// and the base64 of binary values. An append that does not fit fails before anything grows past
// the cap, and the call stops with errAnswerTooLarge; the rows already encoded are dropped.
//
// Row objects keep the statement's column order and every column: a name given twice is
// written twice (JSON parsers keep the last value, as the former map-based encoding did).
// Strings are escaped as encoding/json escapes them (HTML-safe, invalid UTF-8 as U+FFFD),
// numbers written as encoding/json writes them (TestAnswerMatchesEncodingJSON).
type answer struct {
	out      bounded
	keys     []string // each column's `"name":`, encoded once
	keysOver bool     // the keys of one row alone pass the cap: no row fits
	keyBytes int      // the capacity of the keys' buffer
	rows     int
	scratch  [64]byte
}

var _ db.RowSink = (*answer)(nil)

// errAnswerTooLarge: the encoded answer would pass svc.mcp.query.max_bytes.
var errAnswerTooLarge = errors.New("the encoded result passes svc.mcp.query.max_bytes")

// errNotEncodable marks a value JSON cannot represent (NaN, ±Inf, a time outside years 0–9999).
var errNotEncodable = errors.New("json")

// newAnswer starts an answer of at most limit bytes. The last byte is held back for the
// closing ']', which finish writes.
func newAnswer(limit int) *answer {
	a := &answer{out: bounded{max: limit - 1}}
	if !a.out.byte('[') {
		a.keysOver = true
	}
	return a
}

// Columns encodes each name once as `"name":`; when the keys of one row pass the cap on their
// own, no row can be answered and the first row fails. An empty result is still answered.
func (a *answer) Columns(names []string) error {
	keys := bounded{max: a.out.max}
	defer func() { a.keyBytes = cap(keys.b) }()
	ends := make([]int, len(names))
	for i, n := range names {
		if !keys.jsonString(n) || !keys.byte(':') {
			a.keysOver = true
			return nil
		}
		ends[i] = len(keys.b)
	}
	a.keys = make([]string, len(names))
	start := 0
	for i, end := range ends {
		a.keys[i] = string(keys.b[start:end])
		start = end
	}
	return nil
}

// Row appends one row object, failing with errAnswerTooLarge when it does not fit.
func (a *answer) Row(vals []any) error {
	if a.keysOver {
		return errAnswerTooLarge
	}
	ok := a.rows == 0 || a.out.byte(',')
	ok = ok && a.out.byte('{')
	for i, v := range vals {
		if !ok {
			break
		}
		if i > 0 {
			ok = a.out.byte(',')
		}
		ok = ok && a.out.str(a.keys[i])
		if ok {
			var err error
			if ok, err = a.value(v); err != nil {
				return err
			}
		}
	}
	if !ok || !a.out.byte('}') {
		return errAnswerTooLarge
	}
	a.rows++
	return nil
}

// value appends one value as encoding/json writes what the driver gave: NULL as null, UTF-8
// bytes as a string, other bytes base64. ok is false when it does not fit; err is set for a
// value JSON cannot represent.
func (a *answer) value(v any) (ok bool, err error) {
	switch x := v.(type) {
	case nil:
		return a.out.str("null"), nil
	case int64:
		return a.out.bytes(strconv.AppendInt(a.scratch[:0], x, 10)), nil
	case float64:
		b, err := appendFloat(a.scratch[:0], x)
		return err == nil && a.out.bytes(b), err
	case bool:
		return a.out.str(strconv.FormatBool(x)), nil
	case string:
		return a.out.jsonString(x), nil
	case []byte:
		if utf8.Valid(x) {
			return a.out.jsonString(string(x)), nil
		}
		return a.out.base64(x), nil
	case time.Time:
		b, err := x.MarshalJSON()
		if err != nil {
			return false, fmt.Errorf("%w: %w", errNotEncodable, err)
		}
		return a.out.bytes(b), nil
	}
	b, err := json.Marshal(v) // no driver gives other types; encode them as encoding/json does
	if err != nil {
		return false, fmt.Errorf("%w: %w", errNotEncodable, err)
	}
	return a.out.bytes(b), nil
}

// fits reports whether n more bytes of answer (the truncation note) fit beside the array.
func (a *answer) fits(n int) bool { return len(a.out.b)+n <= a.out.max }

// finish closes the array and returns the answer text.
func (a *answer) finish() string {
	a.out.b = append(a.out.b, ']') // the byte newAnswer held back
	return string(a.out.b)
}

// appendFloat writes f as encoding/json does (ES6 number formatting: 'f' between 1e-6 and 1e21,
// else 'e' with a two-digit exponent trimmed); NaN and infinities are not JSON.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%w: unsupported value: %s", errNotEncodable, strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' { // e-09 → e-9
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// bounded is a byte buffer that never holds more than max bytes: every append reports whether
// it fit, and its capacity never passes max either (it grows by doubling up to max).
type bounded struct {
	b   []byte
	max int
}

// room makes room for n more bytes and reports whether they fit under max.
func (w *bounded) room(n int) bool {
	need := len(w.b) + n
	if n < 0 || need > w.max {
		return false
	}
	if need > cap(w.b) {
		grown := make([]byte, len(w.b), min(max(2*cap(w.b), need, 512), w.max))
		copy(grown, w.b)
		w.b = grown
	}
	return true
}

func (w *bounded) byte(c byte) bool {
	if !w.room(1) {
		return false
	}
	w.b = append(w.b, c)
	return true
}

func (w *bounded) bytes(p []byte) bool {
	if !w.room(len(p)) {
		return false
	}
	w.b = append(w.b, p...)
	return true
}

func (w *bounded) str(s string) bool {
	if !w.room(len(s)) {
		return false
	}
	w.b = append(w.b, s...)
	return true
}

// base64 appends p as a JSON string of its standard base64 encoding.
func (w *bounded) base64(p []byte) bool {
	if !w.room(base64.StdEncoding.EncodedLen(len(p)) + 2) {
		return false
	}
	w.b = append(w.b, '"')
	w.b = base64.StdEncoding.AppendEncode(w.b, p)
	w.b = append(w.b, '"')
	return true
}

const hexDigits = "0123456789abcdef"

// jsonString appends s as a JSON string escaped as encoding/json escapes it with HTML escaping
// on (json.Marshal): ", \ and the short forms \b \f \n \r \t, other control characters, <, >
// and & as \u00XX, U+2028 and U+2029 as \u202X, each invalid UTF-8 byte as \ufffd. It stops as
// soon as a piece does not fit: a string of n bytes takes at least n+2.
func (w *bounded) jsonString(s string) bool {
	return w.room(len(s)+2) && w.byte('"') && w.escape(s) && w.byte('"')
}

// escape appends the inside of jsonString: s escaped, without the quotes.
func (w *bounded) escape(s string) bool {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			if !w.str(s[start:i]) || !w.escapeASCII(c) {
				return false
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = `\ufffd`
		case r == '\u2028':
			esc = `\u2028`
		case r == '\u2029':
			esc = `\u2029`
		default:
			i += size
			continue
		}
		if !w.str(s[start:i]) || !w.str(esc) {
			return false
		}
		i += size
		start = i
	}
	return w.str(s[start:])
}

// htmlSafe reports whether encoding/json writes the ASCII byte c unescaped (with HTML escaping).
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// escapeASCII appends the escape of an ASCII byte htmlSafe refuses.
func (w *bounded) escapeASCII(c byte) bool {
	switch c {
	case '"', '\\':
		return w.room(2) && w.bytes([]byte{'\\', c})
	case '\b':
		return w.str(`\b`)
	case '\f':
		return w.str(`\f`)
	case '\n':
		return w.str(`\n`)
	case '\r':
		return w.str(`\r`)
	case '\t':
		return w.str(`\t`)
	}
	return w.room(6) && w.bytes([]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]})
}
