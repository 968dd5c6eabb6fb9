package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestCall runs Engine.Call through every outcome of the in-process path: the same *Error (code
// and status) as /api for each refusal, the handler's typed result on success.
func TestCall(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{Permissions: permChecker{grants: map[string][]string{"u-alice": {"test.things.read"}}}},
		testResource())
	ctx := WithRequestInfo(context.Background(), RequestInfo{ID: "call-1", ClientIP: "10.0.0.9"})
	tests := []struct {
		name                    string
		p                       *Principal
		action, version, params string
		wantStatus, wantCode    int
		want                    any
	}{
		{name: "success", p: alice, action: "echo", params: `{"id":9007199254740993,"name":"x"}`, wantStatus: 200,
			want: echoResult{Params: echoParams{ID: 9007199254740993, Name: "x"}, Principal: "u-alice", Meta: emptyObject,
				Resource: "test/things", Action: "echo", Version: "v1", ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "version v2", p: alice, action: "echo", version: "v2", wantStatus: 200,
			want: echoResult{Principal: "u-alice", Meta: emptyObject, Resource: "test/things", Action: "echo", Version: "v2",
				ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "unknown operation", p: alice, action: "nope", wantStatus: 404, wantCode: CodeNotFound},
		{name: "unknown version", p: alice, action: "echo", version: "v9", wantStatus: 404, wantCode: CodeNotFound},
		{name: "no principal", action: "echo", wantStatus: 401, wantCode: CodeUnauthenticated},
		// issue #31: the anonymous user has no credential, so a bearer operation refuses it as
		// /api refuses a request without one, even though it needs no permission.
		{name: "anonymous principal", p: Anonymous(), action: "echo", wantStatus: 401, wantCode: CodeUnauthenticated},
		{name: "anonymous principal, permission", p: Anonymous(), action: "read", wantStatus: 401, wantCode: CodeUnauthenticated},
		{name: "public with the anonymous principal", p: Anonymous(), action: "public_echo", wantStatus: 200,
			want: echoResult{Principal: AnonymousID, Meta: emptyObject, Resource: "test/things", Action: "public_echo",
				Version: "v1", ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "HTTP-only operation", p: alice, action: "http_only", wantStatus: 404, wantCode: CodeNotFound},
		{name: "public without principal", action: "public_echo", wantStatus: 200,
			want: echoResult{Principal: AnonymousID, Meta: emptyObject, Resource: "test/things", Action: "public_echo",
				Version: "v1", ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "permission denied", p: bob, action: "read", wantStatus: 403, wantCode: CodeAccessDenied},
		{name: "permission held", p: alice, action: "read", wantStatus: 200,
			want: echoResult{Principal: "u-alice", Meta: emptyObject, Resource: "test/things", Action: "read", Version: "v1",
				ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "system bypasses permission", p: System(), action: "read", wantStatus: 200,
			want: echoResult{Principal: SystemID, Meta: emptyObject, Resource: "test/things", Action: "read", Version: "v1",
				ClientIP: "10.0.0.9", RequestID: "call-1"}},
		{name: "bad params type", p: alice, action: "echo", params: `{"id":"seven"}`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "params fail validation", p: alice, action: "echo", params: `{"id":-1}`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "business error", p: alice, action: "business", wantStatus: 200, wantCode: CodeRecordNotFound},
		{name: "wrapped business error", p: alice, action: "wrapped", wantStatus: 403, wantCode: CodeAccessDenied},
		{name: "internal error", p: alice, action: "internal", wantStatus: 500, wantCode: CodeUnknown},
		{name: "panic", p: alice, action: "panic", wantStatus: 500, wantCode: CodeUnknown},
		{name: "timeout", p: alice, action: "slow", wantStatus: 408, wantCode: CodeRequestTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Call(ctx, tt.p, "test/things", tt.action, tt.version, json.RawMessage(tt.params))
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Call = %v, want success", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || err != error(re) {
				t.Fatalf("Call error = %#v, want an *Error", err)
			}
			if re.Code != tt.wantCode || re.HTTPStatus() != tt.wantStatus {
				t.Errorf("error code/status = %d/%d, want %d/%d", re.Code, re.HTTPStatus(), tt.wantCode, tt.wantStatus)
			}
			if got != nil {
				t.Errorf("result = %v, want nil with an error", got)
			}
		})
	}
}

// TestCallRateLimit: in-process calls count against the operation's window like /api calls,
// keyed by principal and client IP.
func TestCallRateLimit(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEngine(t, EngineConfig{Clock: clock.Now}, testResource())
	ctx := WithRequestInfo(context.Background(), RequestInfo{ID: "call-1", ClientIP: "192.0.2.1"}) // post's peer
	for i := range 2 {
		if _, err := e.Call(ctx, alice, "test/things", "limited", "", nil); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if _, err := e.Call(ctx, alice, "test/things", "limited", "", nil); !errors.Is(err, ErrTooManyRequests) {
		t.Errorf("third call = %v, want ErrTooManyRequests (429/1401)", err)
	}
	if _, err := e.Call(ctx, bob, "test/things", "limited", "", nil); err != nil {
		t.Errorf("another principal's first call = %v, want success", err)
	}
	serveRes := serve(t, e, post(envelopeJSON("test/things", "limited", "v1", `{}`), "Authorization", bearerAlice))
	if serveRes.Code != CodeTooManyRequests {
		t.Errorf("/api after the in-process calls: code %d, want %d (one window for both paths)", serveRes.Code, CodeTooManyRequests)
	}
	clock.Add(2 * time.Minute)
	if _, err := e.Call(ctx, alice, "test/things", "limited", "", nil); err != nil {
		t.Errorf("call after the window = %v, want success", err)
	}
}

// TestCallAudit: an audited operation called in process emits the record /api would, for a
// success and a refusal alike; an unaudited one emits none.
func TestCallAudit(t *testing.T) {
	t.Parallel()
	e, clock, sink := auditEngine(t)
	start := clock.Now()
	ctx := WithRequestInfo(context.Background(), RequestInfo{ID: "req-slow", ClientIP: "10.1.1.1"})
	_, _ = e.Call(ctx, alice, "audit", "slow", "v1", nil)
	_, _ = e.Call(ctx, alice, "audit", "slow", "v1", nil) // 429
	_, _ = e.Call(ctx, nil, "audit", "slow", "v1", nil)   // 401
	_, _ = e.Call(ctx, alice, "audit", "quiet", "v1", nil)
	base := AuditRecord{RequestID: "req-slow", Resource: "audit", Action: "slow", Version: "v1", Principal: alice, ClientIP: "10.1.1.1"}
	want := []AuditRecord{base, base, base}
	want[0].Start, want[0].Duration, want[0].Status, want[0].OK = start, 250*time.Millisecond, http.StatusOK, true
	want[1].Start, want[1].Code, want[1].Status = start.Add(250*time.Millisecond), CodeTooManyRequests, http.StatusTooManyRequests
	want[2].Start, want[2].Code, want[2].Status, want[2].Principal = start.Add(250*time.Millisecond), CodeUnauthenticated, http.StatusUnauthorized, nil
	if diff := cmp.Diff(want, sink.records(), cmpopts.EquateComparable(time.Time{})); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

// TestCallRequestID: without a RequestInfo in ctx, the call gets a fresh request id.
func TestCallRequestID(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	got, err := e.Call(context.Background(), alice, "test/things", "echo", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if id := got.(echoResult).RequestID; len(id) != 36 {
		t.Errorf("request id = %q, want a UUID", id)
	}
}

// TestCallCredential (issue #31): the in-process request carries the caller's credential, and
// only it, in its Authorization header, as /api's request does; a caller without one (Call)
// sends none. An HTTP-only operation is refused in process but served over /api.
func TestCallCredential(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	ctx := context.Background()
	tests := []struct {
		name string
		call func() (any, error)
		want credentialSeen
	}{
		{"CallAs with a credential", func() (any, error) {
			return e.CallAs(ctx, Caller{Principal: alice, Authorization: bearerAlice}, "test/things", "credential", "", nil)
		}, credentialSeen{Authorization: bearerAlice}},
		{"CallAs without a credential", func() (any, error) {
			return e.CallAs(ctx, Caller{Principal: alice}, "test/things", "credential", "", nil)
		}, credentialSeen{}},
		{"Call", func() (any, error) { return e.Call(ctx, System(), "test/things", "credential", "", nil) }, credentialSeen{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err != nil {
				t.Fatalf("call = %v, want success", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request seen by the handler (-want +got):\n%s", diff)
			}
		})
	}
	res := serve(t, e, post(envelopeJSON("test/things", "credential", "v1", `{}`), "Authorization", bearerAlice))
	if want := `{"Authorization":"` + bearerAlice + `","Files":false}`; res.Code != 0 || string(res.Data) != want {
		t.Errorf("/api credential = %d %s, want 0 %s (the same request view as in process)", res.Code, res.Data, want)
	}
	if res := serve(t, e, post(envelopeJSON("test/things", "http_only", "v1", `{}`), "Authorization", bearerAlice)); res.Code != 0 {
		t.Errorf("/api http_only = %d %s, want 0: HTTPOnly restricts in-process calls only", res.Code, res.Message)
	}
	_, err := e.CallAs(ctx, Caller{Principal: alice, Authorization: bearerAlice}, "test/things", "http_only", "", nil)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("CallAs http_only = %v, want ErrNotFound", err)
	}
}

// TestCallerLogValue: a logged Caller shows whether it has a credential, never the credential.
func TestCallerLogValue(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("call", "caller", Caller{Principal: alice, Authorization: "Bearer s3cret"})
	if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "caller.authorization=true") {
		t.Errorf("log line = %q, want the credential's presence without its value", out)
	}
}
