package id

import (
	"encoding/binary"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestNew: canonical UUIDv7 strings, unique and strictly increasing within a process.
func TestNew(t *testing.T) {
	t.Parallel()
	prev := ""
	for i := range 1000 {
		id := New()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || len(id) != 36 || id <= prev {
			t.Fatalf("id %d = %q (previous %q, parse error %v): want a canonical UUIDv7, increasing", i, id, prev, err)
		}
		prev = id
	}
}

var shortPattern = regexp.MustCompile(`^[0-9a-v]{20}$`)

// TestNewShort (issue #32 item 8: push's message ids come from the one ID source): 20
// characters of lower-case base32hex (the push wire's id shape), unique and strictly increasing,
// and the first 48 bits are the UUIDv7's Unix milliseconds (the hand-written xid carried
// seconds, so this fails on it).
func TestNewShort(t *testing.T) {
	t.Parallel()
	before := time.Now().UnixMilli()
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewShort()
		if len(id) != 20 || !shortPattern.MatchString(id) || seen[id] || id <= prev {
			t.Fatalf("id %d = %q (previous %q): want 20 characters [0-9a-v], unique, increasing", i, id, prev)
		}
		seen[id], prev = true, id
	}
	after := time.Now().UnixMilli()
	b, err := shortEncoding.DecodeString(prev[:16]) // 80 bits: the time, the sequence, 20 random bits
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(binary.BigEndian.Uint64(append([]byte{0, 0}, b[:6]...)))
	if ms < before || ms > after+1 { // +1: the sequence may carry into the next millisecond
		t.Errorf("time in %q = %d ms, want within [%d, %d]", prev, ms, before, after)
	}
}
