package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// randomValue builds a random JSON tree that hides the secrets: under masked field names at
// any depth, inside longer strings, in arrays and as keys' neighbours.
func randomValue(r *rand.Rand, depth int, plant []string) any {
	if depth == 0 || r.IntN(4) == 0 {
		switch r.IntN(4) {
		case 0:
			return plant[r.IntN(len(plant))]
		case 1:
			return "x" + plant[r.IntN(len(plant))] + strings.Repeat("y", r.IntN(40))
		case 2:
			return r.IntN(1000)
		}
		return strings.Repeat("z", r.IntN(80))
	}
	if r.IntN(3) == 0 {
		arr := make([]any, r.IntN(4)+1)
		for i := range arr {
			arr[i] = randomValue(r, depth-1, plant)
		}
		return arr
	}
	obj := map[string]any{}
	keys := []string{"Password", "TOKEN", "secret", "apiKey", "name", "data", "note", "list"}
	for range r.IntN(4) + 1 {
		obj[keys[r.IntN(len(keys))]] = randomValue(r, depth-1, plant)
	}
	return obj
}

// TestMaskingProperty: whatever the nesting and the truncation point, no configured secret
// value, Authorization value or masked field's value appears in a stored log row.
func TestMaskingProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		secret := fmt.Sprintf("SeCr3t-%d-%x", i, r.Uint64())
		authz := fmt.Sprintf("Bearer AuTh-%x", r.Uint64())
		masked := fmt.Sprintf("MaSk-%x", r.Uint64()) // only ever placed under masked field names
		plant := []string{secret, authz, "plain"}
		limit := r.IntN(300) + 1
		rec := NewRecorder(nil, config.InvocationLog{Mode: config.InvocationLogAll, CaptureLimit: config.Size(limit),
			MaskFields: []string{"apiKey"}}, time.Now, slog.New(slog.DiscardHandler))
		in := randomValue(r, 4, plant)
		if m, ok := in.(map[string]any); ok {
			m["apiKey"], m["nested"] = masked, map[string]any{"password": masked, "list": []any{map[string]any{"TOKEN": masked}}}
		}
		input, _ := json.Marshal(in)
		body, _ := json.Marshal(randomValue(r, 3, plant))
		inv := Invocation{SystemCode: "S", ContractCode: "C", FailureKind: "upstream", Input: input, Output: body,
			Err: errors.New("refused with " + secret), Secrets: []string{secret},
			Trace: []HTTPExchange{{Method: "POST", URL: "https://h/x?apiKey=" + masked + "&q=" + secret,
				RequestHeaders: map[string]string{"Authorization": authz, "X-Echo": authz + secret}, RequestBody: string(body),
				ResponseHeaders: map[string]string{"Set-Cookie": "sid=" + masked}, ResponseBody: string(input)}}}
		row := rec.Row(context.Background(), inv)
		stored, _ := json.Marshal(row)
		for _, leak := range []string{secret, strings.TrimPrefix(authz, "Bearer "), masked} {
			if strings.Contains(string(stored), leak) {
				t.Fatalf("case %d (limit %d): stored row contains %q: %s", i, limit, leak, stored)
			}
		}
		for _, c := range []json.RawMessage{row.Input, row.Output} {
			if len(c) > 0 && !json.Valid(c) {
				t.Fatalf("case %d: capture is not JSON: %s", i, c)
			}
		}
	}
}

// TestCapture covers truncation and masking rules one by one.
func TestCapture(t *testing.T) {
	t.Parallel()
	m := newMasker([]string{"SSN"}, 100, []string{"topsecret"})
	if got := string(m.capture(json.RawMessage(`{"password":"p","ssn":"1","ok":"a topsecret b"}`))); got != `{"ok":"a ****** b","password":"******","ssn":"******"}` {
		t.Errorf("capture = %s", got)
	}
	short := newMasker(nil, 100, nil)
	if got := string(short.capture(json.RawMessage(`{"Token":"t","a":[{"secret":1}]}`))); got != `{"Token":"******","a":[{"secret":"******"}]}` {
		t.Errorf("capture = %s", got)
	}
	cutter := newMasker(nil, 10, nil)
	got := string(cutter.capture(json.RawMessage(`{"a":"0123456789"}`)))
	var s string
	if json.Unmarshal([]byte(got), &s) != nil || s != `{"a":"0123`+truncatedSuffix {
		t.Errorf("truncated capture = %s, want a JSON string of 10 bytes and the suffix", got)
	}
	if got := cutter.body("héllo wörld, long"); got != "héllo wö"+truncatedSuffix {
		t.Errorf("body cut = %q", got)
	}
	if got := cut("ééé", 3); got != "é"+truncatedSuffix {
		t.Errorf("cut at a character boundary = %q", got)
	}
	h := short.headers(map[string]string{"Authorization": "a", "Cookie": "c", "X-Token": "x", "token": "t"})
	if h["authorization"] != MaskedSecret || h["cookie"] != MaskedSecret || h["x-token"] != "x" || h["token"] != MaskedSecret {
		t.Errorf("headers = %v", h)
	}
	if got := short.url("https://h/p?token=abc&q=1"); !strings.Contains(got, "token=%2A%2A%2A%2A%2A%2A") || strings.Contains(got, "abc") {
		t.Errorf("url = %s", got)
	}
}

// TestRecorderModes: off never writes, errors only failures, all everything.
func TestRecorderModes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode          config.InvocationLogMode
		okRow, errRow bool
	}{{config.InvocationLogOff, false, false}, {config.InvocationLogErrors, false, true}, {config.InvocationLogAll, true, true}} {
		r := NewRecorder(nil, config.InvocationLog{Mode: tt.mode}, time.Now, slog.New(slog.DiscardHandler))
		if r.Wants("") != tt.okRow || r.Wants("timeout") != tt.errRow {
			t.Errorf("mode %s: Wants(success, failure) = %v, %v; want %v, %v", tt.mode, r.Wants(""), r.Wants("timeout"), tt.okRow, tt.errRow)
		}
	}
}

// TestRecorderWrites stores rows on the three databases: request_id from the request, a write
// after the caller's context was canceled, find by the log resource filters, and pruning.
func TestRecorderWrites(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		d, _ := migratedDB(t, kind)
		now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		r := NewRecorder(d, config.InvocationLog{Mode: config.InvocationLogAll, CaptureLimit: 4096, Retention: time.Hour}, clock, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(rpc.WithRequestInfo(context.Background(), rpc.RequestInfo{ID: "req-1"}))
		cancel() // the caller gave up: the row is written anyway
		r.Record(ctx, Invocation{SystemCode: "S", ContractCode: "C", FailureKind: "timeout", Duration: 1500 * time.Millisecond,
			Input: json.RawMessage(`{"password":"p","id":1}`), Err: errors.New("deadline")})
		now = now.Add(2 * time.Hour)
		r.Record(context.Background(), Invocation{SystemCode: "S", ContractCode: "C", Direction: DirectionInbound, Output: json.RawMessage(`"ok"`)})
		var rows []InvocationLog
		if err := d.NewSelect().Model(&rows).OrderExpr("created_at ASC").Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("rows = %d, want 2", len(rows))
		}
		first := rows[0]
		if first.RequestID != "req-1" || first.FailureKind != "timeout" || first.DurationMs != 1500 || first.Direction != DirectionOutbound ||
			first.Error == nil || *first.Error != "deadline" || !strings.Contains(string(first.Input), `"******"`) {
			t.Errorf("first row = %+v input %s", first, first.Input)
		}
		if rows[1].Error != nil || rows[1].Direction != DirectionInbound || rows[1].FailureKind != "" {
			t.Errorf("second row = %+v", rows[1])
		}
		if err := r.Prune(context.Background()); err != nil {
			t.Fatal(err)
		}
		n, err := d.NewSelect().Model((*InvocationLog)(nil)).Count(context.Background())
		if err != nil || n != 1 {
			t.Errorf("after pruning: %d rows, %v; want 1 (the row older than the retention is gone)", n, err)
		}
	})
}

// TestStats counts calls, successes, failures by kind, durations and the last error, sorted.
func TestStats(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	s := NewStats(func() time.Time { return at })
	s.Record("B", "c", DirectionOutbound, "", 100*time.Millisecond, nil)
	s.Record("B", "c", DirectionOutbound, "timeout", 300*time.Millisecond, errors.New("slow"))
	s.Record("B", "c", DirectionOutbound, "timeout", 200*time.Millisecond, errors.New("slower"))
	s.Record("A", "", DirectionInbound, "auth", 0, errors.New("denied"))
	got := s.InvocationStats()
	if len(got) != 2 || got[0].System != "A" || got[1].System != "B" {
		t.Fatalf("stats = %+v, want A then B", got)
	}
	b := got[1]
	if b.Calls != 3 || b.Successes != 1 || b.Failures["timeout"] != 2 || b.AvgDurationMs != 200 || b.MaxDurationMs != 300 ||
		b.LastError != "slower" || !b.LastErrorAt.Equal(at) {
		t.Errorf("B = %+v", b)
	}
	if a := got[0]; a.Contract != "" || a.Failures["auth"] != 1 || a.Successes != 0 {
		t.Errorf("A = %+v", a)
	}
}
