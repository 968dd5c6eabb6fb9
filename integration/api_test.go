package integration_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// testKey is a 16-byte AES/SM4 key in standard base64, made up for the tests.
const testKey = "MDEyMzQ1Njc4OWFiY2RlZg=="

var (
	admin  = svctest.User("root", "admin")
	viewer = svctest.User("viewer", "viewer")
)

func newServer(t *testing.T, kind config.DBKind, mutate ...func(*config.Config)) *svctest.Server {
	t.Helper()
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}, "viewer": {"integration.contract.query", "integration.system.query",
			"integration.code_map.query", "integration.log.query"}}
		c.Integration.SecretKey = testKey
		for _, m := range mutate {
			m(c)
		}
	}), svctest.WithOptions(svc.WithIntegration(integration.Options{ScriptLimits: integration.Limits{Worker: integration.TestWorker}})))
}

// encoded posts the envelope as the original's client does for system and adapter writes:
// X-Body-Encoding: gzip+base64 (R:packages/core/src/http/body-encoding.ts).
func encoded(t *testing.T, srv *svctest.Server, as *rpc.Principal, resource, action string, params any) svctest.Response {
	t.Helper()
	env, _ := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(env)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api", strings.NewReader(base64.StdEncoding.EncodeToString(gz.Bytes())))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Body-Encoding", "gzip+base64")
	req.Header.Set("Authorization", "Bearer "+srv.Token(t, as))
	_, body := srv.Do(t, req)
	var r svctest.Response
	var e struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	r.Code, r.Message, r.Data = e.Code, e.Message, e.Data
	return r
}

type step struct {
	name             string
	resource, action string
	params           string // JSON; $name is replaced by the id created by the step named name
	meta             map[string]any
	as               *rpc.Principal
	gzip             bool
	wantCode         int
	wantTotal        int // for find_page: -1 skips
	check            func(t *testing.T, data json.RawMessage)
}

// TestDefinitions runs every resource action, filter, validation error and code on the real
// server on the three databases, in the request shapes of the original's client: filters in
// params, paging in meta, gzip+base64 bodies for system and adapter writes.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		ids := map[string]string{}
		for _, s := range definitionSteps() {
			params := s.params
			for k, v := range ids {
				params = strings.ReplaceAll(params, "$"+k+"$", v)
			}
			as := s.as
			if as == nil {
				as = admin
			}
			var p any
			if params != "" {
				if err := json.Unmarshal([]byte(params), &p); err != nil {
					t.Fatalf("%s: params %s: %v", s.name, params, err)
				}
			}
			var r svctest.Response
			if s.gzip {
				r = encoded(t, srv, as, s.resource, s.action, p)
			} else {
				opts := []svctest.CallOption{svctest.As(as)}
				if s.meta != nil {
					opts = append(opts, svctest.WithMeta(s.meta))
				}
				r = srv.Call(t, s.resource, s.action, p, opts...)
			}
			if r.Code != s.wantCode {
				t.Errorf("%s: code = %d (%s), want %d", s.name, r.Code, r.Message, s.wantCode)
				continue
			}
			if s.action == "create" && s.wantCode == 0 {
				var c struct{ ID string }
				if json.Unmarshal(r.Data, &c) != nil || c.ID == "" {
					t.Fatalf("%s: data = %s, want {id}", s.name, r.Data)
				}
				ids[s.name] = c.ID
			}
			if s.action == "find_page" && s.wantCode == 0 && s.wantTotal >= 0 {
				var pg struct{ Total int }
				json.Unmarshal(r.Data, &pg)
				if pg.Total != s.wantTotal {
					t.Errorf("%s: total = %d, want %d (%s)", s.name, pg.Total, s.wantTotal, r.Data)
				}
			}
			if s.check != nil {
				s.check(t, r.Data)
			}
		}
		checkStoredSecrets(t, srv)
	})
}

// checkStoredSecrets reads the system rows straight from the database: no plaintext secret.
func checkStoredSecrets(t *testing.T, srv *svctest.Server) {
	t.Helper()
	var rows []integration.System
	if err := srv.DB().NewSelect().Model(&rows).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no system rows stored")
	}
	for _, r := range rows {
		raw, _ := json.Marshal(r)
		for _, secret := range []string{"s3cret-pass", "tok-123", "db-pw", "hdr-secret"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("stored system %s holds the plaintext %q: %s", r.Code, secret, raw)
			}
		}
	}
}

func wantJSON(path string, want any) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		var v any
		json.Unmarshal(data, &v)
		for _, p := range strings.Split(path, ".") {
			switch c := v.(type) {
			case map[string]any:
				v = c[p]
			case []any:
				if len(c) == 0 {
					v = nil
					break
				}
				v = c[0].(map[string]any)[p]
			}
		}
		got, _ := json.Marshal(v)
		exp, _ := json.Marshal(want)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", path, got, exp)
		}
	}
}

func notContains(texts ...string) func(t *testing.T, data json.RawMessage) {
	return func(t *testing.T, data json.RawMessage) {
		t.Helper()
		for _, s := range texts {
			if strings.Contains(string(data), s) {
				t.Errorf("answer contains %q: %s", s, data)
			}
		}
	}
}

var svctestNobody = svctest.User("nobody")

func long(n int) string { return strings.Repeat("a", n) }

// integrationCode is the code of the named sentinel (Err<name>).
func integrationCode(name string) int {
	codes := map[string]*rpc.Error{
		"InvalidSchema": integration.ErrInvalidSchema, "InvalidLabel": integration.ErrInvalidLabel,
		"UnknownAuthScheme": integration.ErrUnknownAuthScheme, "InvalidAuthParams": integration.ErrInvalidAuthParams,
		"InvalidBaseURL": integration.ErrInvalidBaseURL, "InvalidDataSource": integration.ErrInvalidDataSource,
		"InvalidEnvelope": integration.ErrInvalidEnvelope, "InvalidDirection": integration.ErrInvalidDirection,
		"InvalidScript": integration.ErrInvalidScript, "InvalidRouteRef": integration.ErrInvalidRouteRef,
		"InvalidCodeMap": integration.ErrInvalidCodeMap,
	}
	return codes[name].Code
}

// TestMonitorStats: sys/monitor.get_integration_stats answers enabled when the module is
// included (through the monitor's inspector hook) and disabled without it.
func TestMonitorStats(t *testing.T) {
	t.Parallel()
	with := newServer(t, config.SQLite)
	r := with.Call(t, "sys/monitor", "get_integration_stats", nil, svctest.As(admin))
	if r.Code != 0 || string(r.Data) != `{"enabled":true,"stats":[]}` {
		t.Errorf("with the module: %d %s, want enabled and no stats yet", r.Code, r.Data)
	}
	without := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Security.Roles = map[string][]string{"admin": {"*"}} }))
	r = without.Call(t, "sys/monitor", "get_integration_stats", nil, svctest.As(admin))
	if r.Code != 0 || string(r.Data) != `{"enabled":false,"stats":[]}` {
		t.Errorf("without the module: %d %s, want disabled", r.Code, r.Data)
	}
	if r := without.Call(t, contractR, "find_page", map[string]any{}, svctest.As(admin)); r.Code != rpc.CodeNotFound {
		t.Errorf("integration/contract without the module: code %d, want 1200 (no surface)", r.Code)
	}
}

// TestLogResource reads recorded rows through integration/log on the three databases: every
// filter, find_one's first match, paging in meta, newest first.
func TestLogResource(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind, func(c *config.Config) { c.Integration.Log.Mode = config.InvocationLogAll })
		rec := integration.NewRecorder(srv.DB(), config.InvocationLog{Mode: config.InvocationLogAll, CaptureLimit: 4096}, time.Now, svctest.Logger())
		ctx := rpc.WithRequestInfo(context.Background(), rpc.RequestInfo{ID: "req-9"})
		rec.Record(ctx, integration.Invocation{SystemCode: "HIS", ContractCode: "a", FailureKind: "timeout", Err: errors.New("slow")})
		rec.Record(context.Background(), integration.Invocation{SystemCode: "HIS", ContractCode: "b", Direction: integration.DirectionInbound})
		rec.Record(context.Background(), integration.Invocation{SystemCode: "LIS", ContractCode: "a", Input: json.RawMessage(`{"token":"t"}`)})
		for _, tt := range []struct {
			params map[string]any
			total  int
		}{
			{map[string]any{}, 3}, {map[string]any{"systemCode": "HIS"}, 2}, {map[string]any{"contractCode": "a"}, 2},
			{map[string]any{"direction": "inbound"}, 1}, {map[string]any{"failureKind": "timeout"}, 1}, {map[string]any{"requestId": "req-9"}, 1},
			{map[string]any{"systemCode": "HIS", "contractCode": "a"}, 1},
		} {
			r := srv.Call(t, logR, "find_page", tt.params, svctest.As(viewer), svctest.WithMeta(map[string]any{"page": 1, "size": 2}))
			var pg struct {
				Total int
				Items []integration.InvocationLog
			}
			r.DataAs(t, &pg)
			if r.Code != 0 || pg.Total != tt.total || len(pg.Items) != min(tt.total, 2) {
				t.Errorf("find_page %v: code %d, total %d, %d items; want %d", tt.params, r.Code, pg.Total, len(pg.Items), tt.total)
			}
		}
		r := srv.Call(t, logR, "find_one", map[string]any{"failureKind": "timeout"}, svctest.As(viewer))
		var one integration.InvocationLog
		r.DataAs(t, &one)
		if one.RequestID != "req-9" || one.Error == nil || *one.Error != "slow" || one.ContractCode != "a" {
			t.Errorf("find_one = %+v", one)
		}
		r = srv.Call(t, logR, "find_one", map[string]any{"systemCode": "LIS"}, svctest.As(viewer))
		if !strings.Contains(string(r.Data), `"input":{"token":"******"}`) {
			t.Errorf("find_one LIS = %s, want the masked input", r.Data)
		}
	})
}
