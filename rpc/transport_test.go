package rpc

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/i18n"
)

const bearerAlice = "Bearer alice"

// TestFailureTable covers every row of wire-core §1.4 (with svc's deviation for malformed and
// empty JSON), the transport rules of §1.1–§1.3 and the 405 choice of doc.go.
func TestFailureTable(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 1 << 10}, testResource())
	tests := []struct {
		name       string
		req        *http.Request
		wantStatus int
		wantCode   int
		wantMsg    string // substring of the message
	}{
		{"malformed json", post(`{invalid json}`, "Authorization", bearerAlice), 400, 1400, "not a valid JSON"},
		{"empty body", post(``), 400, 1400, "not a valid JSON"},
		{"whitespace body", post("  \n"), 400, 1400, "not a valid JSON"},
		{"array body", post(`[]`), 400, 1400, "not a valid JSON"},
		{"string body", post(`"x"`), 400, 1400, "not a valid JSON"},
		{"truncated", post(`{"resource":"test/things"`), 400, 1400, "not a valid JSON"},
		{"missing resource", post(`{"action":"echo","version":"v1"}`), 400, 1400, "resource is required"},
		{"empty resource", post(`{"resource":"","action":"echo","version":"v1"}`), 400, 1400, "resource is required"},
		{"null resource", post(`{"resource":null,"action":"echo","version":"v1"}`), 400, 1400, "resource is required"},
		{"numeric resource", post(`{"resource":1,"action":"echo","version":"v1"}`), 400, 1400, "resource is invalid"},
		{"resource bad chars", post(envelopeJSON("test/th-ings", "echo", "v1", "")), 400, 1400, "resource is invalid"},
		{"missing action", post(`{"resource":"test/things","version":"v1"}`), 400, 1400, "action is required"},
		{"action with slash", post(envelopeJSON("test/things", "a/b", "v1", "")), 400, 1400, "action is invalid"},
		{"missing version", post(`{"resource":"test/things","action":"echo"}`), 400, 1400, "version is required"},
		{"version with dot", post(envelopeJSON("test/things", "echo", "v1.0", "")), 400, 1400, "version is invalid"},
		{"params not object", post(envelopeJSON("test/things", "echo", "v1", `[1]`)), 400, 1400, "params is invalid"},
		{"meta not object", post(`{"resource":"test/things","action":"echo","version":"v1","meta":"x"}`), 400, 1400, "meta is invalid"},
		{"unknown resource", post(envelopeJSON("test/nothing", "echo", "v1", "")), 404, 1200, "Resource not found"},
		{"unknown action", post(envelopeJSON("test/things", "nope", "v1", "")), 404, 1200, "Resource not found"},
		{"unknown version", post(envelopeJSON("test/things", "echo", "v3", "")), 404, 1200, "Resource not found"},
		{"unknown action with bad token", post(envelopeJSON("test/things", "nope", "v1", ""), "Authorization", "Bearer forged"), 404, 1200, "Resource not found"},
		{"urlencoded", post(`resource=test/things`, "Content-Type", "application/x-www-form-urlencoded"), 415, 1300, "Unsupported media type"},
		{"text/plain", post(envelopeJSON("test/things", "echo", "v1", ""), "Content-Type", "text/plain"), 415, 1300, "Unsupported media type"},
		{"no content type", post(envelopeJSON("test/things", "echo", "v1", ""), "Content-Type", ""), 415, 1300, "Unsupported media type"},
		{"json variant", post(envelopeJSON("test/things", "echo", "v1", ""), "Content-Type", "application/problem+json"), 415, 1300, "Unsupported media type"},
		{"too large declared", post(`{"resource":"` + strings.Repeat("a", 2000) + `"}`), 413, 1400, "too large"},
		{"too large chunked", chunked(post(`{"resource":"` + strings.Repeat("a", 2000) + `"}`)), 413, 1400, "too large"},
		{"timeout", post(envelopeJSON("test/things", "slow", "v1", ""), "Authorization", bearerAlice), 408, 1402, "Request timeout"},
		{"timeout despite late success", post(envelopeJSON("test/things", "slow_success", "v1", ""), "Authorization", bearerAlice), 408, 1402, "Request timeout"},
		{"panic", post(envelopeJSON("test/things", "panic", "v1", ""), "Authorization", bearerAlice), 500, 1900, "unexpected error"},
		{"plain error", post(envelopeJSON("test/things", "internal", "v1", ""), "Authorization", bearerAlice), 500, 1900, "unexpected error"},
		{"unencodable data", post(envelopeJSON("test/things", "bad_data", "v1", ""), "Authorization", bearerAlice), 500, 1900, "unexpected error"},
		{"business error keeps status 200", post(envelopeJSON("test/things", "business", "v1", ""), "Authorization", bearerAlice), 200, 2001, "Record not found"},
		{"wrapped rpc error", post(envelopeJSON("test/things", "wrapped", "v1", ""), "Authorization", bearerAlice), 403, 1100, "Access denied"},
		{"params validation", post(envelopeJSON("test/things", "echo", "v1", `{"id":-1}`), "Authorization", bearerAlice), 400, 1400, "id must be at least 0"},
		{"params wrong type", post(envelopeJSON("test/things", "echo", "v1", `{"id":"x"}`), "Authorization", bearerAlice), 400, 1400, "params are not valid"},
		{"GET", httptest.NewRequest(http.MethodGet, "/api", nil), 405, 1900, "Method not allowed"},
		{"PUT", withMethod(post(envelopeJSON("test/things", "echo", "v1", "")), http.MethodPut), 405, 1900, "Method not allowed"},
		{"charset allowed", post(envelopeJSON("test/things", "echo", "v1", ""), "Content-Type", "Application/JSON; charset=UTF-8", "Authorization", bearerAlice), 200, 0, "Success"},
		{"unknown keys ignored", post(`{"resource":"test/things","action":"echo","version":"v1","x":{"y":[1,"}"]},"z":null}`, "Authorization", bearerAlice), 200, 0, "Success"},
		{"escaped values", post(`{"resource":"test\/things","act\u0069on":"ech\u006f","version":"v1"}`, "Authorization", bearerAlice), 200, 0, "Success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := serve(t, e, tt.req)
			if res.Status != tt.wantStatus || res.Code != tt.wantCode {
				t.Errorf("status, code = %d, %d, want %d, %d (%s)", res.Status, res.Code, tt.wantStatus, tt.wantCode, res.Body)
			}
			if !strings.Contains(res.Message, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", res.Message, tt.wantMsg)
			}
			if got := res.Header.Get("Content-Type"); got != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", got)
			}
			if tt.wantCode != 0 && string(res.Data) != "null" {
				t.Errorf("data = %s, want null", res.Data)
			}
			if strings.Contains(string(res.Body), "hunter2") || strings.Contains(string(res.Body), "boom") {
				t.Errorf("internal cause leaked: %s", res.Body)
			}
		})
	}
}

func withMethod(r *http.Request, m string) *http.Request {
	r.Method = m
	return r
}

func chunked(r *http.Request) *http.Request {
	r.ContentLength = -1
	return r
}

func TestMethodNotAllowedHeader(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	res := serve(t, e, httptest.NewRequest(http.MethodGet, "/api", nil))
	if got := res.Header.Get("Allow"); got != http.MethodPost {
		t.Errorf("Allow = %q, want POST", got)
	}
}

func TestSuccessEnvelope(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	r := post(`{"resource":"test/things","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"n","extra":12345678901234567890123},"meta":{"page":2}}`,
		"Authorization", bearerAlice)
	r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "req-1", ClientIP: "203.0.113.9"}))
	res := serve(t, e, r)
	if res.Status != 200 || res.Code != 0 || res.Message != "Success" {
		t.Fatalf("got %d %d %q: %s", res.Status, res.Code, res.Message, res.Body)
	}
	var got echoResult
	dec := json.NewDecoder(strings.NewReader(string(res.Data)))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := echoResult{
		Params:    echoParams{ID: 9007199254740993, Name: "n", Extra: json.Number("12345678901234567890123")},
		Principal: "u-alice", Meta: json.RawMessage(`{"page":2}`),
		Resource: "test/things", Action: "echo", Version: "v1",
		ClientIP: "203.0.113.9", RequestID: "req-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(res.Body), `"id":9007199254740993`) {
		t.Errorf("int64 above 2^53 lost digits: %s", res.Body)
	}
	if h := res.Header.Get("X-Request-ID"); h != "" {
		t.Errorf("engine set X-Request-ID %q although the middleware owns it", h)
	}
}

func TestDefaultsWithoutRequestInfo(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	r := post(envelopeJSON("test/things", "public_echo", "v1", ""))
	r.RemoteAddr = "[2001:db8::1]:4242"
	res := serve(t, e, r)
	var got echoResult
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatal(err)
	}
	if got.ClientIP != "2001:db8::1" {
		t.Errorf("ClientIP = %q, want the peer address", got.ClientIP)
	}
	if got.RequestID == "" || res.Header.Get("X-Request-ID") != got.RequestID {
		t.Errorf("RequestID = %q, X-Request-ID = %q; want the same generated id", got.RequestID, res.Header.Get("X-Request-ID"))
	}
	if string(got.Meta) != "{}" || got.Principal != AnonymousID {
		t.Errorf("meta = %s, principal = %q; want {} and anonymous", got.Meta, got.Principal)
	}
}

func TestNilDataAndHandlerHeaders(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := newEngine(t, EngineConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))}, testResource())
	res := serve(t, e, post(envelopeJSON("test/things", "nothing", "v1", ""), "Authorization", bearerAlice))
	if string(res.Body) != `{"code":0,"message":"Success","data":null}` {
		t.Errorf("body = %s", res.Body)
	}
	r := post(envelopeJSON("test/things", "header", "v1", ""), "Authorization", bearerAlice)
	r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "req-h", ClientIP: "10.0.0.1"}))
	res = serve(t, e, r)
	if got := res.Header.Get("Cache-Control"); got != "private" {
		t.Errorf("Cache-Control = %q, want the handler's", got)
	}
	if l := logs.String(); !strings.Contains(l, "handled") || !strings.Contains(l, "request_id=req-h") || !strings.Contains(l, "action=header") {
		t.Errorf("handler log lacks request attributes: %s", l)
	}
}

func TestInternalErrorLogged(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := newEngine(t, EngineConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))}, testResource())
	for _, action := range []string{"internal", "panic"} {
		r := post(envelopeJSON("test/things", action, "v1", ""), "Authorization", bearerAlice)
		r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "req-" + action, ClientIP: "10.0.0.1"}))
		if res := serve(t, e, r); res.Code != CodeUnknown {
			t.Errorf("%s: code = %d", action, res.Code)
		}
	}
	l := logs.String()
	for _, want := range []string{"request_id=req-internal", "db down", "request_id=req-panic", "boom", "goroutine"} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
}

func TestZhCatalog(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{Messages: i18n.MustNew(i18n.Chinese)}, testResource())
	res := serve(t, e, post(envelopeJSON("test/things", "nope", "v1", "")))
	if res.Message != "迷路了" {
		t.Errorf("message = %q, want 迷路了", res.Message)
	}
	res = serve(t, e, post(envelopeJSON("test/things", "public_echo", "v1", "")))
	if res.Message != "成功" {
		t.Errorf("message = %q, want 成功", res.Message)
	}
}

func TestLargeAndShortBodies(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 1 << 20}, testResource())
	big := `{"resource":"test/things","action":"public_echo","version":"v1","params":{"id":1},"pad":"` + strings.Repeat("x", 300<<10) + `"}`
	if res := serve(t, e, post(big)); res.Code != 0 {
		t.Errorf("300 KiB body: code %d %q", res.Code, res.Message)
	}
	if res := serve(t, e, chunked(post(big))); res.Code != 0 {
		t.Errorf("300 KiB chunked body: code %d %q", res.Code, res.Message)
	}
	short := post(envelopeJSON("test/things", "public_echo", "v1", ""))
	short.ContentLength += 10
	if res := serve(t, e, short); res.Status != 400 || res.Code != CodeBadRequest {
		t.Errorf("body shorter than declared: %d %d", res.Status, res.Code)
	}
	limited := post(big)
	limited.Body = http.MaxBytesReader(httptest.NewRecorder(), limited.Body, 1<<10)
	limited.ContentLength = -1
	if res := serve(t, e, limited); res.Status != 413 {
		t.Errorf("outer MaxBytesReader: status %d, want 413", res.Status)
	}
}
