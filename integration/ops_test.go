package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/svctest"
)

const opsR = "integration/ops"

// TestOpsDryRuns: dry_run and dry_run_inbound as the client sends them (gzip+base64), with the
// saved adapter or a given script, real wire calls, masked traces, and nothing recorded.
func TestOpsDryRuns(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		var calls atomic.Int64
		srv := inboundServer(t, kind, &calls, func(c *config.Config) { c.Integration.RunTimeout = 300 * time.Millisecond })
		ec := newEcho(t)
		define(t, srv, "E", map[string]any{"baseUrl": ec.URL, "isEnabled": false, "outboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "dry-secret"}}},
			nil, "outbound", "return {seen: http.get('/echo').json().headers.authorization === 'Bearer dry-secret'}")
		r := encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "E.op", "input": map[string]any{"a": 1}})
		var res integration.DryRunResult
		json.Unmarshal(r.Data, &res)
		if r.Code != 0 || string(res.Output) != `{"seen":true}` || len(res.Trace) != 1 || res.Trace[0].RequestHeaders["authorization"] != "******" || res.FailureKind != "" {
			t.Errorf("dry_run saved adapter: %d %s", r.Code, r.Data)
		}
		if strings.Contains(string(r.Data), "dry-secret") {
			t.Errorf("dry_run trace leaks the token: %s", r.Data)
		}
		r = encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "E.op", "script": "http.get('/echo'); throw new Error('late')"})
		json.Unmarshal(r.Data, &res)
		if r.Code != 0 || string(res.Output) != "null" || res.FailureKind != "script" || !strings.Contains(res.Error, "late") || len(res.Trace) != 1 {
			t.Errorf("dry_run failing script: %s", r.Data)
		}
		// Hostile scripts stop within run_timeout with their kind, and the server keeps serving.
		for _, h := range []struct{ script, kind, msg string }{
			{"for(;;){}", "timeout", "timed out"},
			{"function f(n) { return f(n + 1) + 1 } return f(0)", "script", "call depth"},
			{"return 'x'.repeat(1 << 30).length", "script", "memory limit"},
			{"return new Promise(() => {})", "timeout", "timed out"},
		} {
			start := time.Now()
			r = encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "E.op", "script": h.script})
			res = integration.DryRunResult{}
			json.Unmarshal(r.Data, &res)
			if res.FailureKind != h.kind || !strings.Contains(res.Error, h.msg) || time.Since(start) > 2*time.Second {
				t.Errorf("hostile %q: %s after %v", h.script, r.Data, time.Since(start))
			}
		}
		if r = encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "E.op"}); !strings.Contains(string(r.Data), `"output":{"seen":true}`) {
			t.Errorf("after the hostile scripts: %s", r.Data)
		}
		r = encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "nope"})
		if r.Code != integration.ErrCodeContractNotFound {
			t.Errorf("dry_run unknown contract: %d", r.Code)
		}
		create(t, srv, contractR, map[string]any{"code": "bare", "name": "b"})
		if r = encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "E", "contractCode": "bare"}); r.Code != integration.ErrCodeAdapterNotFound {
			t.Errorf("dry_run without adapter: %d", r.Code)
		}
		if st := srv.Integration().Stats().InvocationStats(); len(st) != 0 {
			t.Errorf("dry runs counted: %+v", st)
		}
		var rows struct{ Total int }
		srv.Call(t, logR, "find_page", map[string]any{}, svctest.As(admin)).DataAs(t, &rows)
		if rows.Total != 0 {
			t.Errorf("dry runs logged: %d", rows.Total)
		}

		sys := create(t, srv, systemR, map[string]any{"code": "IN", "name": "in"})
		c := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p", "inputSchema": map[string]any{"type": "object", "required": []string{"id"}}})
		create(t, srv, adapterR, map[string]any{"systemId": sys, "contractId": c, "direction": "inbound",
			"script": "const b = JSON.parse(request.body); return {$response: {status: 201, body: {got: dispatch(b), m: request.method, h: request.headers['x-h']}}}"})
		params := map[string]any{"systemCode": "IN", "contractCode": "patient.sync",
			"request": map[string]any{"headers": map[string]any{"X-H": "v"}, "body": `{"id":"p1"}`}, "handlerOutput": map[string]any{"stored": true}}
		r = encoded(t, srv, admin, opsR, "dry_run_inbound", params)
		var in integration.InboundDryRunResult
		json.Unmarshal(r.Data, &in)
		if r.Code != 0 || string(in.Reply) != `{"$response":{"status":201,"body":{"got":{"stored":true},"m":"POST","h":"v"}}}` ||
			string(in.DispatchedInput) != `{"id":"p1"}` || in.FailureKind != "" {
			t.Errorf("dry_run_inbound: %d %s", r.Code, r.Data)
		}
		params["request"] = map[string]any{"body": `{"x":1}`}
		r = encoded(t, srv, admin, opsR, "dry_run_inbound", params)
		json.Unmarshal(r.Data, &in)
		if in.FailureKind != "input_invalid" || string(in.Reply) != "null" || string(in.DispatchedInput) != `{"x":1}` {
			t.Errorf("dry_run_inbound invalid input: %s", r.Data)
		}
		if calls.Load() != 0 {
			t.Errorf("the business handler ran %d times in dry runs", calls.Load())
		}
	})
}

// TestOpsTestConnectionAndDiagnose: test_connection probes HTTP and the data source (reachable
// or not, as data); diagnose_routes reports every finding kind.
func TestOpsTestConnectionAndDiagnose(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		ec := newEcho(t)
		target := svctest.DataSource(t, kind)
		create(t, srv, systemR, map[string]any{"code": "UP", "name": "up", "baseUrl": ec.URL, "dataSource": dataSourceParams(target, "")})
		create(t, srv, systemR, map[string]any{"code": "DOWN", "name": "down", "baseUrl": "http://127.0.0.1:1",
			"dataSource": map[string]any{"kind": "postgres", "host": "127.0.0.1", "port": 1, "database": "x", "password": "pw-probe"}})
		r := srv.Call(t, opsR, "test_connection", map[string]any{"systemCode": "UP", "path": "/echo"}, svctest.As(admin))
		var cc integration.ConnectionCheck
		r.DataAs(t, &cc)
		if r.Code != 0 || cc.HTTP == nil || !cc.HTTP.Reachable || cc.HTTP.Status != 200 || cc.Database == nil || !cc.Database.Reachable || cc.Database.Version == "" {
			t.Errorf("test_connection UP: %d %s", r.Code, r.Data)
		}
		r = srv.Call(t, opsR, "test_connection", map[string]any{"systemCode": "DOWN"}, svctest.As(admin))
		cc = integration.ConnectionCheck{}
		r.DataAs(t, &cc)
		if r.Code != 0 || cc.HTTP == nil || cc.HTTP.Reachable || cc.HTTP.Error == "" || cc.Database == nil || cc.Database.Reachable || strings.Contains(string(r.Data), "pw-probe") {
			t.Errorf("test_connection DOWN: %d %s", r.Code, r.Data)
		}

		a := create(t, srv, systemR, map[string]any{"code": "A", "name": "a"})
		off := create(t, srv, systemR, map[string]any{"code": "OFF", "name": "off", "isEnabled": false})
		c1 := create(t, srv, contractR, map[string]any{"code": "c1", "name": "one"})
		create(t, srv, contractR, map[string]any{"code": "c2", "name": "two"})
		c3 := create(t, srv, contractR, map[string]any{"code": "c3", "name": "three", "isEnabled": false})
		create(t, srv, adapterR, map[string]any{"systemId": a, "contractId": c1, "script": "return 1"})
		create(t, srv, routeR, map[string]any{"routeKey": "", "contractId": "", "systemId": a})    // c2: wildcard_gap
		create(t, srv, routeR, map[string]any{"routeKey": "k", "contractId": c1, "systemId": off}) // disabled_system, dangling_adapter
		create(t, srv, routeR, map[string]any{"routeKey": "k", "contractId": c3, "systemId": a})   // disabled_contract, dangling_adapter
		r = srv.Call(t, opsR, "diagnose_routes", nil, svctest.As(admin))
		var d integration.RouteDiagnostics
		r.DataAs(t, &d)
		got := map[string]bool{}
		for _, f := range d.Findings {
			got[f.Kind+":"+f.RouteKey+":"+f.ContractCode+":"+f.SystemCode] = true
		}
		for _, want := range []string{"wildcard_gap::c2:A", "disabled_system:k:c1:OFF", "dangling_adapter:k:c1:OFF",
			"disabled_contract:k:c3:A", "dangling_adapter:k:c3:A", "uncovered_contract:k:c2:"} {
			if !got[want] {
				t.Errorf("finding %s missing: %s", want, r.Data)
			}
		}
		if r := srv.Call(t, opsR, "diagnose_routes", nil, svctest.As(viewer)); r.Code == 0 {
			t.Error("diagnose_routes without integration.ops.diagnose_routes answered")
		}
	})
}

// dataSourceParams is a system's dataSource for a test data source.
func dataSourceParams(ds config.DataSource, mode string) map[string]any {
	return map[string]any{"kind": string(ds.Type), "mode": mode, "host": ds.Host, "port": ds.Port, "user": ds.User,
		"password": ds.Password, "database": ds.Database, "schema": ds.Schema, "path": ds.Path}
}

// TestSQLLibrary: queryList/queryOne in a read-only transaction the database enforces, execute
// only in read_write mode, the row cap, and an undialable data source as transport; on the
// three databases.
func TestSQLLibrary(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		target, d := patientsTarget(t, kind)
		ctx := context.Background()
		define(t, srv, "ro", map[string]any{"dataSource": dataSourceParams(testservice.ReadOnlyLogin(t, target), "")}, nil, "outbound", `
const all = sql.queryList('SELECT id, name FROM patients ORDER BY id');
const one = sql.queryOne('SELECT name FROM patients WHERE id = ?', input.id);
const none = sql.queryOne('SELECT name FROM patients WHERE id = ?', 99);
let write = 'allowed';
try { sql.queryList("DELETE FROM patients WHERE id = 1") } catch (e) { write = 'refused' }
let exec = 'allowed';
try { sql.execute("DELETE FROM patients WHERE id = 1") } catch (e) { exec = 'refused' }
return {n: all.length, first: all[0].name, one: one.name, none, write, exec}`)
		out, err := integration.Call[map[string]any](ctx, srv.Integration(), "ro.op", map[string]any{"id": 2}, integration.WithSystem("ro"))
		if err != nil || out["n"] != float64(2) || out["first"] != "ann" || out["one"] != "bob" || out["none"] != nil || out["write"] != "refused" || out["exec"] != "refused" {
			t.Errorf("read_only: %v %v", out, err)
		}
		var n int
		d.QueryRowContext(ctx, "SELECT COUNT(*) FROM patients").Scan(&n)
		if n != 2 {
			t.Errorf("a read-only script deleted rows: %d left", n)
		}
		define(t, srv, "rw", map[string]any{"dataSource": dataSourceParams(target, "read_write")}, nil, "outbound",
			`return sql.execute('UPDATE patients SET name = ? WHERE id = ?', input.name, 1)`)
		out, err = integration.Call[map[string]any](ctx, srv.Integration(), "rw.op", map[string]any{"name": "amy"}, integration.WithSystem("rw"))
		if err != nil || out["rowsAffected"] != float64(1) {
			t.Errorf("read_write execute: %v %v", out, err)
		}
		define(t, srv, "cap", map[string]any{"dataSource": dataSourceParams(target, "read_write")}, nil, "outbound",
			`return sql.queryList('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001) SELECT i FROM n').length`)
		_, err = srv.Integration().Invoke(ctx, "cap.op", nil, integration.WithSystem("cap"))
		if ie := (*integration.InvocationError)(nil); !errors.As(err, &ie) || ie.Kind != "script" || !strings.Contains(err.Error(), "") {
			t.Errorf("row cap: %v", err)
		}
		define(t, srv, "nodb", map[string]any{"dataSource": map[string]any{"kind": "mysql", "host": "127.0.0.1", "port": 1, "database": "x"}}, nil, "outbound", "return 1")
		_, err = srv.Integration().Invoke(ctx, "nodb.op", nil, integration.WithSystem("nodb"))
		if ie := (*integration.InvocationError)(nil); !errors.As(err, &ie) || ie.Kind != "transport" {
			t.Errorf("undialable data source: %v", err)
		}
	})
}

// sqlAttacks are statements a read_only data source must refuse, per database (the issue's
// SQLite trick among them); {{path}} is the target database file.
var sqlAttacks = map[config.DBKind][]string{
	config.SQLite: {
		`SELECT '\' WHERE 0; DELETE FROM patients; -- '`,
		"ATTACH DATABASE '{{path}}' AS w",
		"PRAGMA query_only = 0",
	},
	config.Postgres: {"SELECT 1; DELETE FROM patients", "WITH d AS (DELETE FROM patients RETURNING id) SELECT * FROM d", "SELECT pg_read_file('/etc/passwd')"},
	config.MySQL:    {"SELECT 1; DELETE FROM patients", "SELECT * FROM patients INTO OUTFILE '/tmp/patients.txt'", "DELETE FROM patients"},
}

// TestSQLLibraryReadOnlyRunner: a read_only data source runs on db.ReadOnly: the attack
// statements are refused or harmless with the rows unchanged, a value over the 4 MiB byte cap is
// a script error, and on PostgreSQL and MySQL a superuser login is refused with the fix named.
func TestSQLLibraryReadOnlyRunner(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		target, d := patientsTarget(t, kind)
		ctx := context.Background()
		attacks, _ := json.Marshal(sqlAttacks[kind])
		huge := map[config.DBKind]string{config.SQLite: "SELECT zeroblob(50000000) AS v", config.Postgres: "SELECT repeat('x', 50000000) AS v",
			config.MySQL: "SELECT repeat('x', 8000000) AS v"}[kind]
		define(t, srv, "hostile", map[string]any{"dataSource": dataSourceParams(testservice.ReadOnlyLogin(t, target), "read_only")}, nil, "outbound", `
const ran = [];
for (const q of `+strings.ReplaceAll(string(attacks), "{{path}}", target.Path)+`) {
  try { sql.queryList(q); ran.push(q) } catch (e) {}
}
let big = 'answered';
try { sql.queryOne(`+"`"+huge+"`"+`) } catch (e) { big = String(e) }
return {ran, big}`)
		out, err := integration.Call[map[string]any](ctx, srv.Integration(), "hostile.op", nil, integration.WithSystem("hostile"))
		if err != nil {
			t.Fatal(err)
		}
		if ran, _ := out["ran"].([]any); len(ran) != 0 {
			t.Errorf("attacks that ran: %v", ran)
		}
		if big, _ := out["big"].(string); !strings.Contains(big, "byte cap") {
			t.Errorf("a value over the byte cap = %q, want the byte-cap error", big)
		}
		var first, last string
		var n int
		if err := d.QueryRowContext(ctx, "SELECT MIN(name), MAX(name), COUNT(*) FROM patients").Scan(&first, &last, &n); err != nil || first != "ann" || last != "bob" || n != 2 {
			t.Errorf("patients after the attacks = %s..%s (%d rows, %v), want ann..bob (2)", first, last, n, err)
		}
		if kind == config.SQLite {
			return
		}
		define(t, srv, "super", map[string]any{"dataSource": dataSourceParams(target, "read_only")}, nil, "outbound",
			`try { return sql.queryOne('SELECT 1 AS one') } catch (e) { return String(e) }`)
		refusal, err := integration.Call[any](ctx, srv.Integration(), "super.op", nil, integration.WithSystem("super"))
		if text, _ := refusal.(string); err != nil || !strings.Contains(text, "only SELECT grants") {
			t.Errorf("read_only as the superuser = %v (%v), want the privileged-login refusal", refusal, err)
		}
	})
}

// patientsTarget is a system's test database of kind holding the patients ann (1) and bob (2),
// and its handle.
func patientsTarget(t *testing.T, kind config.DBKind) (config.DataSource, *db.DB) {
	t.Helper()
	target := svctest.DataSource(t, kind)
	d := openTarget(t, target)
	for _, q := range []string{"CREATE TABLE patients (id INTEGER PRIMARY KEY, name VARCHAR(50))",
		"INSERT INTO patients (id, name) VALUES (1, 'ann'), (2, 'bob')"} {
		if _, err := d.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return target, d
}

// openTarget opens a test data source as a system's database, closed when the test ends.
func openTarget(t *testing.T, ds config.DataSource) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), "target", ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestOpsKeyStatus: key_status through /api lists systems with secrets as sealed with the
// configured key, never a secret's value, and only under integration.ops.key_status.
func TestOpsKeyStatus(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		create(t, srv, systemR, map[string]any{"code": "K", "name": "keyed",
			"outboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "ks-secret-token"}},
			"inboundAuth":  map[string]any{"scheme": "http_basic", "params": map[string]any{"username": "u", "password": "ks-secret-pw"}}})
		create(t, srv, systemR, map[string]any{"code": "N", "name": "no secrets"})
		r := srv.Call(t, opsR, "key_status", nil, svctest.As(admin))
		var st integration.KeyStatus
		r.DataAs(t, &st)
		if r.Code != 0 || !st.Encrypted || st.RotationNeeded || len(st.Systems) != 1 ||
			st.Systems[0] != (integration.SystemKeyStatus{SystemCode: "K", SystemName: "keyed", Sealed: 2}) {
			t.Errorf("key_status: %d %s", r.Code, r.Data)
		}
		if strings.Contains(string(r.Data), "ks-secret") || strings.Contains(string(r.Data), "enc:") {
			t.Errorf("key_status shows a secret: %s", r.Data)
		}
		if r := srv.Call(t, opsR, "key_status", nil, svctest.As(viewer)); r.Code == 0 {
			t.Error("key_status without integration.ops.key_status answered")
		}
	})
}
