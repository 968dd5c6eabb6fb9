package integration_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// patientIn and patientOut are the typed handler's shapes.
type patientIn struct {
	ID   string `json:"id"`
	Fail string `json:"fail,omitempty"`
}

type patientOut struct {
	Stored string `json:"stored"`
	Bad    bool   `json:"bad,omitempty"`
}

// handlers registers patient.sync (typed) counting its calls; input "fail" makes it fail with
// the given text, "bad" answers an output violating the output schema.
func handlers(calls *atomic.Int64) []integration.InboundHandler {
	return []integration.InboundHandler{integration.NewInboundHandler("patient.sync", func(_ context.Context, in patientIn) (patientOut, error) {
		calls.Add(1)
		if in.Fail != "" {
			return patientOut{}, errors.New(in.Fail)
		}
		return patientOut{Stored: in.ID, Bad: in.ID == "bad"}, nil
	})}
}

func inboundServer(t *testing.T, kind config.DBKind, calls *atomic.Int64, mutate ...func(*config.Config)) *svctest.Server {
	t.Helper()
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Integration.SecretKey = testKey
		c.Integration.Log.Mode = config.InvocationLogAll
		for _, m := range mutate {
			m(c)
		}
	}), svctest.WithOptions(svc.WithIntegration(integration.Options{InboundHandlers: handlers(calls), ScriptLimits: integration.Limits{Worker: integration.TestWorker}})))
}

// deliver posts body to the gateway with headers; it answers status, the body and the
// envelope code (0 when the body is not an envelope).
func deliver(t *testing.T, base, system, contract, query, body string, headers map[string]string) (int, string, int) {
	t.Helper()
	u := base + "/integration/inbound/" + system + "/" + contract
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var env struct {
		Code int `json:"code"`
	}
	json.Unmarshal(b, &env)
	return res.StatusCode, string(b), env.Code
}

// signed returns the signature headers of a delivery to path signed as app with secret.
func signed(app, secret, path string, ts int64, nonce string) map[string]string {
	key, _ := hex.DecodeString(secret)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("app_id=" + app + "&method=POST&nonce=" + nonce + "&path=" + path + "&timestamp=" + strconv.FormatInt(ts, 10)))
	return map[string]string{"x-timestamp": strconv.FormatInt(ts, 10), "x-nonce": nonce, "x-signature": hex.EncodeToString(m.Sum(nil))}
}

const dispatchScript = `return dispatch(JSON.parse(request.body))`

// TestInboundAuthSchemes: every inbound scheme accepts the right credentials and refuses
// wrong ones with the uniform 401/2622; refusals count as auth (or config) and are never
// logged; on the three databases.
func TestInboundAuthSchemes(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		var calls atomic.Int64
		srv := inboundServer(t, kind, &calls)
		contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
		now := time.Now().Unix()
		for _, tt := range []struct {
			name       string
			auth       map[string]any
			good, bad  map[string]string
			goodQ      string
			refuseKind string
		}{
			{name: "none", auth: map[string]any{"scheme": "none"}},
			{name: "ip", auth: map[string]any{"scheme": "ip", "params": map[string]any{"whitelist": "10.0.0.0/8, 127.0.0.1"}}},
			{name: "ipdeny", auth: map[string]any{"scheme": "ip", "params": map[string]any{"whitelist": "10.0.0.0/8"}}, bad: map[string]string{}, refuseKind: "auth"},
			{name: "basic", auth: map[string]any{"scheme": "http_basic", "params": map[string]any{"username": "u", "password": "in-pass"}},
				good: map[string]string{"Authorization": "basic dTppbi1wYXNz"}, bad: map[string]string{"Authorization": "Basic dTp3cm9uZw=="}, refuseKind: "auth"},
			{name: "bearer", auth: map[string]any{"scheme": "bearer", "params": map[string]any{"token": "in-token"}},
				good: map[string]string{"Authorization": "Bearer in-token"}, bad: map[string]string{"Authorization": "Bearer nope"}, refuseKind: "auth"},
			{name: "header", auth: map[string]any{"scheme": "header", "params": map[string]any{"X-Key": "hk", "X-Other": "ho"}},
				good: map[string]string{"X-Key": "hk", "X-Other": "ho"}, bad: map[string]string{"X-Key": "hk"}, refuseKind: "auth"},
			{name: "query", auth: map[string]any{"scheme": "query", "params": map[string]any{"key": "qk"}}, goodQ: "key=qk", bad: map[string]string{}, refuseKind: "auth"},
			{name: "signature", auth: map[string]any{"scheme": "signature", "params": map[string]any{"secret": sigSecret}},
				good: signed("signature", sigSecret, "/integration/inbound/signature/patient.sync", now, "n-1"),
				bad:  signed("signature", sigSecret, "/integration/inbound/signature/other", now, "n-2"), refuseKind: "auth"},
			{name: "script", auth: map[string]any{"scheme": "script", "params": map[string]any{"k": "sk"}, "script": "return request.headers['x-k'] === params.k && request.clientAddr !== ''"},
				good: map[string]string{"X-K": "sk"}, bad: map[string]string{"X-K": "no"}, refuseKind: "auth"},
			{name: "noauth", bad: map[string]string{}, refuseKind: "config"},
			{name: "brokenscript", auth: map[string]any{"scheme": "script", "script": "throw new Error('x')"}, bad: map[string]string{}, refuseKind: "config"},
		} {
			sys := map[string]any{"code": tt.name, "name": tt.name}
			if tt.auth != nil {
				sys["inboundAuth"] = tt.auth
			}
			id := create(t, srv, systemR, sys)
			create(t, srv, adapterR, map[string]any{"systemId": id, "contractId": contract, "direction": "inbound", "script": dispatchScript})
			if tt.refuseKind == "" || tt.good != nil || tt.goodQ != "" {
				status, body, _ := deliver(t, srv.URL, tt.name, "patient.sync", tt.goodQ, `{"id":"p1"}`, tt.good)
				if status != 200 || body != `{"stored":"p1"}` {
					t.Errorf("%s good: %d %s", tt.name, status, body)
				}
			}
			if tt.bad != nil {
				status, _, code := deliver(t, srv.URL, tt.name, "patient.sync", "", `{"id":"p2"}`, tt.bad)
				if status != 401 || code != integration.ErrCodeInboundAuthFailed {
					t.Errorf("%s bad: %d/%d, want 401/2622", tt.name, status, code)
				}
				st := inboundStats(srv.Integration(), tt.name, "")
				if st.Failures[tt.refuseKind] != 1 {
					t.Errorf("%s: rejection stats %+v, want one %s", tt.name, st, tt.refuseKind)
				}
			}
			var rows struct{ Total int }
			srv.Call(t, logR, "find_page", map[string]any{"systemCode": tt.name, "failureKind": "auth"}, svctest.As(admin)).DataAs(t, &rows)
			if rows.Total != 0 {
				t.Errorf("%s: refusals logged", tt.name)
			}
		}
		// Unknown and disabled systems answer exactly like bad credentials.
		create(t, srv, systemR, map[string]any{"code": "off", "name": "off", "isEnabled": false, "inboundAuth": map[string]any{"scheme": "none"}})
		for _, code := range []string{"nope", "off"} {
			if status, _, c := deliver(t, srv.URL, code, "patient.sync", "", `{}`, nil); status != 401 || c != integration.ErrCodeInboundAuthFailed {
				t.Errorf("system %s: %d/%d", code, status, c)
			}
		}
	})
}

func inboundStats(itg *integration.Service, system, contract string) integration.InvocationStats {
	return statsFor(itg, system, contract, "inbound")
}

// TestInboundPipeline: 404/501 mapping, dispatch with schema checks and sticky failure kinds,
// $response rendering, status remapping, the log row and the rate limit.
func TestInboundPipeline(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		var calls atomic.Int64
		srv := inboundServer(t, kind, &calls, func(c *config.Config) {
			c.Integration.Inbound.RateLimit = config.RateLimit{Max: 100, Period: time.Minute}
		})
		sysID := create(t, srv, systemR, map[string]any{"code": "HIS", "name": "h", "inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "gw-token"}}})
		c := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p",
			"inputSchema":  map[string]any{"type": "object", "required": []string{"id"}},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"bad": map[string]any{"const": false}}}})
		create(t, srv, contractR, map[string]any{"code": "no.handler", "name": "n"})
		noHandler := create(t, srv, contractR, map[string]any{"code": "no.handler2", "name": "n"})
		create(t, srv, adapterR, map[string]any{"systemId": sysID, "contractId": noHandler, "direction": "inbound", "script": dispatchScript})
		adapter := create(t, srv, adapterR, map[string]any{"systemId": sysID, "contractId": c, "direction": "inbound", "script": `
const body = JSON.parse(request.body);
switch (body.mode) {
case 'catch':
  try { dispatch({}) } catch (e) { return {caught: e.message} }
case 'reply':
  return {$response: {status: 202, headers: {'X-Reply': 'yes'}, body: 'accepted ' + dispatch({id: body.id}).stored}};
case 'json':
  return {$response: {body: {n: 1}}};
case 'badresponse':
  return {$response: 'nope'};
case 'empty':
  return null;
case 'throw':
  throw new Error('script broke');
}
return dispatch(body)`})
		auth := map[string]string{"Authorization": "Bearer gw-token"}
		for _, tt := range []struct {
			name, contract, body string
			status, code         int
			reply                string
			kind                 string
		}{
			{"ok", "patient.sync", `{"id":"p1"}`, 200, 0, `{"stored":"p1"}`, ""},
			{"input invalid", "patient.sync", `{"x":1}`, 400, integration.ErrCodeInputInvalid, "", "input_invalid"},
			{"handler error", "patient.sync", `{"id":"p","fail":"db down"}`, 500, 0, "", "handler"},
			{"output invalid", "patient.sync", `{"id":"bad"}`, 500, integration.ErrCodeOutputInvalid, "", "output_invalid"},
			{"caught dispatch failure sticks", "patient.sync", `{"mode":"catch"}`, 200, 0, `{"caught":`, "input_invalid"},
			{"$response text", "patient.sync", `{"mode":"reply","id":"r1"}`, 202, 0, "accepted r1", ""},
			{"$response json", "patient.sync", `{"mode":"json"}`, 200, 0, `{"n":1}`, ""},
			{"$response not an object", "patient.sync", `{"mode":"badresponse"}`, 500, integration.ErrCodeScriptFailed, "", "script"},
			{"null reply", "patient.sync", `{"mode":"empty"}`, 200, 0, "", ""},
			{"script throws", "patient.sync", `{"mode":"throw"}`, 500, integration.ErrCodeScriptFailed, "", "script"},
			{"contract missing", "nope", `{}`, 404, integration.ErrCodeContractNotFound, "", ""},
			{"adapter missing", "no.handler", `{}`, 404, integration.ErrCodeAdapterNotFound, "", ""},
			{"handler missing", "no.handler2", `{}`, 501, integration.ErrCodeInboundHandlerMissing, "", ""},
		} {
			before := inboundStats(srv.Integration(), "HIS", tt.contract)
			status, body, code := deliver(t, srv.URL, "HIS", tt.contract, "", tt.body, auth)
			if status != tt.status || (tt.code != 0 && code != tt.code) || !strings.HasPrefix(body, tt.reply) {
				t.Errorf("%s: %d %s, want %d code %d reply %s", tt.name, status, body, tt.status, tt.code, tt.reply)
			}
			after := inboundStats(srv.Integration(), "HIS", tt.contract)
			if tt.kind != "" && after.Failures[tt.kind] != before.Failures[tt.kind]+1 {
				t.Errorf("%s: stats %+v, want one more %s", tt.name, after, tt.kind)
			}
		}
		// The log row of an accepted delivery: dispatched input and output, the caller's request
		// with its credentials masked, the reply.
		r := srv.Call(t, logR, "find_page", map[string]any{"systemCode": "HIS", "contractCode": "patient.sync", "failureKind": ""}, svctest.As(admin))
		var pg struct{ Items []integration.InvocationLog }
		r.DataAs(t, &pg)
		var found bool
		for _, row := range pg.Items {
			if string(row.Input) == `{"id":"p1"}` && string(row.Output) == `{"stored":"p1"}` && row.Direction == "inbound" {
				found = true
				if strings.Contains(string(row.HTTPTrace), "gw-token") || !strings.Contains(string(row.HTTPTrace), `"responseBody":"{\"stored\":\"p1\"}"`) {
					t.Errorf("trace %s", row.HTTPTrace)
				}
			}
		}
		if !found {
			t.Errorf("no log row of the accepted delivery: %s", r.Data)
		}
		_ = adapter
	})
}

// TestInboundRateLimit: per (system, client IP), 429/1401 with Retry-After past the limit;
// every unknown system code shares one bucket per client (issue #31 item 6: guessing codes
// neither escapes the limit nor adds a bucket per guess).
func TestInboundRateLimit(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := inboundServer(t, config.SQLite, &calls, func(c *config.Config) {
		c.Integration.Inbound.RateLimit = config.RateLimit{Max: 2, Period: time.Minute}
	})
	for _, code := range []string{"HIS", "LIS"} {
		create(t, srv, systemR, map[string]any{"code": code, "name": code, "inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "t"}}})
	}
	for i := 0; i < 3; i++ {
		status, _, code := deliver(t, srv.URL, "HIS", "x", "", `{}`, nil)
		if i < 2 && status != 401 || i == 2 && (status != 429 || code != rpc.CodeTooManyRequests) {
			t.Errorf("delivery %d: %d/%d", i, status, code)
		}
	}
	if status, _, _ := deliver(t, srv.URL, "LIS", "x", "", `{}`, nil); status != 401 {
		t.Errorf("another system shares the bucket: %d", status)
	}
	for i, code := range []string{"guess-1", "guess-2", "guess-3", "guess-4"} {
		status, _, c := deliver(t, srv.URL, code, "x", "", `{}`, nil)
		if i < 2 && status != 401 || i >= 2 && (status != 429 || c != rpc.CodeTooManyRequests) {
			t.Errorf("unknown system %s (delivery %d of unknown codes): %d/%d, want 401 for two, then 429", code, i, status, c)
		}
	}
}

// TestSignatureAcrossServers: the outbound signature of one server is verified by the inbound
// gateway of another, and the same signed request replayed is refused — also by a second node
// of the receiving deployment sharing its database and Redis.
func TestSignatureAcrossServers(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	ds := svctest.DataSource(t, config.Postgres)
	kvc := svctest.RedisConfig(t)
	app := "itg-" + strings.ReplaceAll(svctest.UniquePrefix(t), ":", "-")
	shared := func(c *config.Config) {
		c.DataSources[config.PrimaryDataSource] = ds
		c.KVStore = kvc
		c.App.Name = app
	}
	recv1 := inboundServer(t, config.Postgres, &calls, shared)
	recv2 := inboundServer(t, config.Postgres, &calls, shared)
	c := create(t, recv1, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	id := create(t, recv1, systemR, map[string]any{"code": "SENDER", "name": "s", "inboundAuth": map[string]any{"scheme": "signature", "params": map[string]any{"secret": sigSecret}}})
	create(t, recv1, adapterR, map[string]any{"systemId": id, "contractId": c, "direction": "inbound", "script": dispatchScript})

	sender := newServer(t, config.SQLite, func(c *config.Config) { c.Integration.Log.Mode = config.InvocationLogAll })
	define(t, sender, "RECV", map[string]any{"baseUrl": recv1.URL + "/integration/inbound/SENDER",
		"outboundAuth": map[string]any{"scheme": "signature", "params": map[string]any{"appId": "SENDER", "secret": sigSecret}}},
		nil, "outbound", `const r = http.post('/patient.sync', {id: input.id}); return {status: r.status, body: r.json()}`)
	out, err := integration.Call[map[string]any](context.Background(), sender.Integration(), "RECV.op", map[string]any{"id": "x9"}, integration.WithSystem("RECV"))
	if err != nil || out["status"] != float64(200) || calls.Load() != 1 {
		t.Fatalf("signed delivery: %v %v (handler calls %d)", out, err, calls.Load())
	}
	// Replay the exact request the sender made, from its stored trace, to both nodes.
	var row integration.InvocationLog
	sender.Call(t, logR, "find_one", map[string]any{"systemCode": "RECV"}, svctest.As(admin)).DataAs(t, &row)
	var trace []integration.HTTPExchange
	json.Unmarshal(row.HTTPTrace, &trace)
	if len(trace) != 1 {
		t.Fatalf("trace %s", row.HTTPTrace)
	}
	h := map[string]string{}
	for _, k := range []string{"x-timestamp", "x-nonce", "x-signature"} {
		h[k] = trace[0].RequestHeaders[k]
	}
	for _, node := range []*svctest.Server{recv1, recv2} {
		if status, _, code := deliver(t, node.URL, "SENDER", "patient.sync", "", `{"id":"x9"}`, h); status != 401 || code != integration.ErrCodeInboundAuthFailed {
			t.Errorf("replay: %d/%d, want 401/2622", status, code)
		}
	}
	now := time.Now().Unix()
	fresh := signed("SENDER", sigSecret, "/integration/inbound/SENDER/patient.sync", now, "fresh-1")
	if status, _, _ := deliver(t, recv2.URL, "SENDER", "patient.sync", "", `{"id":"y"}`, fresh); status != 200 {
		t.Errorf("fresh nonce on node 2: %d", status)
	}
	if status, _, _ := deliver(t, recv1.URL, "SENDER", "patient.sync", "", `{"id":"y"}`, fresh); status != 401 {
		t.Errorf("nonce used on node 2 accepted by node 1: %d", status)
	}
	old := signed("SENDER", sigSecret, "/integration/inbound/SENDER/patient.sync", now-600, "old-1")
	if status, _, _ := deliver(t, recv1.URL, "SENDER", "patient.sync", "", `{"id":"y"}`, old); status != 401 {
		t.Errorf("stale timestamp: %d", status)
	}
}

// keyScheme is a host scheme in both directions: outbound it sends params.key in X-Key,
// inbound it admits a delivery whose X-Key is params.key. key is its only secret.
type keyScheme struct{}

func (keyScheme) Name() string              { return "x-key" }
func (keyScheme) SensitiveParams() []string { return []string{"key"} }

func (keyScheme) Apply(p map[string]string) (func(*http.Request) error, error) {
	if p["key"] == "" {
		return nil, errors.New("key is required")
	}
	return func(r *http.Request) error { r.Header.Set("X-Key", p["key"]); return nil }, nil
}

func (keyScheme) Verify(_ context.Context, req *integration.InboundRequest, p map[string]string) error {
	if req.Headers["x-key"] != p["key"] {
		return errors.New("wrong key")
	}
	return nil
}

// TestHostSchemes: host-defined schemes sign outbound calls and verify inbound deliveries;
// their sensitive params are sealed and masked like the built-ins'.
func TestHostSchemes(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Integration.SecretKey = testKey
	}), svctest.WithOptions(svc.WithIntegration(integration.Options{InboundHandlers: handlers(&calls), ScriptLimits: integration.Limits{Worker: integration.TestWorker},
		OutboundSchemes: []integration.OutboundScheme{keyScheme{}}, InboundSchemes: []integration.InboundScheme{keyScheme{}}})))
	ec := newEcho(t)
	auth := map[string]any{"scheme": "x-key", "params": map[string]any{"key": "host-key-1", "label": "shown"}}
	d := define(t, srv, "HOST", map[string]any{"baseUrl": ec.URL, "outboundAuth": auth, "inboundAuth": auth}, map[string]any{"code": "patient.sync"}, "inbound", dispatchScript)
	create(t, srv, adapterR, map[string]any{"systemId": d.system, "contractId": d.contract, "script": "return http.get('/echo').json().headers['x-key']"})
	r := srv.Call(t, systemR, "find_all", map[string]any{"code": "HOST"}, svctest.As(admin))
	if !strings.Contains(string(r.Data), `"key":"******"`) || !strings.Contains(string(r.Data), `"label":"shown"`) {
		t.Errorf("host scheme params not masked as declared: %s", r.Data)
	}
	res, err := srv.Integration().Invoke(context.Background(), "patient.sync", nil, integration.WithSystem("HOST"))
	if err != nil || string(res.Output()) != `"host-key-1"` {
		t.Errorf("outbound host scheme: %v %v", res, err)
	}
	if status, body, _ := deliver(t, srv.URL, "HOST", "patient.sync", "", `{"id":"h1"}`, map[string]string{"X-Key": "host-key-1"}); status != 200 || body != `{"stored":"h1"}` {
		t.Errorf("inbound host scheme: %d %s", status, body)
	}
	if status, _, _ := deliver(t, srv.URL, "HOST", "patient.sync", "", `{"id":"h1"}`, map[string]string{"X-Key": "nope"}); status != 401 {
		t.Errorf("inbound host scheme, wrong key: %d", status)
	}
	if st := inboundStats(srv.Integration(), "HOST", ""); st.Failures["auth"] != 1 {
		t.Errorf("refusal stats %+v", st)
	}
}
