package integration_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

const sigSecret = "00112233445566778899aabbccddeeff"

// echoScript calls /echo with the input as query and answers what the server saw.
const echoScript = `const r = http.get('/echo', {query: {q: String(input.q)}}); return r.json()`

// TestOutboundAuthSchemes: every outbound scheme reaches the local server as it should, on the
// three databases.
func TestOutboundAuthSchemes(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		ec := newEcho(t)
		itg := srv.Integration()
		for _, tt := range []struct {
			scheme string
			params map[string]any
			script string
			check  func(t *testing.T, s seenRequest)
		}{
			{"none", nil, "", func(t *testing.T, s seenRequest) {
				if s.Headers["authorization"] != "" {
					t.Errorf("authorization = %q", s.Headers["authorization"])
				}
			}},
			{"http_basic", map[string]any{"username": "u", "password": "pw-basic"}, "", func(t *testing.T, s seenRequest) {
				if s.Headers["authorization"] != "Basic dTpwdy1iYXNpYw==" {
					t.Errorf("authorization = %q", s.Headers["authorization"])
				}
			}},
			{"bearer", map[string]any{"token": "tok-bearer"}, "", func(t *testing.T, s seenRequest) {
				if s.Headers["authorization"] != "Bearer tok-bearer" {
					t.Errorf("authorization = %q", s.Headers["authorization"])
				}
			}},
			{"header", map[string]any{"X-Api-Key": "hdr-key"}, "", func(t *testing.T, s seenRequest) {
				if s.Headers["x-api-key"] != "hdr-key" {
					t.Errorf("x-api-key = %q", s.Headers["x-api-key"])
				}
			}},
			{"query", map[string]any{"api_key": "q-key"}, "", func(t *testing.T, s seenRequest) {
				if s.Query["api_key"] != "q-key" || s.Query["q"] != "1" {
					t.Errorf("query = %v", s.Query)
				}
			}},
			{"signature", map[string]any{"appId": "APP", "secret": sigSecret}, "", func(t *testing.T, s seenRequest) {
				payload := "app_id=APP&method=GET&nonce=" + s.Headers["x-nonce"] + "&path=/echo&timestamp=" + s.Headers["x-timestamp"]
				key, _ := hex.DecodeString(sigSecret)
				m := hmac.New(sha256.New, key)
				m.Write([]byte(payload))
				if want := hex.EncodeToString(m.Sum(nil)); s.Headers["x-signature"] != want || s.Headers["x-nonce"] == "" {
					t.Errorf("signature headers %v, want signature %s", s.Headers, want)
				}
			}},
			{"script", map[string]any{"k": "script-key"}, "return {'x-sig': crypto.sha256(params.k + request.method + request.path), 'x-q': request.query.q}",
				func(t *testing.T, s seenRequest) {
					sum := sha256.Sum256([]byte("script-keyGET/echo"))
					if s.Headers["x-sig"] != hex.EncodeToString(sum[:]) || s.Headers["x-q"] != "1" {
						t.Errorf("headers %v", s.Headers)
					}
				}},
		} {
			auth := map[string]any{"scheme": tt.scheme}
			if tt.params != nil {
				auth["params"] = tt.params
			}
			if tt.script != "" {
				auth["script"] = tt.script
			}
			define(t, srv, "auth-"+tt.scheme, map[string]any{"baseUrl": ec.URL, "outboundAuth": auth}, nil, "outbound", echoScript)
			res, err := itg.Invoke(context.Background(), "auth-"+tt.scheme+".op", map[string]any{"q": 1}, integration.WithSystem("auth-"+tt.scheme))
			if err != nil {
				t.Errorf("%s: %v", tt.scheme, err)
				continue
			}
			var s seenRequest
			res.Decode(&s)
			tt.check(t, s)
			if res.System() != "auth-"+tt.scheme || res.Cached() {
				t.Errorf("%s: system %q cached %v", tt.scheme, res.System(), res.Cached())
			}
		}
	})
}

// TestOutboundFailures: every failure kind and code of §7 on the real server, against the local
// HTTP server, with statistics and the invocation log fed.
func TestOutboundFailures(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind, func(c *config.Config) {
			c.Integration.Log.Mode = config.InvocationLogAll
			c.Integration.MaxResponseBody = 1024
		})
		ec := newEcho(t)
		itg := srv.Integration()
		base := map[string]any{"baseUrl": ec.URL}
		schema := map[string]any{
			"inputSchema":  map[string]any{"type": "object", "required": []string{"q"}},
			"outputSchema": map[string]any{"type": "object", "required": []string{"ok"}},
		}
		type tc struct {
			name     string
			sys      map[string]any
			contract map[string]any
			script   string
			input    any
			opts     []integration.InvokeOption
			ctx      func() (context.Context, context.CancelFunc)
			kind     string
			code     int
		}
		for _, tt := range []tc{
			{name: "upstream", script: "errors.upstream('vendor said no')", kind: "upstream", code: integration.ErrCodeUpstreamFailed},
			{name: "transport", sys: map[string]any{"baseUrl": "http://127.0.0.1:1"}, script: "return http.get('/x').status", kind: "transport", code: integration.ErrCodeTransportFailed},
			{name: "script", script: "throw new Error('oops')", kind: "script", code: integration.ErrCodeScriptFailed},
			{name: "input-invalid", contract: schema, script: "return {ok: true}", input: map[string]any{}, kind: "input_invalid", code: integration.ErrCodeInputInvalid},
			{name: "output-invalid", contract: schema, script: "return {nope: 1}", input: map[string]any{"q": 1}, kind: "output_invalid", code: integration.ErrCodeOutputInvalid},
			{name: "run-timeout", script: "return http.get('/slow').status", opts: []integration.InvokeOption{integration.WithTimeout(200 * time.Millisecond)}, kind: "timeout", code: integration.ErrCodeInvocationTimeout},
			{name: "loop-timeout", script: "for(;;){}", opts: []integration.InvokeOption{integration.WithTimeout(200 * time.Millisecond)}, kind: "timeout", code: integration.ErrCodeInvocationTimeout},
			{name: "system-call-timeout", sys: map[string]any{"baseUrl": ec.URL, "timeoutMs": 150}, script: "return http.get('/slow').status", kind: "transport", code: integration.ErrCodeTransportFailed},
			{name: "script-call-timeout", script: "return http.get('/slow', {timeout: 150}).status", kind: "transport", code: integration.ErrCodeTransportFailed},
			{name: "canceled", script: "return http.get('/slow').status", kind: "canceled", code: integration.ErrCodeInvocationCanceled,
				ctx: func() (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					time.AfterFunc(150*time.Millisecond, cancel)
					return ctx, cancel
				}},
			{name: "auth-hook", sys: map[string]any{"baseUrl": ec.URL, "outboundAuth": map[string]any{"scheme": "script", "script": "throw new Error('no key')"}},
				script: "return http.get('/echo').status", kind: "config", code: integration.ErrCodeInvalidAuthParams},
			{name: "broken-envelope", sys: map[string]any{"baseUrl": ec.URL, "outboundEnvelope": map[string]any{"request": "return 1"}},
				script: "return http.get('/echo').status", kind: "config", code: integration.ErrCodeInvalidEnvelope},
			{name: "absolute-path", script: "return http.get('http://evil.example/x').status", kind: "script", code: integration.ErrCodeScriptFailed},
			{name: "max-response-body", script: "return http.get('/big', {query: {n: '2048'}}).status", kind: "transport", code: integration.ErrCodeTransportFailed},
			{name: "missing-code-map", script: "return codes.toExternal('gender', 'M')", kind: "config", code: integration.ErrCodeMissingCodeMap},
		} {
			sys := base
			if tt.sys != nil {
				sys = tt.sys
			}
			define(t, srv, tt.name, sys, tt.contract, "outbound", tt.script)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			start := time.Now()
			_, err := itg.Invoke(ctx, tt.name+".op", tt.input, append([]integration.InvokeOption{integration.WithSystem(tt.name)}, tt.opts...)...)
			cancel()
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("%s: took %v", tt.name, took)
			}
			var ie *integration.InvocationError
			re, _ := rpc.AsError(err)
			if !errors.As(err, &ie) || ie.Kind != tt.kind || re == nil || re.Code != tt.code {
				t.Errorf("%s: err %v, want kind %s code %d", tt.name, err, tt.kind, tt.code)
				continue
			}
			st := statsOf(itg, tt.name)
			if st.Calls != 1 || st.Failures[tt.kind] != 1 {
				t.Errorf("%s: stats %+v", tt.name, st)
			}
			r := srv.Call(t, logR, "find_one", map[string]any{"systemCode": tt.name}, svctest.As(admin))
			var row integration.InvocationLog
			r.DataAs(t, &row)
			if row.FailureKind != tt.kind || row.Error == nil {
				t.Errorf("%s: log row %+v", tt.name, row)
			}
		}
		// The adapter's timeoutMs is the run's deadline when the caller gives none.
		d := define(t, srv, "adapter-timeout", base, nil, "outbound", "return http.get('/slow').status")
		if r := srv.Call(t, adapterR, "update", map[string]any{"id": d.adapter, "systemId": d.system, "contractId": d.contract,
			"script": "return http.get('/slow').status", "timeoutMs": 200}, svctest.As(admin)); r.Code != 0 {
			t.Fatalf("adapter update: %d %s", r.Code, r.Message)
		}
		start := time.Now()
		if _, err := itg.Invoke(context.Background(), "adapter-timeout.op", nil, integration.WithSystem("adapter-timeout")); !errors.Is(err, integration.ErrInvocationTimeout) || time.Since(start) > 3*time.Second {
			t.Errorf("adapter timeoutMs: %v after %v", err, time.Since(start))
		}
		// A credential sealed with another key cannot be opened: config, 2617.
		define(t, srv, "other-key", map[string]any{"baseUrl": ec.URL, "outboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "t"}}},
			nil, "outbound", "return http.get('/echo').status")
		other, _ := integration.NewSecrets("ZmVkY2JhOTg3NjU0MzIxMA==", config.SecretAlgorithmAES)
		auth := &integration.AuthConfig{Scheme: "bearer", Params: map[string]string{"token": other.Seal("t")}}
		if _, err := srv.DB().NewUpdate().Model((*integration.System)(nil)).Set("outbound_auth = ?", auth).Where("code = ?", "other-key").Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err := itg.Invoke(context.Background(), "other-key.op", nil, integration.WithSystem("other-key"))
		if ie := (*integration.InvocationError)(nil); !errors.As(err, &ie) || ie.Kind != "config" || !errors.Is(err, integration.ErrInvalidAuthParams) {
			t.Errorf("undecryptable credential: %v", err)
		}
	})
}

// statsOf is the outbound counters of system (its one contract).
func statsOf(itg *integration.Service, system string) integration.InvocationStats {
	return statsFor(itg, system, system+".op", "outbound")
}

// statsFor is the counters of (system, contract, direction), zero when none.
func statsFor(itg *integration.Service, system, contract, dir string) integration.InvocationStats {
	for _, s := range itg.Stats().InvocationStats() {
		if s.System == system && s.Contract == contract && s.Direction == dir {
			return s
		}
	}
	return integration.InvocationStats{}
}

// TestOutboundDefinitionErrors: the definition checks of §7 steps 1–4 and route resolution
// (exact beats wildcard, empty key is the default).
func TestOutboundDefinitionErrors(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		itg := srv.Integration()
		ctx := context.Background()
		a := define(t, srv, "A", nil, nil, "outbound", "return 'A'")
		b := define(t, srv, "B", nil, map[string]any{"code": "B.other"}, "outbound", "return 'B'")
		create(t, srv, adapterR, map[string]any{"systemId": b.system, "contractId": a.contract, "script": "return 'B for A'"})
		create(t, srv, adapterR, map[string]any{"systemId": a.system, "contractId": b.contract, "script": "return 'A for B'", "isEnabled": false})
		create(t, srv, routeR, map[string]any{"routeKey": "", "contractId": "", "systemId": a.system})
		create(t, srv, routeR, map[string]any{"routeKey": "t1", "contractId": "", "systemId": a.system})
		create(t, srv, routeR, map[string]any{"routeKey": "t1", "contractId": a.contract, "systemId": b.system})
		create(t, srv, contractR, map[string]any{"code": "off", "name": "off", "isEnabled": false})
		create(t, srv, contractR, map[string]any{"code": "lonely", "name": "lonely"})
		create(t, srv, systemR, map[string]any{"code": "down", "name": "down", "isEnabled": false})
		for _, tt := range []struct {
			name, contract string
			opts           []integration.InvokeOption
			want           string
			code           int
		}{
			{"default route", "A.op", nil, `"A"`, 0},
			{"exact beats wildcard", "A.op", []integration.InvokeOption{integration.WithRoute("t1")}, `"B for A"`, 0},
			{"wildcard", "B.other", []integration.InvokeOption{integration.WithRoute("t1")}, "", integration.ErrCodeAdapterDisabled},
			{"system option", "B.other", []integration.InvokeOption{integration.WithSystem("B")}, `"B"`, 0},
			{"ambiguous", "A.op", []integration.InvokeOption{integration.WithSystem("A"), integration.WithRoute("")}, "", integration.ErrCodeTargetAmbiguous},
			{"contract missing", "nope", nil, "", integration.ErrCodeContractNotFound},
			{"contract disabled", "off", nil, "", integration.ErrCodeContractDisabled},
			{"route missing", "A.op", []integration.InvokeOption{integration.WithRoute("t9")}, "", integration.ErrCodeRouteNotFound},
			{"system missing", "A.op", []integration.InvokeOption{integration.WithSystem("zz")}, "", integration.ErrCodeSystemNotFound},
			{"system disabled", "A.op", []integration.InvokeOption{integration.WithSystem("down")}, "", integration.ErrCodeSystemDisabled},
			{"adapter missing", "lonely", []integration.InvokeOption{integration.WithSystem("A")}, "", integration.ErrCodeAdapterNotFound},
		} {
			res, err := itg.Invoke(ctx, tt.contract, nil, tt.opts...)
			if tt.code != 0 {
				if re, ok := rpc.AsError(err); !ok || re.Code != tt.code {
					t.Errorf("%s: err %v, want %d", tt.name, err, tt.code)
				}
				continue
			}
			if err != nil || string(res.Output()) != tt.want {
				t.Errorf("%s: %v %v, want %s", tt.name, res, err, tt.want)
			}
		}
	})
}

// TestOutboundRetriesEnvelopeCacheMasking: retries only for idempotent methods, envelope wrap
// and unwrap (and errors.upstream from the unwrap), WithCache hits uncounted, typed Call, and the
// stored trace masked.
func TestOutboundRetriesEnvelopeCacheMasking(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite, func(c *config.Config) { c.Integration.Log.Mode = config.InvocationLogAll })
	ec := newEcho(t)
	itg := srv.Integration()
	ctx := context.Background()
	retry := map[string]any{"maxAttempts": 3, "initialBackoffMs": 1, "maxBackoffMs": 2}

	define(t, srv, "retry", map[string]any{"baseUrl": ec.URL, "retry": retry}, nil, "outbound",
		"const r = input.post ? http.post('/flaky', {}) : http.get('/flaky'); return {status: r.status, ok: r.ok}")
	ec.flaky.Store(2)
	out, err := integration.Call[map[string]any](ctx, itg, "retry.op", map[string]any{}, integration.WithSystem("retry"))
	if err != nil || out["status"] != float64(200) || ec.count("/flaky") != 3 {
		t.Errorf("GET with 2 failures: %v %v after %d attempts, want 200 after 3", out, err, ec.count("/flaky"))
	}
	ec.flaky.Store(2)
	out, err = integration.Call[map[string]any](ctx, itg, "retry.op", map[string]any{"post": true}, integration.WithSystem("retry"))
	if err != nil || out["status"] != float64(503) || out["ok"] != false || ec.count("/flaky") != 4 {
		t.Errorf("POST: %v %v after %d attempts, want one 503 (no retry)", out, err, ec.count("/flaky"))
	}

	define(t, srv, "env", map[string]any{"baseUrl": ec.URL, "outboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "tok-env-secret"}},
		"outboundEnvelope": map[string]any{
			"request":  "return {path: '/envelope', method: 'POST', body: {payload: request.body, sign: crypto.md5(JSON.stringify(request.body))}}",
			"response": "const j = response.json(); if (j.data.payload.fail) errors.upstream('refused by vendor'); return j.data",
		}}, nil, "outbound", "const r = http.get('/anything', {body: {password: 'pw-in-body', fail: !!input.fail, q: input.q}}); return {ok: true, got: r}")
	res, err := itg.Invoke(ctx, "env.op", map[string]any{"q": "v"}, integration.WithSystem("env"))
	if err != nil || !strings.Contains(string(res.Output()), `"sign"`) || !strings.Contains(string(res.Output()), `"q":"v"`) {
		t.Fatalf("envelope: %v %v", res, err)
	}
	if l := ec.last(); l.Method != "POST" || l.Path != "/envelope" {
		t.Errorf("wrapped request %s %s, want POST /envelope", l.Method, l.Path)
	}
	_, err = itg.Invoke(ctx, "env.op", map[string]any{"fail": true}, integration.WithSystem("env"))
	if !errors.Is(err, integration.ErrUpstreamFailed) {
		t.Errorf("unwrap errors.upstream: %v", err)
	}
	r := srv.Call(t, logR, "find_one", map[string]any{"systemCode": "env", "failureKind": "upstream"}, svctest.As(admin))
	if r.Code != 0 || strings.Contains(string(r.Data), "tok-env-secret") || strings.Contains(string(r.Data), "pw-in-body") ||
		!strings.Contains(string(r.Data), `"authorization":"******"`) || !strings.Contains(string(r.Data), `\"password\":\"******\"`) {
		t.Errorf("stored trace not masked: %s", r.Data)
	}

	define(t, srv, "cached", map[string]any{"baseUrl": ec.URL}, nil, "outbound", "return {n: http.get('/echo').status}")
	for i := 0; i < 3; i++ {
		res, err := itg.Invoke(ctx, "cached.op", map[string]any{"k": 1}, integration.WithSystem("cached"), integration.WithCache(time.Minute))
		if err != nil || res.Cached() != (i > 0) {
			t.Errorf("call %d: cached %v %v", i, res.Cached(), err)
		}
	}
	if st := statsOf(itg, "cached"); st.Calls != 1 || st.Successes != 1 {
		t.Errorf("cache hits counted: %+v", st)
	}
	var rows struct{ Total int }
	srv.Call(t, logR, "find_page", map[string]any{"systemCode": "cached"}, svctest.As(admin)).DataAs(t, &rows)
	if rows.Total != 1 {
		t.Errorf("cache hits logged: %d rows", rows.Total)
	}
	var decoded struct{ N int }
	if res, _ := itg.Invoke(ctx, "cached.op", map[string]any{"k": 1}, integration.WithSystem("cached"), integration.WithCache(time.Minute)); res.Decode(&decoded) != nil || decoded.N != 200 {
		t.Errorf("Decode = %+v", decoded)
	}
	_ = json.Valid
}

// TestCodesLibrary: codes.toExternal / toCanonical through the system's code map (1 and "1"
// match, the other side's primary comes back typed), aliases, per-call options over the stored
// policy, entries, and the option checks.
func TestCodesLibrary(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	d := define(t, srv, "codes", nil, nil, "outbound", `
const c = [];
c.push(codes.toExternal('gender', 'M'), codes.toExternal('gender', 'male'), codes.toCanonical('gender', '1'), codes.toCanonical('gender', 2));
c.push(codes.toExternal('gender', null), codes.toExternal('gender', 'X', {passthrough: true}), codes.toExternal('gender', 'X', {fallback: 0}));
c.push(codes.toExternal('gender', 'X'));
c.push(codes.entries('gender').length);
let bad = 'accepted';
try { codes.toExternal('gender', 'M', {passthrough: true, reject: true}) } catch (e) { bad = 'refused' }
c.push(bad);
try { codes.toExternal('gender', 'X', {reject: true}) } catch (e) { c.push('unmapped') }
return c`)
	create(t, srv, codeMapR, map[string]any{"systemId": d.system, "codeSet": "gender", "name": "Gender", "onUnmapped": "fallback",
		"fallbackExternal": 9, "entries": []map[string]any{
			{"canonical": "M", "external": 1, "canonicalAliases": []any{"male"}},
			{"canonical": "F", "external": 2},
		}})
	res, err := srv.Integration().Invoke(context.Background(), "codes.op", nil, integration.WithSystem("codes"))
	if err != nil || string(res.Output()) != `[1,1,"M","F",null,"X",0,9,2,"refused","unmapped"]` {
		t.Errorf("codes: %v %v", res, err)
	}
}
