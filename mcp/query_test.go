package mcp_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/svctest"
)

// probeDDL creates the probe table (and a sequence on PostgreSQL) on each dialect.
var probeDDL = map[config.DBKind][]string{
	config.SQLite:   {"CREATE TABLE mcp_probe (id INTEGER PRIMARY KEY, name VARCHAR(20), data BLOB)"},
	config.MySQL:    {"CREATE TABLE mcp_probe (id INT PRIMARY KEY, name VARCHAR(20), data VARBINARY(16))"},
	config.Postgres: {"CREATE TABLE mcp_probe (id INT PRIMARY KEY, name VARCHAR(20), data BYTEA)", "CREATE SEQUENCE mcp_seq"},
}

// endless is a query per dialect that runs until something stops it: an unbounded recursive CTE
// (MySQL caps recursion, so there a cross join of the catalog instead).
var endless = map[config.DBKind]string{
	config.Postgres: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c",
	config.SQLite:   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c",
	config.MySQL: "SELECT count(*) AS n FROM information_schema.columns a, information_schema.columns b, " +
		"information_schema.columns c, information_schema.columns d",
}

// probeServer boots a server on kind with a 1 s query timeout, a 3-row cap and the probe table
// holding rows 1..4 (a, b, c, d; row 1 has non-UTF-8 data). database_query runs on the data
// source "mcp_query": the primary database through a login with only SELECT grants
// (testservice.ReadOnlyLogin; the same file on SQLite). It returns the primary's settings too.
func probeServer(t *testing.T, kind config.DBKind) (*svctest.Server, config.DataSource) {
	t.Helper()
	var primary config.DataSource
	srv := newServer(t, kind, svctest.WithConfig(func(c *config.Config) {
		c.MCP.Query.Timeout = time.Second
		c.MCP.Query.MaxRows = 3
		primary = c.DataSources[config.PrimaryDataSource]
		c.DataSources["mcp_query"] = testservice.ReadOnlyLogin(t, primary)
		c.MCP.Query.DataSource = "mcp_query"
	}))
	ctx := context.Background()
	for _, stmt := range probeDDL[kind] {
		if _, err := srv.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := srv.DB().ExecContext(ctx, "INSERT INTO mcp_probe (id, name, data) VALUES (1, 'a', ?), (2, 'b', NULL), (3, 'c', NULL), (4, 'd', NULL)",
		[]byte{0xff, 0x00}); err != nil {
		t.Fatal(err)
	}
	return srv, primary
}

// probeUnchanged fails unless the probe table still holds a, b, c, d and, on PostgreSQL, the
// sequence was never advanced.
func probeUnchanged(t *testing.T, srv *svctest.Server, kind config.DBKind) {
	t.Helper()
	ctx := context.Background()
	var names string
	rows, err := srv.DB().QueryContext(ctx, "SELECT name FROM mcp_probe ORDER BY id")
	if err != nil {
		t.Fatalf("probe table: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names += n
	}
	if names != "abcd" {
		t.Errorf("probe names = %q, want abcd: a write got through", names)
	}
	if kind == config.Postgres {
		var called bool
		if err := srv.DB().QueryRowContext(ctx, "SELECT is_called FROM mcp_seq").Scan(&called); err != nil || called {
			t.Errorf("mcp_seq is_called = %t (%v), want false: nextval ran", called, err)
		}
	}
}

// TestDatabaseQuery: database_query through the SDK client on every database, on a login with
// only SELECT grants: parameters, bytes, the row cap, the statement timeout, and every write
// attempt refused with the data unchanged afterwards.
func TestDatabaseQuery(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv, primary := probeServer(t, kind)
		cs := session(t, srv, svctest.User("ada", "querier"))

		rows := query(t, cs, "SELECT id, name FROM mcp_probe WHERE id = ? AND name = ?", 2, "b")
		if len(rows) != 1 || fmt.Sprint(rows[0]["id"]) != "2" || rows[0]["name"] != "b" {
			t.Errorf("parameterised query = %v, want [{id:2 name:b}]", rows)
		}
		if rows := query(t, cs, "SELECT data FROM mcp_probe WHERE id = 1"); len(rows) != 1 || rows[0]["data"] != "/wA=" {
			t.Errorf("binary column = %v, want base64 /wA=", rows)
		}
		text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": "SELECT id FROM mcp_probe ORDER BY id"})
		if isErr || !strings.HasPrefix(text, `[{"id":1},{"id":2},{"id":3}]`) || !strings.Contains(text, "max_rows") {
			t.Errorf("4 rows with max_rows 3 = %q, want 3 rows and the truncation note", text)
		}
		text, isErr = call(t, cs, mcp.QueryTool, map[string]any{"sql": endless[kind]})
		if !isErr || !strings.HasPrefix(text, "Query execution failed: ") || !strings.Contains(text, "timed out") {
			t.Errorf("endless query = %q (error %t), want stopped by the statement timeout", text, isErr)
		}
		evil := t.TempDir()
		for _, bad := range attacks[kind] {
			bad = strings.NewReplacer("{{path}}", primary.Path, "{{evil}}", evil).Replace(bad)
			text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": bad})
			if !isErr {
				t.Errorf("%q was not refused: %s", bad, text)
			}
		}
		for _, tt := range []struct {
			args any
			want string
		}{
			{map[string]any{"sql": "  "}, "Sql parameter is required and must not be empty"},
			{map[string]any{"sql": 1}, "Failed to parse arguments: "},
			{map[string]any{"sql": "SELECT 1; DELETE FROM mcp_probe"}, refusal[kind]},
			{map[string]any{"sql": "INSERT INTO mcp_probe (id, name) VALUES (9, 'x')"}, refusal[kind]},
			{map[string]any{"sql": "SELECT zeroblob(100000000)"}, map[config.DBKind]string{config.SQLite: "The result exceeds"}[kind]},
			{map[string]any{"sql": "SELECT nope FROM mcp_probe"}, "Query execution failed: "},
		} {
			want := tt.want
			if want == "" { // a function this database does not have
				want = "Query execution failed: "
			}
			if text, isErr := call(t, cs, mcp.QueryTool, tt.args); !isErr || !strings.HasPrefix(text, want) {
				t.Errorf("database_query %v = %q (error %t), want a tool error starting %q", tt.args, text, isErr, want)
			}
		}
		if entries, _ := os.ReadDir(evil); len(entries) != 0 {
			t.Errorf("files appeared in the directory the attacks wrote to: %v", entries)
		}
		probeUnchanged(t, srv, kind)
	})
}

// notReadOnly starts the tool error of a statement the database refused as not one read.
const notReadOnly = "Only read-only (SELECT) queries are permitted: "

// refusal is how each database refuses a second statement or a write: MariaDB's parser answers a
// plain syntax error for the first, its privilege check "command denied" for the second.
var refusal = map[config.DBKind]string{config.SQLite: notReadOnly, config.Postgres: notReadOnly, config.MySQL: "Query execution failed: "}

// attacks are statements the tool must refuse on each database, the among them. {{path}}
// is the primary database file, {{evil}} a directory the statement tries to write into.
var attacks = map[config.DBKind][]string{
	config.SQLite: append([]string{
		// issue #31: one literal to the old guard, which read \ as an escape; four statements
		// to SQLite: reopen the primary writable, write, copy it out.
		`SELECT '\' WHERE 0; ATTACH DATABASE '{{path}}' AS w; UPDATE w.mcp_probe SET name = 'x'; -- '`,
		`SELECT '\' WHERE 0; VACUUM INTO '{{evil}}/copy.db'; -- '`,
		"ATTACH DATABASE '{{path}}' AS w",
		"ATTACH (SELECT file FROM pragma_database_list WHERE name = 'main') AS w",
		"PRAGMA query_only = OFF",
		"PRAGMA writable_schema = ON",
		"VACUUM INTO '{{evil}}/copy.db'",
		"SELECT load_extension('{{evil}}/x.so')",
	}, commonAttacks...),
	config.Postgres: append([]string{
		"WITH d AS (DELETE FROM mcp_probe RETURNING id) SELECT * FROM d",
		"SELECT * FROM mcp_probe FOR UPDATE",
		"SELECT nextval('mcp_seq')",
		"SELECT pg_sleep(3)",
		"SELECT pg_read_file('/etc/passwd')",
		"COPY mcp_probe TO '{{evil}}/copy.csv'",
		"SELECT lo_import('/etc/passwd')",
		"SELECT query_to_xml('DELETE FROM mcp_probe', true, true, '')",
		`SELECT E'\''; DELETE FROM mcp_probe; --'`,
	}, commonAttacks...),
	config.MySQL: append([]string{
		"SELECT SLEEP(3)",
		"SELECT * FROM mcp_probe INTO OUTFILE '{{evil}}/out.txt'",
		"LOAD DATA INFILE '/etc/hostname' INTO TABLE mcp_probe",
		"SELECT /*!50000 1; DELETE FROM mcp_probe */",
		`SELECT '\\'; DELETE FROM mcp_probe; -- '`,
	}, commonAttacks...),
}

// commonAttacks are refused on every database.
var commonAttacks = []string{
	"INSERT INTO mcp_probe (id, name) VALUES (9, 'x')",
	"UPDATE mcp_probe SET name = 'x'",
	"DELETE FROM mcp_probe",
	"DROP TABLE mcp_probe",
	"CREATE TABLE mcp_evil (id INT)",
	"SELECT 1; DELETE FROM mcp_probe",
	"SELECT 1;\nDELETE FROM mcp_probe;",
	"/* comment */ DELETE FROM mcp_probe",
	"SELECT 'it''s' AS s; DELETE FROM mcp_probe",
}

// TestReadOnlyByDatabase: the tool's runner (what database_query calls) refuses writes, DDL and
// statements past the timeout; the data is unchanged and the application's pool still writes.
func TestReadOnlyByDatabase(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv, _ := probeServer(t, kind)
		ctx := context.Background()
		for _, stmt := range append(commonAttacks, endless[kind]) {
			if rows, err := srv.MCP().RunReadOnly(ctx, stmt); err == nil {
				t.Errorf("%q ran in the read-only runner: %v", stmt, rows)
			}
		}
		probeUnchanged(t, srv, kind)
		for i := range 8 {
			if _, err := srv.DB().ExecContext(ctx, "INSERT INTO mcp_probe (id, name) VALUES (?, 'w')", 100+i); err != nil {
				t.Fatalf("write %d after the read-only queries: %v", i, err)
			}
		}
	})
}

// TestDatabaseQueryByteCap: the SELECT zeroblob(100000000) answers the byte-cap tool
// error, and the server allocates far less than the value's size while refusing it. Not
// parallel, so the allocation count is this call's.
func TestDatabaseQueryByteCap(t *testing.T) {
	srv := newServer(t, config.SQLite)
	cs := session(t, srv, svctest.User("ada", "querier"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": "SELECT zeroblob(100000000)"})
	runtime.ReadMemStats(&after)
	if !isErr || !strings.Contains(text, "svc.mcp.query.max_bytes") || !strings.Contains(text, "4194304") {
		t.Errorf("zeroblob(100000000) = %q (error %t), want the byte-cap tool error", text, isErr)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 25_000_000 {
		t.Errorf("the refused call allocated %d bytes, want far below the value's 100000000", alloc)
	}
	if rows := query(t, cs, "SELECT length(zeroblob(1000000)) AS n"); len(rows) != 1 || rows[0]["n"] != 1e6 {
		t.Errorf("a query under the cap = %v", rows)
	}
}

// TestDatabaseQueryRefusesSuperuser: on PostgreSQL and MySQL, with the default data source (the
// primary, whose test login is the superuser), the tool refuses every call and tells the
// operator to give it a least-privileged login.
func TestDatabaseQueryRefusesSuperuser(t *testing.T) {
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, kind)
			cs := session(t, srv, svctest.User("ada", "querier"))
			text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": "SELECT 1 AS one"})
			if !isErr || !strings.HasPrefix(text, "Query execution failed: ") || !strings.Contains(text, "only SELECT grants") {
				t.Errorf("database_query as the superuser = %q (error %t), want the refusal naming the fix", text, isErr)
			}
		})
	}
}
