package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is the injected clock of the tests: time moves only when a test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 3, 50, 50, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var errTestTokenInvalid = NewError(CodeTokenInvalid, http.StatusUnauthorized, "security_token_invalid")

// tokenStrategy is a bearer-like test strategy: "Authorization: Bearer <token>" names a principal.
type tokenStrategy struct {
	name   string
	tokens map[string]*Principal
}

func (s tokenStrategy) Name() string { return s.name }

func (s tokenStrategy) Authenticate(_ context.Context, req AuthRequest) (*Principal, error) {
	h := req.Request.Header.Get("Authorization")
	if h == "" {
		return nil, ErrUnauthenticated
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return nil, errTestTokenInvalid
	}
	p, ok := s.tokens[tok]
	if !ok {
		return nil, errTestTokenInvalid
	}
	return p, nil
}

var (
	alice = &Principal{Type: PrincipalUser, ID: "u-alice", Name: "Alice", Roles: []string{"user"}}
	bob   = &Principal{Type: PrincipalUser, ID: "u-bob", Name: "Bob", Roles: []string{}}
	cron  = System()
)

func testTokens() map[string]*Principal {
	return map[string]*Principal{"alice": alice, "bob": bob, "system": cron}
}

// permChecker grants tokens per principal id; err, when set, is returned instead.
type permChecker struct {
	grants map[string][]string
	err    error
}

func (c permChecker) HasPermission(_ context.Context, p *Principal, token string) (bool, error) {
	if c.err != nil {
		return false, c.err
	}
	for _, t := range c.grants[p.ID] {
		if t == token {
			return true, nil
		}
	}
	return false, nil
}

// auditLog collects audit records.
type auditLog struct {
	mu   sync.Mutex
	recs []AuditRecord
}

func (a *auditLog) Audit(_ context.Context, rec AuditRecord) {
	a.mu.Lock()
	a.recs = append(a.recs, rec)
	a.mu.Unlock()
}

func (a *auditLog) records() []AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]AuditRecord(nil), a.recs...)
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newEngine builds an engine with a fake clock (unless cfg has one), the "bearer" test strategy,
// the given resources, and validates it.
func newEngine(t testing.TB, cfg EngineConfig, rs ...Resource) *Engine {
	t.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	if err := e.RegisterStrategy(tokenStrategy{name: StrategyBearer, tokens: testTokens()}); err != nil {
		t.Fatalf("RegisterStrategy: %v", err)
	}
	if err := e.Register(rs...); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return e
}

// result is a decoded response. decode insists on the envelope of wire-core §2.1: exactly the
// keys code, message and data.
type result struct {
	Status  int
	Header  http.Header
	Body    []byte
	Code    int
	Message string
	Data    json.RawMessage
}

func serve(t testing.TB, h http.Handler, r *http.Request) result {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	res := result{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	decodeEnvelope(t, res.Body, &res)
	return res
}

func decodeEnvelope(t testing.TB, body []byte, res *result) {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, body)
	}
	for _, k := range []string{"code", "message", "data"} {
		if _, ok := keys[k]; !ok {
			t.Fatalf("envelope lacks %q: %s", k, body)
		}
	}
	if len(keys) != 3 {
		t.Fatalf("envelope has %d keys, want 3: %s", len(keys), body)
	}
	if err := json.Unmarshal(keys["code"], &res.Code); err != nil {
		t.Fatalf("code: %v", err)
	}
	if err := json.Unmarshal(keys["message"], &res.Message); err != nil {
		t.Fatalf("message: %v", err)
	}
	res.Data = keys["data"]
}

// post builds a JSON POST /api request; hdr are header name/value pairs.
func post(body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			r.Header.Del(hdr[i])
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

// envelopeJSON builds a request body.
func envelopeJSON(resource, action, version, params string) string {
	if params == "" {
		return `{"resource":"` + resource + `","action":"` + action + `","version":"` + version + `"}`
	}
	return `{"resource":"` + resource + `","action":"` + action + `","version":"` + version + `","params":` + params + `}`
}

type echoParams struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Extra any    `json:"extra"`
}

func (p *echoParams) Validate() error {
	var c Check
	c.Min("id", p.ID, 0)
	c.MaxLen("name", p.Name, 10)
	return c.Err()
}

type echoResult struct {
	Params    echoParams      `json:"params"`
	Principal string          `json:"principal"`
	Meta      json.RawMessage `json:"meta"`
	Resource  string          `json:"resource"`
	Action    string          `json:"action"`
	Version   string          `json:"version"`
	ClientIP  string          `json:"clientIp"`
	RequestID string          `json:"requestId"`
}

func echo(_ context.Context, c Call, p echoParams) (echoResult, error) {
	return echoResult{
		Params: p, Principal: c.Principal.ID, Meta: c.Meta,
		Resource: c.Resource, Action: c.Action, Version: c.Version,
		ClientIP: c.ClientIP, RequestID: c.RequestID,
	}, nil
}

// testResource is the operation table most tests run against.
func testResource() Resource {
	return Resource{Name: "test/things", Ops: []Op{
		Handle("echo", echo),
		Handle("echo", echo, Version("v2")),
		Handle("public_echo", echo, Public()),
		Handle("read", echo, RequiredPermission("test.things.read")),
		Handle("limited", echo, RateLimit(2, time.Minute)),
		Handle("limited_default_period", echo, RateLimit(3, 0)),
		Handle("unlimited", echo, RateLimit(0, 0)),
		Handle("audited", echo, Audit()),
		Handle("panic", func(context.Context, Call, NoParams) (any, error) { panic("boom") }),
		Handle("internal", func(context.Context, Call, NoParams) (any, error) {
			return nil, errors.New("db down: password=hunter2")
		}),
		Handle("business", func(context.Context, Call, NoParams) (any, error) {
			return nil, ErrRecordNotFound
		}),
		Handle("wrapped", func(context.Context, Call, NoParams) (any, error) {
			return nil, errors.Join(errors.New("context"), ErrAccessDenied)
		}),
		Handle("slow", func(ctx context.Context, _ Call, _ NoParams) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, Timeout(5*time.Millisecond)),
		Handle("slow_success", func(ctx context.Context, _ Call, _ NoParams) (string, error) {
			<-ctx.Done()
			return "late", nil
		}, Timeout(5*time.Millisecond)),
		Handle("nothing", func(context.Context, Call, NoParams) (any, error) { return nil, nil }),
		Handle("header", func(_ context.Context, c Call, _ NoParams) (any, error) {
			c.Header.Set("Cache-Control", "private")
			c.Logger.Info("handled")
			return map[string]int{"n": 1}, nil
		}),
		Handle("bad_data", func(context.Context, Call, NoParams) (any, error) { return make(chan int), nil }),
		Handle("credential", credential),
		Handle("http_only", echo, HTTPOnly()),
	}}
}

// credentialSeen is what test/things credential saw of its request.
type credentialSeen struct {
	Authorization string
	Files         bool
}

// credential answers the credential of the request it runs for, as security/auth logout reads it.
func credential(_ context.Context, c Call, _ NoParams) (credentialSeen, error) {
	return credentialSeen{Authorization: c.Request.Header.Get("Authorization"), Files: c.Files != nil}, nil
}
