package security_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// start is the fake clock's start for every test server.
var start = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// cheapHash keeps tests fast; the benchmark in bench/login measures the real parameters.
var cheapHash = security.HashParams{Memory: 256, Time: 1, Threads: 1}

// env is one test server with the security module and handles on its pieces.
type env struct {
	srv   *svctest.Server
	sec   *security.Service
	clock *svctest.Clock
}

// setup configures newEnv.
type setup struct {
	kind    config.DBKind
	opts    security.Options
	cfg     []func(*config.Config)
	svcOpts []svc.Option
}

type envOption func(*setup)

func onDB(kind config.DBKind) envOption           { return func(s *setup) { s.kind = kind } }
func withSec(f func(*security.Options)) envOption { return func(s *setup) { f(&s.opts) } }
func withCfg(f func(*config.Config)) envOption    { return func(s *setup) { s.cfg = append(s.cfg, f) } }
func withResources(rs ...rpc.Resource) envOption {
	return func(s *setup) {
		s.svcOpts = append(s.svcOpts, svc.WithModule(func(app.Deps) (app.Module, error) {
			return app.Module{Name: "test", Resources: rs}, nil
		}))
	}
}

// newEnv boots a server (default boot chain, security included) on a fake clock. Rate limits
// are raised so scenario tables are not throttled (the rate-limit rows set them back).
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	st := setup{kind: config.SQLite}
	for _, o := range opts {
		o(&st)
	}
	if st.opts.Hash == (security.HashParams{}) {
		st.opts.Hash = cheapHash
	}
	e := &env{clock: svctest.NewClock(start)}
	cfgOpts := []svctest.Option{
		svctest.WithDB(st.kind), svctest.WithClock(e.clock),
		svctest.WithConfig(func(c *config.Config) {
			c.Security.LoginRateLimit, c.Security.RefreshRateLimit = 10000, 10000
			c.Security.Roles = map[string][]string{"admin": {"*"}, "ops": {"cron.*", "sys.monitor"}, "viewer": {"sys.view"}}
		}),
		svctest.WithOptions(append([]svc.Option{svc.WithSecurity(st.opts)}, st.svcOpts...)...),
	}
	for _, f := range st.cfg {
		cfgOpts = append(cfgOpts, svctest.WithConfig(f))
	}
	e.srv = svctest.New(t, cfgOpts...)
	e.sec = e.srv.Security()
	return e
}

// addUser creates a built-in user.
func (e *env) addUser(t *testing.T, name, password string, roles ...string) *security.User {
	t.Helper()
	u, err := e.sec.Store().Create(context.Background(), name, strings.ToUpper(name[:1])+name[1:], password, roles)
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

// call is srv.Call with the test's *testing.T.
func (e *env) call(t *testing.T, action string, params any, opts ...svctest.CallOption) svctest.Response {
	t.Helper()
	return e.srv.Call(t, security.ResourceAuth, action, params, opts...)
}

// passwordLogin logs in with a password, failing the test unless it answers 200/0, and returns
// the result (tokens, or a challenge) with the raw response.
func (e *env) passwordLogin(t *testing.T, user, password string) (security.LoginResult, svctest.Response) {
	t.Helper()
	r := e.call(t, "login", map[string]any{"type": "password", "principal": user, "credentials": password})
	if r.Status != 200 || r.Code != 0 {
		t.Fatalf("login %s: %d %d %s", user, r.Status, r.Code, r.Message)
	}
	var res security.LoginResult
	r.DataAs(t, &res)
	return res, r
}

// login logs in with a password and returns the token pair, failing the test otherwise.
func (e *env) login(t *testing.T, user, password string) security.AuthTokens {
	t.Helper()
	res, r := e.passwordLogin(t, user, password)
	if res.Tokens == nil {
		t.Fatalf("login %s: no tokens in %s", user, r.Data)
	}
	return *res.Tokens
}

// want checks status and code of a response.
func want(t *testing.T, r svctest.Response, status, code int) {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Fatalf("status/code = %d/%d (%s), want %d/%d; data %s", r.Status, r.Code, r.Message, status, code, r.Data)
	}
}

// keys returns the sorted top-level keys of a JSON object.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
