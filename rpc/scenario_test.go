package rpc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// The scenario tables of issue #3: every row of wire-core §1.4 and §3.3, the rate-limit rules of
// §4 and the body encodings of §6, through the real server (svctest.New: the default boot chain
// on a fresh SQLite database) with a host module (svc.WithModule).

// scenarioBodyLimit is svc.app.body_limit of the main scenario server: small, so the 413 rows
// need only a few KiB.
const scenarioBodyLimit = 4 * config.KiB

// bigID is above 2^53: a float64 round trip would turn it into 9007199254740992.
const bigID int64 = 9007199254740993

// present in wantHeader asks only that the header is set and not empty.
const present = "<present>"

// noContentType as a scenario's contentType sends no Content-Type header.
const noContentType = "-"

// Permission tokens of the test resource: testChecker grants the first to role "tester" and
// fails on the second.
const (
	permGuarded = "test.guarded"
	permBroken  = "test.broken"
)

type echoParams struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type uploadResult struct {
	Field    string `json:"field"`
	Filename string `json:"filename"`
	Content  string `json:"content"`
}

func echo(_ context.Context, _ rpc.Call, p echoParams) (echoParams, error) { return p, nil }

// slow waits for its 50ms operation timeout, as a handler must: it honours ctx.
func slow(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func explode(context.Context, rpc.Call, rpc.NoParams) (any, error) { panic("handler exploded") }

// leakyCause is the internal cause of test/echo fail: it must never reach the client.
const leakyCause = "dsn postgres://svc:hunter2@db/svc refused"

func fail(context.Context, rpc.Call, rpc.NoParams) (any, error) {
	return nil, fmt.Errorf("load order: %s", leakyCause)
}

// upload reads the file part "file" streamed from a multipart envelope.
func upload(_ context.Context, c rpc.Call, _ rpc.NoParams) (uploadResult, error) {
	if c.Files == nil {
		return uploadResult{}, rpc.ErrBadRequest.WithMessage("multipart expected")
	}
	f, ok, err := c.Files.File("file")
	if err != nil {
		return uploadResult{}, err
	}
	if !ok {
		return uploadResult{}, rpc.ErrBadRequest.WithMessage("file is required")
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return uploadResult{}, err
	}
	return uploadResult{Field: f.Field(), Filename: f.Filename(), Content: string(b)}, nil
}

// testResource is the host resource test/echo mounted on every scenario server.
func testResource() rpc.Resource {
	return rpc.Resource{Name: "test/echo", Ops: []rpc.Op{
		rpc.Handle("echo", echo),
		rpc.Handle("echo", echo, rpc.Version("v2")),
		rpc.Handle("public_echo", echo, rpc.Public()),
		rpc.Handle("slow", slow, rpc.Timeout(50*time.Millisecond)),
		rpc.Handle("panic", explode),
		rpc.Handle("fail", fail),
		rpc.Handle("guarded", echo, rpc.RequiredPermission(permGuarded)),
		rpc.Handle("broken_check", echo, rpc.RequiredPermission(permBroken)),
		rpc.Handle("system_only", echo, rpc.Auth(systemStrategy{}.Name()), rpc.RequiredPermission(permBroken)),
		rpc.Handle("limited", echo, rpc.RateLimit(2, time.Minute)),
		rpc.Handle("upload", upload),
	}}
}

// systemStrategy authenticates everyone as the system principal, to show that it bypasses the
// permission check (wire-core §3.3).
type systemStrategy struct{}

func (systemStrategy) Name() string { return "test_system" }

func (systemStrategy) Authenticate(context.Context, rpc.AuthRequest) (*rpc.Principal, error) {
	return rpc.System(), nil
}

var errCheckerDown = errors.New("permission store unreachable")

// testChecker grants permGuarded to role "tester" and fails on permBroken.
type testChecker struct{}

func (testChecker) HasPermission(_ context.Context, p *rpc.Principal, token string) (bool, error) {
	if token == permBroken {
		return false, errCheckerDown
	}
	return token == permGuarded && slices.Contains(p.Roles, "tester"), nil
}

// newScenarioServer boots the real server with the test resource, the system strategy and the
// test checker.
func newScenarioServer(t *testing.T, opts ...svctest.Option) *svctest.Server {
	t.Helper()
	base := svctest.WithOptions(
		svc.WithModule(func(app.Deps) (app.Module, error) {
			return app.Module{Name: "test", Resources: []rpc.Resource{testResource()}, Strategies: []rpc.Strategy{systemStrategy{}}}, nil
		}),
		svc.WithPermissionChecker(testChecker{}),
	)
	return svctest.New(t, append([]svctest.Option{base}, opts...)...)
}

// scenario is one request and what must come back.
type scenario struct {
	name string

	method      string              // default POST
	contentType string              // default application/json; noContentType sends none
	header      map[string]string   // extra request headers
	env         map[string]any      // the envelope, encoded as JSON when body is empty
	body        string              // the raw body, sent as is
	encode      func([]byte) []byte // transport encoding applied to the body
	chunked     bool                // hide the length: Transfer-Encoding chunked
	as          *rpc.Principal      // mint a Bearer token for this principal
	token       string              // or send this token
	scheme      string              // Authorization scheme of the token (default "Bearer")
	inQuery     bool                // send the token as ?__accessToken= instead

	wantStatus int
	wantCode   int
	wantMsg    string            // substring of the message
	wantData   string            // exact JSON of data, when set
	wantHeader map[string]string // exact values ("" means absent), or present
	noLeak     string            // must not appear in the body
}

// reply is a decoded answer; for the protected transport, the decrypted one.
type reply struct {
	status  int
	code    int
	message string
	data    json.RawMessage
	body    []byte
}

// target is a server and, when its protected transport is on, the client's codec.
type target struct {
	*svctest.Server
	codec *rpc.BodyCodec
}

func call(action string, params any) map[string]any {
	return callAt("test/echo", action, "v1", params)
}

func callAt(resource, action, version string, params any) map[string]any {
	env := map[string]any{"resource": resource, "action": action, "version": version}
	if params != nil {
		env["params"] = params
	}
	return env
}

func echoOf(name string) map[string]any { return call("echo", echoParams{ID: bigID, Name: name}) }

func echoData(name string) string { return fmt.Sprintf(`{"id":%d,"name":%q}`, bigID, name) }

// run sends sc to the target and checks it, together with what every /api answer must carry:
// the three envelope keys, Content-Type JSON, X-Request-Id, nosniff, message "Success" on code 0,
// and the protected transport when the target has it on.
func (tg target) run(t *testing.T, sc scenario) reply {
	t.Helper()
	resp, raw := tg.Do(t, tg.request(t, sc))
	r := reply{status: resp.StatusCode, body: raw}
	if tg.codec != nil {
		if got := resp.Header.Get(rpc.HeaderBodyEncoding); got != tg.codec.Encoding() {
			t.Errorf("X-Body-Encoding = %q, want %q", got, tg.codec.Encoding())
		}
		plain, err := tg.codec.Open(raw)
		if err != nil {
			t.Fatalf("decrypt response %q: %v", raw, err)
		}
		r.body = plain
	} else if got := resp.Header.Get(rpc.HeaderBodyEncoding); got != "" {
		t.Errorf("X-Body-Encoding = %q, want none", got)
	}
	decodeEnvelope(t, &r)
	if r.status != sc.wantStatus || r.code != sc.wantCode {
		t.Errorf("status, code = %d, %d, want %d, %d (%s)", r.status, r.code, sc.wantStatus, sc.wantCode, r.body)
	}
	if !strings.Contains(r.message, sc.wantMsg) {
		t.Errorf("message = %q, want it to contain %q", r.message, sc.wantMsg)
	}
	if r.code == rpc.CodeOK && r.message != "Success" {
		t.Errorf("success message = %q, want %q", r.message, "Success")
	}
	if sc.wantData != "" && string(r.data) != sc.wantData {
		t.Errorf("data = %s, want %s", r.data, sc.wantData)
	}
	if sc.noLeak != "" && (bytes.Contains(raw, []byte(sc.noLeak)) || bytes.Contains(r.body, []byte(sc.noLeak))) {
		t.Errorf("body %s leaks %q", r.body, sc.noLeak)
	}
	want := map[string]string{
		"Content-Type":           "application/json; charset=utf-8",
		"X-Request-Id":           present,
		"X-Content-Type-Options": "nosniff",
	}
	maps.Copy(want, sc.wantHeader)
	checkHeaders(t, resp.Header, want)
	if _, kept := sc.header["X-Request-ID"]; !kept {
		if id, err := uuid.Parse(resp.Header.Get("X-Request-Id")); err != nil || id.Version() != 7 || id.Variant() != uuid.RFC4122 {
			t.Errorf("X-Request-Id = %q, want a UUIDv7", resp.Header.Get("X-Request-Id"))
		}
	}
	return r
}

func (tg target) request(t *testing.T, sc scenario) *http.Request {
	t.Helper()
	body := []byte(sc.body)
	if sc.body == "" && sc.env != nil {
		var err error
		if body, err = json.Marshal(sc.env); err != nil {
			t.Fatal(err)
		}
	}
	if sc.encode != nil {
		body = sc.encode(body)
	}
	var rd io.Reader = bytes.NewReader(body)
	if sc.chunked {
		rd = io.MultiReader(rd) // not a type NewRequest can size: the length stays unknown
	}
	token := sc.token
	if sc.as != nil {
		token = tg.Token(t, sc.as)
	}
	u := tg.URL + "/api"
	if token != "" && sc.inQuery {
		u += "?" + url.Values{svctest.QueryAccessToken: {token}}.Encode()
	}
	method := sc.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	switch sc.contentType {
	case "":
		req.Header.Set("Content-Type", "application/json")
	case noContentType:
	default:
		req.Header.Set("Content-Type", sc.contentType)
	}
	if token != "" && !sc.inQuery {
		scheme := sc.scheme
		if scheme == "" {
			scheme = "Bearer"
		}
		req.Header.Set("Authorization", scheme+" "+token)
	}
	for k, v := range sc.header {
		req.Header.Set(k, v)
	}
	return req
}

// decodeEnvelope requires exactly the keys code (a number), message (a string) and data.
func decodeEnvelope(t *testing.T, r *reply) {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("%d response is not JSON: %q", r.status, r.body)
	}
	if got := slices.Sorted(maps.Keys(env)); !cmp.Equal(got, []string{"code", "data", "message"}) {
		t.Fatalf("envelope keys = %v, want [code data message] (%s)", got, r.body)
	}
	if err := json.Unmarshal(env["code"], &r.code); err != nil {
		t.Fatalf("code %s is not an integer", env["code"])
	}
	if err := json.Unmarshal(env["message"], &r.message); err != nil {
		t.Fatalf("message %s is not a string", env["message"])
	}
	r.data = env["data"]
}

func checkHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		got, w := h.Get(k), want[k]
		switch {
		case w == present && got == "":
			t.Errorf("header %s missing", k)
		case w != present && got != w:
			t.Errorf("header %s = %q, want %q", k, got, w)
		}
	}
}

func runTable(t *testing.T, tg target, table []scenario) {
	t.Helper()
	for _, sc := range table {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			tg.run(t, sc)
		})
	}
}

// TestScenarios runs the transport (wire-core §1.4), envelope (§2.1), access (§3.3) and
// optional body-encoding (§6.1) rows on one server with svc.app.body_limit = 4 KiB.
func TestScenarios(t *testing.T) {
	t.Parallel()
	srv := newScenarioServer(t, svctest.WithConfig(func(c *config.Config) {
		c.App.BodyLimit = scenarioBodyLimit
	}))
	tg := target{Server: srv}
	t.Run("transport", func(t *testing.T) { runTable(t, tg, transportScenarios()) })
	t.Run("access", func(t *testing.T) { runTable(t, tg, accessScenarios(t)) })
	t.Run("body encoding", func(t *testing.T) { runTable(t, tg, encodingScenarios()) })
}

func transportScenarios() []scenario {
	u1 := svctest.User("u1")
	over := strings.Repeat("x", int(scenarioBodyLimit))
	bigUpload, bigType := multipartBody("test/echo", "upload", strings.Repeat("y", int(scenarioBodyLimit)))
	return []scenario{
		{name: "success", env: echoOf("svc"), as: u1, wantStatus: 200, wantData: echoData("svc"),
			wantHeader: map[string]string{"Cache-Control": "no-store, no-cache, must-revalidate, max-age=0"}},
		{name: "int64 above 2^53 round trip", env: echoOf("big"), as: u1, wantStatus: 200, wantData: echoData("big")},
		{name: "charset and case of the JSON media type", env: echoOf("cs"), as: u1, contentType: "Application/JSON; charset=UTF-8",
			wantStatus: 200, wantData: echoData("cs")},
		{name: "incoming X-Request-ID kept", env: echoOf("id"), as: u1, header: map[string]string{"X-Request-ID": "gw-1234"},
			wantStatus: 200, wantHeader: map[string]string{"X-Request-Id": "gw-1234"}},
		{name: "public operation without credentials", env: call("public_echo", echoParams{ID: 1, Name: "anon"}),
			wantStatus: 200, wantData: `{"id":1,"name":"anon"}`},
		{name: "malformed JSON", body: `{invalid json}`, as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "not a valid JSON"},
		{name: "empty body", as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "not a valid JSON"},
		{name: "missing resource", body: `{"action":"echo","version":"v1"}`, wantStatus: 400, wantCode: 1400, wantMsg: "resource is required"},
		{name: "missing action", body: `{"resource":"test/echo","version":"v1"}`, wantStatus: 400, wantCode: 1400, wantMsg: "action is required"},
		{name: "missing version", body: `{"resource":"test/echo","action":"echo"}`, wantStatus: 400, wantCode: 1400, wantMsg: "version is required"},
		{name: "invalid resource", env: callAt("test/ec-ho", "echo", "v1", nil), wantStatus: 400, wantCode: 1400, wantMsg: "resource is invalid"},
		{name: "invalid action", env: callAt("test/echo", "echo.all", "v1", nil), wantStatus: 400, wantCode: 1400, wantMsg: "action is invalid"},
		{name: "invalid version", env: callAt("test/echo", "echo", "v-1", nil), wantStatus: 400, wantCode: 1400, wantMsg: "version is invalid"},
		{name: "params not an object", env: call("echo", []int{1}), as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "params is invalid"},
		{name: "unknown resource without credentials", env: callAt("test/nothing", "echo", "v1", nil), wantStatus: 404, wantCode: 1200, wantMsg: "Resource not found"},
		{name: "unknown action without credentials", env: call("nope", nil), wantStatus: 404, wantCode: 1200, wantMsg: "Resource not found"},
		{name: "unknown version without credentials", env: callAt("test/echo", "echo", "v9", nil), wantStatus: 404, wantCode: 1200, wantMsg: "Resource not found"},
		{name: "unknown action with a forged token", env: call("nope", nil), token: "forged", wantStatus: 404, wantCode: 1200},
		{name: "urlencoded", body: "resource=test%2Fecho&action=echo&version=v1", contentType: "application/x-www-form-urlencoded",
			as: u1, wantStatus: 415, wantCode: 1300, wantMsg: "Unsupported media type"},
		{name: "text/plain", env: echoOf("tp"), contentType: "text/plain", as: u1, wantStatus: 415, wantCode: 1300, wantMsg: "Unsupported media type"},
		{name: "no content type", env: echoOf("none"), contentType: noContentType, as: u1, wantStatus: 415, wantCode: 1300},
		{name: "body over body_limit", env: echoOf(over), as: u1, wantStatus: 413, wantCode: 1400, wantMsg: "too large"},
		{name: "body over body_limit, length not declared", env: echoOf(over), chunked: true, as: u1, wantStatus: 413, wantCode: 1400, wantMsg: "too large"},
		{name: "multipart over body_limit while streaming", body: bigUpload, contentType: bigType, chunked: true, as: u1,
			wantStatus: 413, wantCode: 1400, wantMsg: "too large"},
		{name: "operation timeout", env: call("slow", nil), as: u1, wantStatus: 408, wantCode: 1402, wantMsg: "Request timeout"},
		{name: "handler panic", env: call("panic", nil), as: u1, wantStatus: 500, wantCode: 1900, wantMsg: "An unexpected error occurred", noLeak: "exploded"},
		{name: "non-rpc error", env: call("fail", nil), as: u1, wantStatus: 500, wantCode: 1900, wantMsg: "An unexpected error occurred", noLeak: "hunter2"},
		{name: "GET /api", method: http.MethodGet, contentType: noContentType, wantStatus: 405, wantCode: 1900, wantMsg: "Method not allowed",
			wantHeader: map[string]string{"Allow": "POST"}},
		{name: "PUT /api", method: http.MethodPut, env: echoOf("put"), as: u1, wantStatus: 405, wantCode: 1900,
			wantHeader: map[string]string{"Allow": "POST"}},
	}
}

func accessScenarios(t *testing.T) []scenario {
	u1 := svctest.User("u1")
	foreign := foreignToken(t)
	return []scenario{
		{name: "no token", env: echoOf("a"), wantStatus: 401, wantCode: 1000, wantMsg: "Unauthenticated"},
		{name: "malformed token", env: echoOf("a"), token: "not.a.jwt", wantStatus: 401, wantCode: 1003},
		{name: "token signed with another secret", env: echoOf("a"), token: foreign, wantStatus: 401, wantCode: 1003},
		{name: "other scheme", env: echoOf("a"), as: u1, scheme: "Basic", wantStatus: 401, wantCode: 1000},
		{name: "token in __accessToken", env: echoOf("q"), as: u1, inQuery: true, wantStatus: 200, wantData: echoData("q")},
		{name: "scheme lower case", env: echoOf("l"), as: u1, scheme: "bearer", wantStatus: 200},
		{name: "scheme upper case", env: echoOf("u"), as: u1, scheme: "BEARER", wantStatus: 200},
		{name: "permission denied", env: call("guarded", echoParams{Name: "g"}), as: u1, wantStatus: 403, wantCode: 1100, wantMsg: "Access denied"},
		{name: "permission granted", env: call("guarded", echoParams{Name: "g"}), as: svctest.User("t1", "tester"),
			wantStatus: 200, wantData: `{"id":0,"name":"g"}`},
		{name: "permission checker error", env: call("broken_check", echoParams{Name: "b"}), as: svctest.User("t1", "tester"),
			wantStatus: 403, wantCode: 1100, wantMsg: "Access denied", noLeak: "unreachable"},
		{name: "system principal bypasses the checker", env: call("system_only", echoParams{Name: "s"}),
			wantStatus: 200, wantData: `{"id":0,"name":"s"}`},
		{name: "engine default rate limit from config", env: echoOf("rl"), as: svctest.User("rl-default"), wantStatus: 200,
			wantHeader: map[string]string{"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "99", "X-RateLimit-Reset": "300"}},
	}
}

func encodingScenarios() []scenario {
	u1 := svctest.User("u1")
	over := strings.Repeat(" ", int(scenarioBodyLimit))
	return []scenario{
		{name: "base64", env: echoOf("b64"), encode: base64Encode, header: encodingHeader("base64"), as: u1,
			wantStatus: 200, wantData: echoData("b64")},
		{name: "base64 with line breaks", env: echoOf("b64n"), encode: func(b []byte) []byte { return append(base64Encode(b), "\r\n"...) },
			header: encodingHeader("base64"), as: u1, wantStatus: 200, wantData: echoData("b64n")},
		{name: "gzip+base64", env: echoOf("gz"), encode: gzipBase64, header: encodingHeader("gzip+base64"), as: u1,
			wantStatus: 200, wantData: echoData("gz")},
		{name: "unknown encoding", env: echoOf("x"), header: encodingHeader("br"), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "Unsupported body encoding"},
		{name: "bad base64", body: "{not base64}", header: encodingHeader("base64"), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "could not be decoded"},
		{name: "bad gzip", env: echoOf("x"), encode: base64Encode, header: encodingHeader("gzip+base64"), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "could not be decoded"},
		{name: "decoded body over body_limit", body: `{"resource":"test/echo","action":"echo","version":"v1"` + over + `}`,
			encode: gzipBase64, header: encodingHeader("gzip+base64"), as: u1, wantStatus: 413, wantCode: 1400, wantMsg: "too large"},
		{name: "decoded body is not JSON", body: "{nope", encode: base64Encode, header: encodingHeader("base64"), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "not a valid JSON"},
	}
}

func encodingHeader(v string) map[string]string { return map[string]string{rpc.HeaderBodyEncoding: v} }

func base64Encode(b []byte) []byte { return base64.StdEncoding.AppendEncode(nil, b) }

func gzipBase64(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return base64Encode(buf.Bytes())
}

// multipartBody is the original client's upload envelope: resource, action, version, params as a
// JSON string, then the file part "file".
func multipartBody(resource, action, content string) (body, contentType string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, kv := range [][2]string{{"resource", resource}, {"action", action}, {"version", "v1"}, {"params", "{}"}} {
		mw.WriteField(kv[0], kv[1])
	}
	w, _ := mw.CreateFormFile("file", "notes.txt")
	io.WriteString(w, content)
	mw.Close()
	return buf.String(), mw.FormDataContentType()
}

// foreignToken is a well-formed access token signed with a secret the server does not have.
func foreignToken(t *testing.T) string {
	t.Helper()
	cfg := config.Default()
	cfg.Security.Secret = strings.Repeat("ab", 32)
	return svctest.MintToken(t, cfg, svctest.User("u1"), time.Now())
}

// step is a scenario of an ordered sequence, run after the fake clock moved by advance.
type step struct {
	advance time.Duration
	scenario
}

func runSteps(t *testing.T, tg target, steps []step) {
	t.Helper()
	for _, st := range steps {
		tg.Clock.Advance(st.advance)
		t.Run(st.name, func(t *testing.T) { tg.run(t, st.scenario) })
	}
}

var scenarioStart = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// TestScenarioTokenExpiry: an access token lives 30 minutes (plus 10s leeway); after that the
// bearer strategy answers 401/1002, the code the client refreshes on (wire-core §3.1, §5.4).
func TestScenarioTokenExpiry(t *testing.T) {
	t.Parallel()
	srv := newScenarioServer(t, svctest.WithClock(svctest.NewClock(scenarioStart)))
	old := srv.Token(t, svctest.User("u1"))
	runSteps(t, target{Server: srv}, []step{
		{0, scenario{name: "fresh token", env: echoOf("a"), token: old, wantStatus: 200}},
		{29 * time.Minute, scenario{name: "29 minutes old", env: echoOf("a"), token: old, wantStatus: 200}},
		{2 * time.Minute, scenario{name: "31 minutes old", env: echoOf("a"), token: old, wantStatus: 401, wantCode: 1002}},
		{0, scenario{name: "expired token in __accessToken", env: echoOf("a"), token: old, inQuery: true, wantStatus: 401, wantCode: 1002}},
		{0, scenario{name: "unknown operation with an expired token", env: call("nope", nil), token: old, wantStatus: 404, wantCode: 1200}},
		{0, scenario{name: "new token", env: echoOf("a"), as: svctest.User("u1"), wantStatus: 200}},
	})
}

// TestScenarioRateLimit walks the rules of wire-core §4 on a fake clock: the engine default from
// svc.api.rate_limit (3 per minute here), a per-operation override, 429/1401 with Retry-After,
// the X-RateLimit-* headers of admitted calls, the key resource:version:action:IP:principal, and
// the window reset.
func TestScenarioRateLimit(t *testing.T) {
	t.Parallel()
	srv := newScenarioServer(t, svctest.WithClock(svctest.NewClock(scenarioStart)), svctest.WithConfig(func(c *config.Config) {
		c.API.RateLimit = config.RateLimit{Max: 3, Period: time.Minute}
		c.App.TrustedProxies = []string{"127.0.0.1", "::1"}
	}))
	u1, u2 := svctest.User("u1"), svctest.User("u2")
	admitted := func(limit, remaining, reset string) map[string]string {
		return map[string]string{"X-RateLimit-Limit": limit, "X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": reset}
	}
	from := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": ip} }
	const ip1, ip2 = "198.51.100.1", "198.51.100.2"
	runSteps(t, target{Server: srv}, []step{
		{0, scenario{name: "u1 call 1", env: echoOf("a"), as: u1, header: from(ip1), wantStatus: 200, wantHeader: admitted("3", "2", "60")}},
		{0, scenario{name: "u1 call 2", env: echoOf("a"), as: u1, header: from(ip1), wantStatus: 200, wantHeader: admitted("3", "1", "60")}},
		{10 * time.Second, scenario{name: "u1 call 3", env: echoOf("a"), as: u1, header: from(ip1), wantStatus: 200, wantHeader: admitted("3", "0", "50")}},
		{0, scenario{name: "u1 call 4 refused", env: echoOf("a"), as: u1, header: from(ip1), wantStatus: 429, wantCode: 1401,
			wantMsg: "Too many requests", wantHeader: map[string]string{"Retry-After": "51", "X-RateLimit-Limit": ""}}},
		{0, scenario{name: "u2 has its own budget", env: echoOf("a"), as: u2, header: from(ip1), wantStatus: 200, wantHeader: admitted("3", "2", "60")}},
		{0, scenario{name: "u1 from another IP has its own budget", env: echoOf("a"), as: u1, header: from(ip2), wantStatus: 200, wantHeader: admitted("3", "2", "60")}},
		{0, scenario{name: "u1 on v2 has its own budget", env: callAt("test/echo", "echo", "v2", echoParams{Name: "a"}), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("3", "2", "60")}},
		{0, scenario{name: "u1 on another action has its own budget", env: call("limited", echoParams{Name: "a"}), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("2", "1", "60")}},
		{0, scenario{name: "per-op override call 2", env: call("limited", echoParams{Name: "a"}), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("2", "0", "60")}},
		{0, scenario{name: "per-op override call 3 refused", env: call("limited", echoParams{Name: "a"}), as: u1, header: from(ip1),
			wantStatus: 429, wantCode: 1401, wantHeader: map[string]string{"Retry-After": "61"}}},
		{0, scenario{name: "refused calls are not counted: u1 still refused, not longer", env: echoOf("a"), as: u1, header: from(ip1),
			wantStatus: 429, wantCode: 1401, wantHeader: map[string]string{"Retry-After": "51"}}},
		{50 * time.Second, scenario{name: "one period later the previous window still weighs", env: echoOf("a"), as: u1, header: from(ip1),
			wantStatus: 429, wantCode: 1401, wantHeader: map[string]string{"Retry-After": "1"}}},
		{time.Second, scenario{name: "a second later the sliding estimate admits", env: echoOf("a"), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("3", "0", "59")}},
		{119 * time.Second, scenario{name: "window reset after two periods", env: echoOf("a"), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("3", "2", "60")}},
		{10 * time.Second, scenario{name: "per-op window reset after three periods", env: call("limited", echoParams{Name: "a"}), as: u1, header: from(ip1),
			wantStatus: 200, wantHeader: admitted("2", "1", "60")}},
	})
}

// TestScenarioProtectedTransport runs wire-core §6.2 for both ciphers: the request must carry
// exactly the configured X-Body-Encoding, and every answer — errors included, and the JSON answer
// to a multipart request — is encrypted. The test decrypts as the client does, with
// rpc.NewBodyCodec.
func TestScenarioProtectedTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		encoding config.BodyEncoding
		other    string
		key      []byte
	}{
		{config.BodyEncodingAESGCM, rpc.EncodingSM4GCM, bytes.Repeat([]byte{0x5a}, 32)},
		{config.BodyEncodingSM4GCM, rpc.EncodingAESGCM, bytes.Repeat([]byte{0xa5}, 16)},
	} {
		t.Run(string(tc.encoding), func(t *testing.T) {
			t.Parallel()
			codec, err := rpc.NewBodyCodec(string(tc.encoding), tc.key)
			if err != nil {
				t.Fatal(err)
			}
			srv := newScenarioServer(t, svctest.WithConfig(func(c *config.Config) {
				c.API.BodyEncoding = config.APIBodyEncoding{Enabled: true, Encoding: tc.encoding,
					Key: base64.StdEncoding.EncodeToString(tc.key)}
			}))
			runTable(t, target{Server: srv, codec: codec}, protectedScenarios(codec, tc.other))
		})
	}
}

func protectedScenarios(codec *rpc.BodyCodec, other string) []scenario {
	u1 := svctest.User("u1")
	sealed := encodingHeader(codec.Encoding())
	upload, uploadType := multipartBody("test/echo", "upload", "plain file bytes")
	return []scenario{
		{name: "success", env: echoOf("p"), encode: codec.Seal, header: sealed, as: u1, wantStatus: 200, wantData: echoData("p"),
			wantHeader: map[string]string{"X-RateLimit-Limit": "100"}},
		{name: "missing header", env: echoOf("p"), encode: codec.Seal, as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "requires an encoded request body"},
		{name: "plain JSON", env: echoOf("p"), as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "requires an encoded request body"},
		{name: "base64 is no downgrade", env: echoOf("p"), encode: base64Encode, header: encodingHeader("base64"), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "Unsupported body encoding"},
		{name: "the other cipher", env: echoOf("p"), encode: codec.Seal, header: encodingHeader(other), as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "Unsupported body encoding"},
		{name: "tampered ciphertext", env: echoOf("p"), encode: tamper(codec), header: sealed, as: u1,
			wantStatus: 400, wantCode: 1400, wantMsg: "could not be decoded"},
		{name: "not base64", body: "%%%", header: sealed, as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "could not be decoded"},
		{name: "empty body passes to the envelope check", header: sealed, as: u1, wantStatus: 400, wantCode: 1400, wantMsg: "not a valid JSON"},
		{name: "unknown operation", env: call("nope", nil), encode: codec.Seal, header: sealed, wantStatus: 404, wantCode: 1200},
		{name: "no token", env: echoOf("p"), encode: codec.Seal, header: sealed, wantStatus: 401, wantCode: 1000},
		{name: "permission denied", env: call("guarded", nil), encode: codec.Seal, header: sealed, as: u1, wantStatus: 403, wantCode: 1100},
		{name: "GET /api", method: http.MethodGet, contentType: noContentType, wantStatus: 405, wantCode: 1900},
		{name: "multipart request untouched, response encrypted", body: upload, contentType: uploadType, as: u1,
			wantStatus: 200, wantData: `{"field":"file","filename":"notes.txt","content":"plain file bytes"}`},
	}
}

// tamper seals b and flips one bit of the ciphertext, so the GCM tag fails.
func tamper(codec *rpc.BodyCodec) func([]byte) []byte {
	return func(b []byte) []byte {
		bin, err := base64.StdEncoding.DecodeString(string(codec.Seal(b)))
		if err != nil {
			panic(err)
		}
		bin[len(bin)/2] ^= 0x01
		return base64Encode(bin)
	}
}
