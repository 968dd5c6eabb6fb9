package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
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
// holding rows 1..4 (a, b, c, d; row 1 has non-UTF-8 data).
func probeServer(t *testing.T, kind config.DBKind) *svctest.Server {
	t.Helper()
	srv := newServer(t, kind, svctest.WithConfig(func(c *config.Config) {
		c.MCP.Query.Timeout = time.Second
		c.MCP.Query.MaxRows = 3
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
	return srv
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

// TestDatabaseQuery: database_query through the SDK client on every database: parameters,
// bytes, the row cap, the statement timeout, and every write attempt refused with the data
// unchanged afterwards.
func TestDatabaseQuery(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := probeServer(t, kind)
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
		if !isErr || !strings.HasPrefix(text, "Query execution failed: ") {
			t.Errorf("endless query = %q (error %t), want stopped by the statement timeout", text, isErr)
		}
		for _, bad := range attacks {
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
			{map[string]any{"sql": "DELETE FROM mcp_probe"}, "Only read-only (SELECT) queries are permitted: "},
			{map[string]any{"sql": "SELECT nope FROM mcp_probe"}, "Query execution failed: "},
		} {
			if text, isErr := call(t, cs, mcp.QueryTool, tt.args); !isErr || !strings.HasPrefix(text, tt.want) {
				t.Errorf("database_query %v = %q (error %t), want a tool error starting %q", tt.args, text, isErr, tt.want)
			}
		}
		probeUnchanged(t, srv, kind)
	})
}

// attacks are write attempts the tool must refuse (the guard answers most of them first).
var attacks = []string{
	"INSERT INTO mcp_probe (id, name) VALUES (9, 'x')",
	"UPDATE mcp_probe SET name = 'x'",
	"DELETE FROM mcp_probe",
	"DROP TABLE mcp_probe",
	"CREATE TABLE mcp_evil (id INT)",
	"TRUNCATE TABLE mcp_probe",
	"WITH d AS (DELETE FROM mcp_probe RETURNING id) SELECT * FROM d",
	"SELECT * FROM mcp_probe FOR UPDATE",
	"SELECT * FROM mcp_probe LOCK IN SHARE MODE",
	"SELECT 1; DELETE FROM mcp_probe",
	"SELECT 1;\nDELETE FROM mcp_probe;",
	"SELECT pg_sleep(3)",
	"SELECT SLEEP(3)",
	"SELECT nextval('mcp_seq')",
	"SELECT set_config('search_path', 'x', false)",
	"SELECT pg_advisory_lock(1)",
	"SELECT GET_LOCK('x', 0)",
	"SELECT * INTO mcp_copy FROM mcp_probe",
	"SELECT * FROM mcp_probe INTO OUTFILE '/tmp/x'",
	"SELECT /*!50000 1; DELETE FROM mcp_probe */",
	"SELECT @x := 1",
	"PRAGMA query_only = OFF",
	"ATTACH DATABASE '/tmp/evil.db' AS evil",
	"SELECT query_to_xml('DELETE FROM mcp_probe', true, true, '')",
	"/* comment */ DELETE FROM mcp_probe",
	"SELECT 'it''s' AS s; DELETE FROM mcp_probe",
}

// dbAttacks are writes run past the guard: the database itself must refuse them.
var dbAttacks = map[config.DBKind][]string{
	config.Postgres: {
		"WITH d AS (DELETE FROM mcp_probe RETURNING id) SELECT * FROM d",
		"SELECT * FROM mcp_probe FOR UPDATE",
		"SELECT nextval('mcp_seq')",
		"SELECT pg_sleep(3)",
	},
	// LOCK IN SHARE MODE is allowed in a read-only transaction: the guard refuses it, and its
	// locks end with the rollback.
	config.MySQL:  {"SELECT 1; DELETE FROM mcp_probe", "SELECT * FROM mcp_probe FOR UPDATE"},
	config.SQLite: {"SELECT 1; DELETE FROM mcp_probe", "PRAGMA query_only = OFF; DELETE FROM mcp_probe"},
}

// TestReadOnlyByDatabase: past the text guard, writes, DDL, writable CTEs, locking reads,
// nextval and statements past the timeout fail in the database itself; the data is unchanged
// and the pooled connections still write afterwards (the session state was restored).
func TestReadOnlyByDatabase(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := probeServer(t, kind)
		ctx := context.Background()
		common := []string{
			"INSERT INTO mcp_probe (id, name) VALUES (9, 'x')",
			"UPDATE mcp_probe SET name = 'x'",
			"DELETE FROM mcp_probe",
			"CREATE TABLE mcp_evil (id INT)",
			"DROP TABLE mcp_probe",
			endless[kind],
		}
		for _, stmt := range append(common, dbAttacks[kind]...) {
			if rows, _, err := srv.MCP().RunReadOnly(ctx, stmt); err == nil {
				t.Errorf("%q ran in the read-only executor: %v", stmt, rows)
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

// TestGuard: statements the guard lets through and refuses, including words hidden in strings,
// identifiers and comments.
func TestGuard(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"SELECT 1", "select * from t;", "(SELECT 1) UNION (SELECT 2)", "WITH a AS (SELECT 1) SELECT * FROM a",
		"SELECT 'delete from t; drop table t' AS s", `SELECT "update" FROM t`, "SELECT `insert` FROM t",
		"SELECT 1 -- ; DELETE FROM t\n", "SELECT /* ; drop */ 1", "SELECT $$ ; delete $$", "SELECT start, comment, replace(a, 'x', 'y') FROM t",
		"SELECT truncate(1.5, 0)",
	} {
		if err := mcp.GuardReadOnly(ok); err != nil {
			t.Errorf("guard refused %q: %v", ok, err)
		}
	}
	for _, bad := range append([]string{
		"", ";", "EXPLAIN ANALYZE DELETE FROM t", "SELECT 'unterminated", "SELECT 1 /* open",
		"SELECT * FROM t FOR SHARE", "SELECT * FROM t FOR NO KEY UPDATE", "SELECT lo_import('/etc/passwd')",
		"SELECT public.pg_sleep(1)", "SELECT dblink_exec('x', 'y')", "VALUES (1)", "SHOW TABLES",
	}, attacks...) {
		if err := mcp.GuardReadOnly(bad); err == nil {
			t.Errorf("guard let %q through", bad)
		}
	}
}
