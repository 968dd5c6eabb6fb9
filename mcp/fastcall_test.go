package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/bypass"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// textParams and bench/text answer a string holding characters JSON encoders treat specially,
// so the comparison below covers escaping.
type textParams struct {
	S string `json:"s"`
}

func text(_ context.Context, _ rpc.Call, p textParams) (map[string]string, error) {
	return map[string]string{"s": p.S + ` <b>&"é"</b> ` + "\u2028\t"}, nil
}

// fastServer has bench/echo, bench/text and bench/secret (permission bench.secret, which
// nobody of the test holds).
func fastServer(t *testing.T) *svctest.Server {
	mod := func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Resources: []rpc.Resource{{Name: "bench", Ops: []rpc.Op{
			rpc.Handle("echo", echo), rpc.Handle("text", text),
			rpc.Handle("secret", echo, rpc.RequiredPermission("bench.secret")),
		}}}}, nil
	}
	return newServer(t, config.SQLite, svctest.WithOptions(svc.WithModule(mod)),
		svctest.WithConfig(func(c *config.Config) { c.API.RateLimit.Max = 1 << 30 }))
}

// response is what a client sees of an answer.
type response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// postMCP sends body to /mcp in process with the given extra headers.
func postMCP(h http.Handler, token, body string, headers map[string]string) response {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := response{Status: rec.Code, Body: rec.Body.String(), Headers: map[string]string{}}
	for _, k := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id", "Allow"} {
		got.Headers[k] = rec.Header().Get(k)
	}
	return got
}

// TestFastCallMatchesSDK: every request is answered with the same status, headers and bytes
// whether the fast path is on or off, and the fast path serves exactly the requests it claims
// (one tools/call of an operation tool in a protocol version before 2026-07-28).
func TestFastCallMatchesSDK(t *testing.T) {
	t.Parallel()
	srv := fastServer(t)
	h := srv.Handler()
	admin := srv.Token(t, svctest.User("ada", "admin"))
	plain := srv.Token(t, svctest.User("bob"))
	call := func(id, name, args string) string {
		b := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"`
		if args != "" {
			b += `,"arguments":` + args
		}
		return b + `}}`
	}
	// call2026 is a tools/call of bench.echo in protocol 2026-07-28 with the given client
	// capabilities and further _meta members.
	call2026 := func(id, caps, more string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"` +
			`,"io.modelcontextprotocol/clientCapabilities":` + caps + more + `},"name":"bench.echo","arguments":{"a":7}}}`
	}
	hdr2026 := func(name string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	tests := []struct {
		name    string
		token   string
		body    string
		headers map[string]string
		fast    bool
	}{
		{"echo, numeric id", admin, call("1", "bench.echo", `{"a":7}`), nil, true},
		{"echo, large id", admin, call("123456789012345", "bench.echo", `{"a":7}`), nil, true},
		{"echo, negative id", admin, call("-3", "bench.echo", `{"a":7}`), nil, true},
		{"echo, string id", admin, call(`"req-1"`, "bench.echo", `{"a":7}`), nil, true},
		{"echo, no arguments", admin, call("2", "bench.echo", ""), nil, true},
		{"echo, spaced arguments", admin, call("2", "bench.echo", ` { "a" : 8 } `), nil, true},
		{"echo, bad params", admin, call("3", "bench.echo", `{"a":"x"}`), nil, true},
		{"text escaping", admin, call("4", "bench.text", `{"s":"<&>"}`), nil, true},
		{"permission denied", plain, call("5", "bench.secret", `{"a":1}`), nil, true},
		{"operation of sys", admin, call("6", "sys.schema.get_table_schema", `{}`), nil, true},
		{"version 2025-06-18", admin, call("7", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, true},
		{"version 2025-11-25", admin, call("8", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, true},
		{"version 2025-03-26", admin, call("9", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, true},
		{"version 2024-11-05", admin, call("10", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Protocol-Version": "2024-11-05"}, true},
		{"accept wildcard", admin, call("11", "bench.echo", `{"a":7}`), map[string]string{"Accept": "*/*"}, true},
		{"content type charset", admin, call("12", "bench.echo", `{"a":7}`), map[string]string{"Content-Type": "application/json; charset=utf-8"}, true},

		{"2026-07-28", admin, call2026("40", `{"roots":{"listChanged":true}}`, `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"v"}`), hdr2026("bench.echo"), true},
		{"2026-07-28 without client info", admin, call2026("41", `{}`, ``), hdr2026("bench.echo"), true},
		{"2026-07-28 permission denied", plain, strings.Replace(call2026("42", `{}`, ``), "bench.echo", "bench.secret", 1), hdr2026("bench.secret"), true},

		{"2026-07-28 without Mcp-Name", admin, call2026("43", `{}`, ``), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, false},
		{"2026-07-28 other Mcp-Name", admin, call2026("44", `{}`, ``), hdr2026("bench.text"), false},
		{"2026-07-28 without Mcp-Method", admin, call2026("45", `{}`, ``), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": "bench.echo"}, false},
		{"2026-07-28 without _meta", admin, call("46", "bench.echo", `{"a":7}`), hdr2026("bench.echo"), false},
		{"2026-07-28 _meta version differs", admin, strings.Replace(call2026("47", `{}`, ``), `"2026-07-28"`, `"2025-11-25"`, 1), hdr2026("bench.echo"), false},
		{"2026-07-28 no capabilities", admin, strings.Replace(call2026("48", `{}`, ``), `,"io.modelcontextprotocol/clientCapabilities":{}`, ``, 1), hdr2026("bench.echo"), false},
		{"2026-07-28 bad capabilities", admin, call2026("49", `{"roots":5}`, ``), hdr2026("bench.echo"), false},
		{"2026-07-28 null client info", admin, call2026("50", `{}`, `,"io.modelcontextprotocol/clientInfo":null`), hdr2026("bench.echo"), false},
		{"2026-07-28 bad client info", admin, call2026("51", `{}`, `,"io.modelcontextprotocol/clientInfo":{"name":5}`), hdr2026("bench.echo"), false},
		{"2026-07-28 progress token", admin, call2026("52", `{}`, `,"progressToken":1`), hdr2026("bench.echo"), false},
		{"2026-07-28 param header", admin, call2026("53", `{}`, ``), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "bench.echo", "Mcp-Param-A": "7"}, false},
		{"2025-11-25 with _meta", admin, strings.Replace(call2026("54", `{}`, ``), `"2026-07-28"`, `"2025-11-25"`, 1), map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, false},
		{"unknown version", admin, call("20", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, false},
		{"accept json only", admin, call("21", "bench.echo", `{"a":7}`), map[string]string{"Accept": "application/json"}, false},
		{"wrong content type", admin, call("22", "bench.echo", `{"a":7}`), map[string]string{"Content-Type": "text/plain"}, false},
		{"session header", admin, call("23", "bench.echo", `{"a":7}`), map[string]string{"Mcp-Session-Id": "abc"}, false},
		{"last event id", admin, call("24", "bench.echo", `{"a":7}`), map[string]string{"Last-Event-ID": "x_1"}, false},
		{"fractional id", admin, call("1.5", "bench.echo", `{"a":7}`), nil, false},
		{"leading zero id", admin, call("-0", "bench.echo", `{"a":7}`), nil, false},
		{"escaped string id", admin, call(`"a\u0041"`, "bench.echo", `{"a":7}`), nil, false},
		{"null id", admin, call("null", "bench.echo", `{"a":7}`), nil, false},
		{"null arguments", admin, call("25", "bench.echo", `null`), nil, false},
		{"array arguments", admin, call("26", "bench.echo", `[1]`), nil, false},
		{"unknown tool", admin, call("27", "bench.nope", `{}`), nil, false},
		{"database_query", admin, call("28", "database_query", `{"sql":"SELECT 1 AS one"}`), nil, true},
		{"database_query escapes", admin, call("60", "database_query", `{"sql": "SELECT '<&>\\\"' || char(1, 10, 8232) AS \"k\"\"<\", x'ff00' AS b"}`), nil, true},
		{"database_query truncated, 90 KB", admin, call("61", "database_query", `{"sql":"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1001) SELECT i, printf('%.80c', 'é') AS s FROM c"}`), nil, true},
		{"database_query error", admin, call("62", "database_query", `{"sql":"SELECT nope"}`), nil, true},
		{"database_query denied", plain, call("63", "database_query", `{"sql":"SELECT 1"}`), nil, true},
		{"database_query 2026-07-28", admin, strings.Replace(strings.Replace(call2026("64", `{}`, ``), `"bench.echo"`, `"database_query"`, 1), `{"a":7}`, `{"sql":"SELECT 2 AS two"}`, 1), hdr2026("database_query"), true},
		{"progress token", admin, `{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"bench.echo","arguments":{"a":7}}}`, nil, false},
		{"extra member", admin, `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"bench.echo"},"x":1}`, nil, false},
		{"batch", admin, `[` + call("31", "bench.echo", `{"a":7}`) + `]`, nil, false},
		{"tools/list", admin, `{"jsonrpc":"2.0","id":32,"method":"tools/list","params":{}}`, nil, false},
		{"notification", admin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, false},
		{"malformed", admin, `{"jsonrpc":"2.0","id":33,`, nil, false},
		{"empty body", admin, ``, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.MCP().SetFastPath(false)
			want := postMCP(h, tt.token, tt.body, tt.headers)
			srv.MCP().SetFastPath(true)
			before := srv.MCP().FastCalls()
			got := postMCP(h, tt.token, tt.body, tt.headers)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fast path answer differs from the SDK's (-sdk +fast):\n%s", diff)
			}
			if served := srv.MCP().FastCalls() > before; served != tt.fast {
				t.Errorf("served by the fast path = %t, want %t", served, tt.fast)
			}
		})
	}
}

// TestFastCallSDKClient: the SDK's own client, over real HTTP, calls an operation tool; the
// answer is right and it was served by the fast path.
func TestFastCallSDKClient(t *testing.T) {
	t.Parallel()
	srv := fastServer(t)
	cs := session(t, srv, svctest.User("ada", "admin"))
	before := srv.MCP().FastCalls()
	text, isErr := call(t, cs, "bench.echo", map[string]any{"a": 9})
	if isErr || text != `{"a":9}` {
		t.Errorf("bench.echo = %q (error %t), want {\"a\":9}", text, isErr)
	}
	t.Logf("protocol %s", cs.InitializeResult().ProtocolVersion)
	want := int64(1)
	if !bypass.On(bypass.MCPFastCall) {
		want = 0 // SVC_BYPASS_OFF: the SDK answers, with the same text
	}
	if got := srv.MCP().FastCalls() - before; got != want {
		t.Errorf("fast path served %d calls, want %d", got, want)
	}
}

// TestSDKOnly: with Options.SDKOnly the SDK answers operation tool calls too.
func TestSDKOnly(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, svctest.WithOptions(svc.WithMCP(mcp.Options{SDKOnly: true})))
	cs := session(t, srv, svctest.User("ada", "schema"))
	if text, isErr := call(t, cs, "sys.schema.list_tables", map[string]any{}); isErr || !strings.Contains(text, "sys_security_user") {
		t.Errorf("sys.schema.list_tables = %q (error %t), want the tables", text, isErr)
	}
	if n := srv.MCP().FastCalls(); n != 0 {
		t.Errorf("fast path served %d calls, want 0 with SDKOnly", n)
	}
}
