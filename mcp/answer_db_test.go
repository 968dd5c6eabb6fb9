package mcp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/svctest"
)

// thousandRows is a statement prefix per dialect that yields the rows i = 1…1000.
const thousandRows = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000) "

// quoteIdent quotes a column alias on kind (MySQL without ANSI_QUOTES reads "…" as a string).
func quoteIdent(kind config.DBKind, name string) string {
	if kind == config.MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// longestAlias is the longest alias each database keeps whole: SQLite any (the 100 KB
// and 300 KB forms), PostgreSQL 63 bytes (NAMEDATALEN; longer ones are cut), MySQL and MariaDB
// 256 characters (longer ones are refused).
var longestAlias = map[config.DBKind]int{config.SQLite: 1 << 30, config.Postgres: 63, config.MySQL: 256}

// controlChars is a statement per dialect answering one value of 1 000 000 control characters
// (U+0001), which JSON writes six bytes each: 1 MB of values, 6 MB of answer.
var controlChars = map[config.DBKind]string{
	config.SQLite:   "SELECT replace(hex(zeroblob(1000000)), '00', char(1)) AS v",
	config.Postgres: "SELECT repeat(chr(1), 1000000) AS v",
	config.MySQL:    "SELECT REPEAT(CHAR(1), 1000000) AS v",
}

// hostileForms are the queries whose answer is far larger than their values: a 100 KB and
// a 300 KB alias repeated in each of 1000 rows, 1500 NULL columns with 63-character names in
// each of 1000 rows, and control characters. wantCap says whether the encoded answer passes the
// 4 MiB cap on that database: on PostgreSQL and MySQL the alias is as long as the database
// keeps one (63 bytes, 256 characters), and 1000 rows of it fit.
func hostileForms(kind config.DBKind) []struct {
	name, sql string
	wantCap   bool
} {
	cols := make([]string, 1500)
	for i := range cols {
		cols[i] = "NULL AS " + quoteIdent(kind, fmt.Sprintf("%059d%04d", 0, i))
	}
	return []struct {
		name, sql string
		wantCap   bool
	}{
		{"100 KB alias", thousandRows + "SELECT i AS " + quoteIdent(kind, strings.Repeat("a", min(100_000, longestAlias[kind]))) + " FROM c", kind == config.SQLite},
		{"300 KB alias", thousandRows + "SELECT i AS " + quoteIdent(kind, strings.Repeat("b", min(300_000, longestAlias[kind]))) + " FROM c", kind == config.SQLite},
		{"1500 NULL columns", thousandRows + "SELECT " + strings.Join(cols, ", ") + " FROM c", true},
		{"control characters", controlChars[kind], true},
	}
}

// hostileServer boots a server on kind whose database_query has the default limits (1000 rows,
// 4 MiB, 10 s) but takes statements up to 1 MiB, so that the 100 KB and 112 KB
// statements reach the database and the answer's cap is what stops them.
func hostileServer(t *testing.T, kind config.DBKind) (*svctest.Server, config.MCPQuery) {
	t.Helper()
	var q *config.MCPQuery
	srv := newServer(t, kind, svctest.WithConfig(func(c *config.Config) {
		c.MCP.Query.MaxSQLBytes = config.MiB
		c.DataSources["mcp_query"] = testservice.ReadOnlyLogin(t, c.DataSources[config.PrimaryDataSource])
		c.MCP.Query.DataSource = "mcp_query"
		q = &c.MCP.Query
	}))
	return srv, *q
}

// TestDatabaseQueryHostileAnswers (issue #42): each of the forms, on every database,
// answers the byte-cap tool error (or, where the database cuts the alias, the whole answer within
// the cap) before the call's deadline (timeout + 3 s), and the call allocates a bounded amount of
// Go heap whatever the answer would have weighed (100 MB to 300 MB encoded). Not parallel, so
// the allocation count is this call's.
func TestDatabaseQueryHostileAnswers(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv, q := hostileServer(t, kind)
		cs := session(t, srv, svctest.User("ada", "querier"))
		deadline := q.Timeout + 3*time.Second
		for _, form := range hostileForms(kind) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": form.sql})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			tooLarge := isErr && strings.HasPrefix(text, "The result exceeds 4194304 bytes (svc.mcp.query.max_bytes)")
			switch {
			case form.wantCap && !tooLarge:
				t.Errorf("%s: %.200q (error %t), want the byte-cap tool error", form.name, text, isErr)
			case !form.wantCap && (isErr || len(text) > int(q.MaxBytes) || !strings.HasPrefix(text, "[{")):
				t.Errorf("%s: %.200q (error %t, %d bytes), want the whole answer within the cap", form.name, text, isErr, len(text))
			}
			if took > deadline {
				t.Errorf("%s: answered after %s, want within the call's deadline %s", form.name, took, deadline)
			}
			// The answer buffer (at most 4 MiB, grown by doubling: 8 MiB allocated) and one row in
			// flight; the 100–300 MB the answer would weigh are never built.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
				t.Errorf("%s: the call allocated %d MiB, want at most 48", form.name, alloc>>20)
			}
			t.Logf("%s: %s, %d MiB allocated", form.name, took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
		}
	})
}

// TestDatabaseQuerySQLTooLarge: with the default svc.mcp.query.max_sql_bytes (64 KiB) the issue's
// 100 KB statement is refused before it reaches the database, on every database.
func TestDatabaseQuerySQLTooLarge(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		cs := session(t, srv, svctest.User("ada", "querier"))
		sql := thousandRows + "SELECT i AS " + quoteIdent(kind, strings.Repeat("a", 100_000)) + " FROM c"
		text, isErr := call(t, cs, mcp.QueryTool, map[string]any{"sql": sql})
		if want := "more than 65536 (svc.mcp.query.max_sql_bytes)"; !isErr || !strings.Contains(text, want) {
			t.Errorf("a %d-byte statement = %.200q (error %t), want the tool error containing %q", len(sql), text, isErr, want)
		}
	})
}

// deadlineRecorder records the write deadline the handler sets on the response (through
// http.ResponseController, which finds this method).
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadline = t
	return nil
}

// TestDatabaseQueryWriteDeadline: the call's deadline (timeout + 3 s from the call's start) is the
// write deadline of the response that carries the answer, on the fast path and through the SDK,
// so a client that reads slowly cannot hold the call past it.
func TestDatabaseQueryWriteDeadline(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	token := srv.Token(t, svctest.User("ada", "querier"))
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"database_query","arguments":{"sql":"SELECT 1 AS one"}}}`
	for _, fast := range []bool{true, false} {
		srv.MCP().SetFastPath(fast)
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
		before := time.Now().Add(config.Default().MCP.Query.Timeout + 3*time.Second)
		srv.Handler().ServeHTTP(rec, req)
		after := time.Now().Add(config.Default().MCP.Query.Timeout + 3*time.Second)
		if !strings.Contains(rec.Body.String(), `[{\"one\":1}]`) {
			t.Errorf("fast path %t: answer %q, want the row", fast, rec.Body.String())
		}
		if rec.deadline.Before(before) || rec.deadline.After(after) {
			t.Errorf("fast path %t: write deadline %s, want between %s and %s", fast, rec.deadline, before, after)
		}
	}
}
