package approval

import (
	"errors"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/rpc"
)

// TestBackoff: 1 s doubling per failed attempt, capped at 1 h.
func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 12: 2048 * time.Second,
		13: time.Hour, 100: time.Hour} {
		if got := backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestRecordKey: a single key column takes the reference verbatim, a composite key a JSON object
// of exactly its columns (numbers kept exact); the target hash ignores the key's order and the
// table's case.
func TestRecordKey(t *testing.T) {
	one := &BusinessBinding{TableName: "Orders", KeyColumns: []string{"id"}}
	two := &BusinessBinding{TableName: "lines", KeyColumns: []string{"region", "no"}}
	if k, err := recordKey(one, `{"id":1}`); err != nil || k["id"] != `{"id":1}` {
		t.Errorf("single key = %v, %v", k, err)
	}
	k, err := recordKey(two, `{"no":12345678901234567890,"region":"eu"}`)
	if err != nil || k["no"] != "12345678901234567890" || k["region"] != "eu" {
		t.Errorf("composite key = %v, %v", k, err)
	}
	for _, bad := range []string{`eu-7`, `[1]`, `{"region":"eu"}`, `{"region":"eu","no":1,"x":2}`, `{"region":true,"no":1}`, `null`} {
		var re *rpc.Error
		if _, err := recordKey(two, bad); !errors.As(err, &re) || re.Code != ErrCodeInvalidBusinessRef {
			t.Errorf("recordKey(%s) = %v, want 40109", bad, err)
		}
	}
	a := targetHash("Lines", map[string]string{"region": "eu", "no": "7"})
	if b := targetHash("lines", map[string]string{"no": "7", "region": "eu"}); a != b || len(a) != 64 {
		t.Errorf("target hashes %s, %s", a, b)
	}
}

// TestColumnValue: what a generated column stores of a form value.
func TestColumnValue(t *testing.T) {
	cases := []struct {
		typ  design.ColumnType
		in   any
		want any
	}{
		{design.ColumnText, "x", "x"}, {design.ColumnString, "", ""}, {design.ColumnDate, "", nil},
		{design.ColumnDecimal, 1.5, 1.5}, {design.ColumnBoolean, true, true}, {design.ColumnText, nil, nil},
		{design.ColumnJSON, []any{"a"}, `["a"]`}, {design.ColumnJSON, "s", `"s"`}, {design.ColumnText, map[string]any{"k": 1.0}, `{"k":1}`},
	}
	for _, c := range cases {
		if got := columnValue(c.typ, c.in); got != c.want {
			t.Errorf("columnValue(%s, %v) = %v, want %v", c.typ, c.in, got, c.want)
		}
	}
}
