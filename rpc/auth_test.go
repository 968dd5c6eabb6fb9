package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPermissionTable covers wire-core §3.3: system principals bypass; denial, a missing checker
// and a checker error all answer 403/1100; strategy failures keep their own 401 codes. (A server
// always has a checker, the security module's or the host's: the engine is where a missing one
// is tested.)
func TestPermissionTable(t *testing.T) {
	t.Parallel()
	granting := permChecker{grants: map[string][]string{"u-alice": {"test.things.read"}}}
	tests := []struct {
		name       string
		checker    PermissionChecker
		action     string
		auth       string
		wantStatus int
		wantCode   int
	}{
		{"granted", granting, "read", "Bearer alice", 200, 0},
		{"denied", granting, "read", "Bearer bob", 403, 1100},
		{"missing checker", nil, "read", "Bearer alice", 403, 1100},
		{"checker error", permChecker{err: errors.New("db down")}, "read", "Bearer alice", 403, 1100},
		{"system bypasses", nil, "read", "Bearer system", 200, 0},
		{"no permission needed", nil, "echo", "Bearer bob", 200, 0},
		{"no token", granting, "read", "", 401, 1000},
		{"bad token", granting, "read", "Bearer forged", 401, 1003},
		{"public without token", nil, "public_echo", "", 200, 0},
		{"public ignores a bad token", nil, "public_echo", "Bearer forged", 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, EngineConfig{Permissions: tt.checker}, testResource())
			res := serve(t, e, post(envelopeJSON("test/things", tt.action, "v1", ""), "Authorization", tt.auth))
			if res.Status != tt.wantStatus || res.Code != tt.wantCode {
				t.Errorf("status, code = %d, %d, want %d, %d (%s)", res.Status, res.Code, tt.wantStatus, tt.wantCode, res.Body)
			}
			if tt.wantCode == 1100 && res.Message != "Access denied" {
				t.Errorf("message = %q, want Access denied", res.Message)
			}
			if strings.Contains(string(res.Body), "db down") {
				t.Errorf("checker error leaked: %s", res.Body)
			}
		})
	}
}

// TestPermissionCheckerFromConfig: the checker is EngineConfig.Permissions, fixed when the engine
// is built; the same request is denied by an engine without one and granted by an engine with it.
func TestPermissionCheckerFromConfig(t *testing.T) {
	t.Parallel()
	req := func(e *Engine) result {
		return serve(t, e, post(envelopeJSON("test/things", "read", "v1", ""), "Authorization", bearerAlice))
	}
	if res := req(newEngine(t, EngineConfig{}, testResource())); res.Code != CodeAccessDenied {
		t.Fatalf("without a checker: code = %d, want 1100", res.Code)
	}
	granting := permChecker{grants: map[string][]string{"u-alice": {"test.things.read"}}}
	if res := req(newEngine(t, EngineConfig{Permissions: granting}, testResource())); res.Code != CodeOK {
		t.Fatalf("with the checker: code = %d, want 0", res.Code)
	}
}

// argsStrategy records what it was given.
type argsStrategy struct{ got chan AuthRequest }

func (argsStrategy) Name() string { return "office_ip" }

func (s argsStrategy) Authenticate(_ context.Context, req AuthRequest) (*Principal, error) {
	s.got <- req
	return &Principal{Type: PrincipalExternalApp, ID: "ip:" + req.Args[0], Name: req.Args[0]}, nil
}

type nilStrategy struct{}

func (nilStrategy) Name() string { return "broken" }

func (nilStrategy) Authenticate(context.Context, AuthRequest) (*Principal, error) { return nil, nil }

type panicStrategy struct{}

func (panicStrategy) Name() string { return "panicky" }

func (panicStrategy) Authenticate(context.Context, AuthRequest) (*Principal, error) {
	panic("strategy bug")
}

func TestStrategies(t *testing.T) {
	t.Parallel()
	got := make(chan AuthRequest, 1)
	e, err := NewEngine(EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Strategy{argsStrategy{got}, nilStrategy{}, panicStrategy{}, tokenStrategy{name: StrategyBearer, tokens: testTokens()}} {
		if err := e.RegisterStrategy(s); err != nil {
			t.Fatal(err)
		}
	}
	err = e.Register(Resource{Name: "auth", Ops: []Op{
		Handle("office", echo, Auth("office_ip", "office")),
		Handle("broken", echo, Auth("broken")),
		Handle("panicky", echo, Auth("panicky")),
		Handle("unknown", echo, Auth("nope")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Validate(); !errors.Is(err, ErrUnknownStrategy) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Validate = %v, want ErrUnknownStrategy naming nope", err)
	}
	tests := []struct {
		action     string
		wantStatus int
		wantCode   int
	}{
		{"office", 200, 0},
		{"broken", 401, 1000},
		{"panicky", 500, 1900},
		{"unknown", 401, 1000},
	}
	for _, tt := range tests {
		r := post(envelopeJSON("auth", tt.action, "v1", ""))
		r.RemoteAddr = "192.0.2.7:1234"
		res := serve(t, e, r)
		if res.Status != tt.wantStatus || res.Code != tt.wantCode {
			t.Errorf("%s: status, code = %d, %d, want %d, %d", tt.action, res.Status, res.Code, tt.wantStatus, tt.wantCode)
		}
	}
	req := <-got
	if req.ClientIP != "192.0.2.7" || len(req.Args) != 1 || req.Args[0] != "office" || req.Request == nil {
		t.Errorf("strategy got %+v", req)
	}
	if err := e.RegisterStrategy(nilStrategy{}); !errors.Is(err, ErrEngineFrozen) {
		t.Errorf("RegisterStrategy after serving = %v, want ErrEngineFrozen", err)
	}
	if err := e.Register(Resource{Name: "late"}); !errors.Is(err, ErrEngineFrozen) {
		t.Errorf("Register after serving = %v, want ErrEngineFrozen", err)
	}
}

func TestRegisterStrategyErrors(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    Strategy
	}{
		{"nil", nil},
		{"none is built in", tokenStrategy{name: StrategyNone}},
		{"not snake", tokenStrategy{name: "Bearer"}},
		{"empty", tokenStrategy{name: ""}},
	}
	for _, tt := range tests {
		if err := e.RegisterStrategy(tt.s); !errors.Is(err, ErrInvalidRegistration) {
			t.Errorf("%s: err = %v, want ErrInvalidRegistration", tt.name, err)
		}
	}
	if err := e.RegisterStrategy(tokenStrategy{name: "bearer"}); err != nil {
		t.Fatal(err)
	}
	if err := e.RegisterStrategy(tokenStrategy{name: "bearer"}); !errors.Is(err, ErrInvalidRegistration) {
		t.Errorf("duplicate: err = %v, want ErrInvalidRegistration", err)
	}
}

func TestAuthenticateForOtherRoutes(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	r := httptest.NewRequest(http.MethodGet, "/storage/files/x", nil)
	r.Header.Set("Authorization", bearerAlice)
	p, err := e.Authenticate(r.Context(), r, "")
	if err != nil || p != alice {
		t.Errorf("Authenticate default = %v, %v; want alice", p, err)
	}
	p, err = e.Authenticate(r.Context(), r, StrategyNone)
	if err != nil || !p.IsAnonymous() {
		t.Errorf("Authenticate none = %v, %v; want anonymous", p, err)
	}
	if _, err := e.Authenticate(r.Context(), r, "nope"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Authenticate unknown = %v, want ErrUnauthenticated", err)
	}
	rec := httptest.NewRecorder()
	e.WriteError(rec, r, ErrUnauthenticated)
	var res result
	decodeEnvelope(t, rec.Body.Bytes(), &res)
	if rec.Code != 401 || res.Code != 1000 || res.Message != "Unauthenticated" {
		t.Errorf("WriteError = %d %d %q", rec.Code, res.Code, res.Message)
	}
	if err := e.CheckPermission(r.Context(), alice, "x.y"); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("CheckPermission without checker = %v, want ErrAccessDenied", err)
	}
	if err := e.CheckPermission(r.Context(), System(), "x.y"); err != nil {
		t.Errorf("CheckPermission(system) = %v, want nil", err)
	}
}

func TestWriteData(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, testResource())
	rec := httptest.NewRecorder()
	e.WriteData(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil), http.StatusCreated, map[string]string{"a": "<b>"})
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"code":0,"message":"Success","data":{"a":"\u003cb\u003e"}}` {
		t.Errorf("WriteData = %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	e.WriteError(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil), ErrDefault.WithMessage("custom \"quoted\"\n").WithData([]int{1}))
	if rec.Code != 200 || rec.Body.String() != `{"code":2000,"message":"custom \"quoted\"\n","data":[1]}` {
		t.Errorf("WriteError = %d %s", rec.Code, rec.Body)
	}
}

// TestBuiltInPrincipalsJSON: the anonymous and system principals render as wire-core §3.2 has
// them, roles an empty array and details null.
func TestBuiltInPrincipalsJSON(t *testing.T) {
	for _, tt := range []struct {
		p    *Principal
		want string
	}{
		{Anonymous(), `{"type":"user","id":"anonymous","name":"匿名","roles":[],"details":null}`},
		{System(), `{"type":"system","id":"system","name":"系统","roles":[],"details":null}`},
	} {
		got, err := json.Marshal(tt.p)
		if err != nil || string(got) != tt.want {
			t.Errorf("json = %s, %v; want %s", got, err, tt.want)
		}
	}
}
