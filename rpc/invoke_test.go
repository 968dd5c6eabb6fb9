package rpc

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// auditEngine is an engine whose "audit" resource has an audited operation that takes 250 ms
// on the returned clock and allows one call a minute, an audited failing one and an unaudited
// one; sink collects the records.
func auditEngine(t *testing.T) (e *Engine, clock *fakeClock, sink *auditLog) {
	clock, sink = newFakeClock(), &auditLog{}
	e = newEngine(t, EngineConfig{Clock: clock.Now, Audit: sink}, Resource{Name: "audit", Ops: []Op{
		Handle("slow", func(context.Context, Call, NoParams) (any, error) {
			clock.Add(250 * time.Millisecond)
			return nil, nil
		}, Audit(), RateLimit(1, time.Minute)),
		Handle("fails", func(context.Context, Call, NoParams) (any, error) { return nil, ErrRecordNotFound }, Audit()),
		Handle("quiet", func(context.Context, Call, NoParams) (any, error) { return nil, nil }),
	}})
	return e, clock, sink
}

func TestAudit(t *testing.T) {
	t.Parallel()
	e, clock, sink := auditEngine(t)
	start := clock.Now()
	call := func(action, token string) {
		r := post(envelopeJSON("audit", action, "v1", ""), "Authorization", token)
		r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "req-" + action, ClientIP: "10.1.1.1"}))
		serve(t, e, r)
	}
	call("slow", bearerAlice)
	call("slow", bearerAlice) // 429
	call("slow", "")          // 401
	call("fails", bearerAlice)
	call("quiet", bearerAlice)
	call("nope", bearerAlice) // 404: no operation, no record
	base := AuditRecord{RequestID: "req-slow", Resource: "audit", Action: "slow", Version: "v1", Principal: alice, ClientIP: "10.1.1.1"}
	rec := func(mod func(*AuditRecord)) AuditRecord {
		r := base
		mod(&r)
		return r
	}
	want := []AuditRecord{
		rec(func(r *AuditRecord) { r.Start, r.Duration, r.Status, r.OK = start, 250*time.Millisecond, 200, true }),
		rec(func(r *AuditRecord) {
			r.Start, r.Code, r.Status = start.Add(250*time.Millisecond), CodeTooManyRequests, http.StatusTooManyRequests
		}),
		rec(func(r *AuditRecord) {
			r.Start, r.Code, r.Status, r.Principal = start.Add(250*time.Millisecond), CodeUnauthenticated, http.StatusUnauthorized, nil
		}),
		rec(func(r *AuditRecord) {
			r.RequestID, r.Action, r.Start, r.Code, r.Status = "req-fails", "fails", start.Add(250*time.Millisecond), CodeRecordNotFound, 200
		}),
	}
	if diff := cmp.Diff(want, sink.records(), cmpopts.EquateComparable(time.Time{})); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

func TestPanicAuditedAndRecovered(t *testing.T) {
	t.Parallel()
	sink := &auditLog{}
	e := newEngine(t, EngineConfig{Audit: sink}, Resource{Name: "p", Ops: []Op{
		Handle("x", func(context.Context, Call, NoParams) (any, error) { panic(42) }, Audit()),
	}})
	res := serve(t, e, post(envelopeJSON("p", "x", "v1", ""), "Authorization", bearerAlice))
	if res.Status != 500 || res.Code != CodeUnknown {
		t.Fatalf("got %d %d", res.Status, res.Code)
	}
	if recs := sink.records(); len(recs) != 1 || recs[0].Code != CodeUnknown || recs[0].Status != 500 || recs[0].OK {
		t.Errorf("audit = %+v", recs)
	}
}

func TestAbortHandlerPanicPropagates(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, Resource{Name: "p", Ops: []Op{
		Handle("x", func(context.Context, Call, NoParams) (any, error) { panic(http.ErrAbortHandler) }, Public()),
	}})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	serve(t, e, post(envelopeJSON("p", "x", "v1", "")))
	t.Error("ServeHTTP returned normally")
}

func TestHandlerSeesDeadline(t *testing.T) {
	t.Parallel()
	got := make(chan time.Duration, 1)
	e := newEngine(t, EngineConfig{}, Resource{Name: "d", Ops: []Op{
		Handle("default", func(ctx context.Context, _ Call, _ NoParams) (any, error) {
			dl, _ := ctx.Deadline()
			got <- time.Until(dl)
			return nil, nil
		}, Public()),
	}})
	serve(t, e, post(envelopeJSON("d", "default", "v1", "")))
	if d := <-got; d <= 25*time.Second || d > DefaultTimeout {
		t.Errorf("deadline in %s, want about DefaultTimeout", d)
	}
}

// TestConcurrentRequests runs the engine from many goroutines (meaningful under -race).
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{DefaultLimit: Limit{Max: 1 << 20}}, testResource())
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 50 {
				action := [...]string{"echo", "public_echo", "nope", "panic"}[i%4]
				res := serve(t, e, post(envelopeJSON("test/things", action, "v1", `{"id":1}`), "Authorization", bearerAlice))
				want := map[string]int{"echo": 0, "public_echo": 0, "nope": 1200, "panic": 1900}[action]
				if res.Code != want {
					t.Errorf("%s: code = %d, want %d", action, res.Code, want)
				}
			}
		})
	}
	wg.Wait()
}

// TestAuditData: an audited operation's record carries its params, meta and result with the
// values of credential-like keys redacted at any depth; a value past MaxAuditValueBytes is
// replaced by its size; a failed call carries no result.
func TestAuditData(t *testing.T) {
	t.Parallel()
	sink := &auditLog{}
	type result struct {
		ID          int    `json:"id"`
		AccessToken string `json:"accessToken"`
	}
	e := newEngine(t, EngineConfig{Audit: sink}, Resource{Name: "a", Ops: []Op{
		Handle("ok", func(context.Context, Call, map[string]any) (any, error) {
			return result{ID: 7, AccessToken: "tok-123"}, nil
		}, Audit()),
		Handle("fails", func(context.Context, Call, map[string]any) (any, error) { return nil, ErrRecordNotFound }, Audit()),
	}})
	body := `{"resource":"a","action":"ok","version":"v1","params":{"name":"x","newPassword":"hunter2",` +
		`"items":[{"client_secret":"s1","n":1}],"n":2},"meta":{"X-Api-Key":"k1","page":1}}`
	serve(t, e, post(body, "Authorization", bearerAlice))
	big := `{"blob":"` + strings.Repeat("a", MaxAuditValueBytes) + `"}`
	serve(t, e, post(envelopeJSON("a", "fails", "v1", big), "Authorization", bearerAlice))
	recs := sink.records()
	if len(recs) != 2 {
		t.Fatalf("records = %d, want 2", len(recs))
	}
	wantParams := map[string]any{"name": "x", "newPassword": RedactedAuditValue, "n": json.Number("2"),
		"items": []any{map[string]any{"client_secret": RedactedAuditValue, "n": json.Number("1")}}}
	wantMeta := map[string]any{"X-Api-Key": RedactedAuditValue, "page": json.Number("1")}
	wantResult := map[string]any{"id": json.Number("7"), "accessToken": RedactedAuditValue}
	if diff := cmp.Diff([]any{wantParams, wantMeta, wantResult}, []any{recs[0].Params, recs[0].Meta, recs[0].Result}); diff != "" {
		t.Errorf("audit data (-want +got):\n%s", diff)
	}
	want := TruncatedAuditValue{Truncated: true, Bytes: len(big)}
	if recs[1].Params != want || recs[1].Result != nil || recs[1].Meta != nil {
		t.Errorf("failed call: params %v, meta %v, result %v; want %v, nil, nil", recs[1].Params, recs[1].Meta, recs[1].Result, want)
	}
}

func TestAuditRedacts(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{"password": true, "PWD": true, "refresh_token": true, "clientSecret": true,
		"credentials": true, "Authorization": true, "api-key": true, "name": false, "tokenizer": true, "id": false, "page": false} {
		if got := AuditRedacts(key); got != want {
			t.Errorf("AuditRedacts(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestAuditSinks: every non-nil sink gets each record, in order.
func TestAuditSinks(t *testing.T) {
	t.Parallel()
	a, b := &auditLog{}, &auditLog{}
	AuditSinks(a, nil, b).Audit(context.Background(), AuditRecord{RequestID: "r1"})
	if ra, rb := a.records(), b.records(); len(ra) != 1 || len(rb) != 1 || ra[0].RequestID != "r1" || rb[0].RequestID != "r1" {
		t.Errorf("sinks got %v and %v, want the record in both", ra, rb)
	}
}

// TestAuditRecordEvent: a record becomes the svc.api.request.audit payload (wire-runtime §2.9):
// userId from the principal (null without one), params and meta objects ({} when absent), the
// result data, the duration in milliseconds.
func TestAuditRecordEvent(t *testing.T) {
	t.Parallel()
	id := "u1"
	tests := []struct {
		name string
		rec  AuditRecord
		want AuditEvent
	}{
		{"authenticated success", AuditRecord{RequestID: "r1", Resource: "shop/order", Action: "create", Version: "1",
			Principal: &Principal{ID: id}, ClientIP: "10.0.0.1", UserAgent: "ua", Duration: 1500 * time.Millisecond,
			Params: map[string]any{"a": 1.0}, Meta: map[string]any{"m": "x"}, Result: "data"},
			AuditEvent{Resource: "shop/order", Action: "create", Version: "1", UserID: &id, UserAgent: "ua", RequestID: "r1",
				RequestIP: "10.0.0.1", RequestParams: map[string]any{"a": 1.0}, RequestMeta: map[string]any{"m": "x"},
				ResultData: "data", ElapsedTime: 1500}},
		{"anonymous failure", AuditRecord{RequestID: "r2", Code: CodeUnauthenticated},
			AuditEvent{RequestID: "r2", RequestParams: map[string]any{}, RequestMeta: map[string]any{}, ResultCode: CodeUnauthenticated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.rec.Event()); diff != "" {
				t.Errorf("Event() (-want +got):\n%s", diff)
			}
			if got := tt.rec.Event().EventType(); got != EventRequestAudit {
				t.Errorf("EventType = %q, want %q", got, EventRequestAudit)
			}
		})
	}
}
