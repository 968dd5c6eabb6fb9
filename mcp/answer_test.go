package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// reference encodes rows with encoding/json, one member at a time in column order: what answer
// must write byte for byte.
func reference(t *testing.T, cols []string, rows [][]any) string {
	t.Helper()
	var b strings.Builder
	b.WriteByte('[')
	for i, row := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, v := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			if p, ok := v.([]byte); ok { // wire-runtime §4: UTF-8 bytes as a string, other bytes base64
				if utf8.Valid(p) {
					v = string(p)
				} else {
					v = base64.StdEncoding.EncodeToString(p)
				}
			}
			k, err := json.Marshal(cols[j])
			if err != nil {
				t.Fatal(err)
			}
			val, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// encode runs rows through an answer of limit bytes and returns its text, or the error of the
// first row that did not fit, and the largest capacity its buffer reached.
func encode(cols []string, rows [][]any, limit int) (string, int, error) {
	a := newAnswer(limit)
	if err := a.Columns(cols); err != nil {
		return "", 0, err
	}
	for _, r := range rows {
		if err := a.Row(r); err != nil {
			return "", cap(a.out.b), err
		}
	}
	c := cap(a.out.b)
	return a.finish(), c, nil
}

// allASCII is every byte below 0x80 once.
func allASCII() string {
	var b strings.Builder
	for c := range 0x80 {
		b.WriteByte(byte(c))
	}
	return b.String()
}

// answerCols and answerRows are a result with every kind of value a driver gives, names that
// need escapes, and a name given twice.
var (
	answerCols = []string{"id", `na"me<&>`, "\u2028x", "id", "\x01ctl", "中文", ""}
	answerRows = [][]any{
		{int64(1), "plain", nil, int64(-9223372036854775808), true, 1.5, []byte("utf-8 bytes")},
		{int64(2), allASCII(), "\xff\xfe bad \u2028\u2029 é", false, 1e21, 1e-7, []byte{0xff, 0x00, 0x10}},
		{int64(3), "", 0.0, math.Copysign(0, -1), 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64},
		{nil, time.Date(2026, 12, 6, 21, 50, 1, 5, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), "a\\b", []byte{}, 1e20, 12e-7},
	}
)

// TestAnswerMatchesEncodingJSON: the answer is encoding/json's encoding of each value and name,
// in column order, for every kind of value (control characters, HTML characters, invalid UTF-8,
// U+2028/2029, binary, every float format, times).
func TestAnswerMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	want := reference(t, answerCols, answerRows)
	got, _, err := encode(answerCols, answerRows, len(want))
	if err != nil || got != want {
		t.Fatalf("answer = %q, %v\nwant     %q", got, err, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("answer is not valid JSON: %q", got)
	}
	if got, _, err := encode(answerCols, nil, 2); err != nil || got != "[]" {
		t.Errorf("no rows = %q, %v; want []", got, err)
	}
}

// TestAnswerCap: for every cap from 0 to the answer's length and beyond, the answer is either
// whole (when its length is within the cap) or errAnswerTooLarge, and its buffer never grew past
// the cap — the count is the encoder's own output, so no form (long names, NULLs, escapes)
// slips past it.
func TestAnswerCap(t *testing.T) {
	t.Parallel()
	cols := append(answerCols, strings.Repeat("n", 300))
	rows := make([][]any, len(answerRows))
	for i, r := range answerRows {
		rows[i] = append(r, strings.Repeat("\x00", 50))
	}
	full := reference(t, cols, rows)
	for limit := 0; limit <= len(full)+3; limit++ {
		got, capacity, err := encode(cols, rows, limit)
		switch {
		case limit >= len(full) && (err != nil || got != full):
			t.Fatalf("cap %d (answer %d bytes) = %v, want the whole answer", limit, len(full), err)
		case limit < len(full) && !errors.Is(err, errAnswerTooLarge):
			t.Fatalf("cap %d (answer %d bytes) = %q, %v; want errAnswerTooLarge", limit, len(full), got, err)
		case capacity > limit:
			t.Fatalf("cap %d: the buffer grew to %d bytes", limit, capacity)
		}
	}
}

// TestAnswerNotEncodable: a value JSON cannot represent fails the call as encoding/json would.
func TestAnswerNotEncodable(t *testing.T) {
	t.Parallel()
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, _, err := encode([]string{"v"}, [][]any{{v}}, 1<<20); !errors.Is(err, errNotEncodable) {
			t.Errorf("%v: err = %v, want errNotEncodable", v, err)
		}
	}
}

// FuzzAnswerString: jsonString writes what json.Marshal writes for any string, and stops within
// its bound.
func FuzzAnswerString(f *testing.F) {
	for _, s := range []string{"", allASCII(), "\xff", "\u2028\u2029", "é中文\U0001F600", "a\xc3", "<script>&amp;</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		w := bounded{max: len(want)}
		if !w.jsonString(s) || string(w.b) != string(want) {
			t.Fatalf("jsonString(%q) = %q, want %q", s, w.b, want)
		}
		short := bounded{max: len(want) - 1}
		if short.jsonString(s) || len(short.b) > short.max {
			t.Fatalf("jsonString(%q) under a cap one byte short = %q, want a refusal", s, short.b)
		}
	})
}
