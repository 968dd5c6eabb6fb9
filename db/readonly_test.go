package db_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// roTimeout is the statement timeout of the runners under test: short, so sleeps and endless
// queries end quickly, long enough for a loaded machine to answer the ordinary queries.
const roTimeout = 2 * time.Second

// roSeed creates the probe table (and a sequence on PostgreSQL) and its rows.
var roSeed = map[config.DBKind][]string{
	config.SQLite: {"CREATE TABLE ro_probe (id INTEGER PRIMARY KEY, name VARCHAR(20), data BLOB)",
		"CREATE INDEX ro_probe_name ON ro_probe (name)",
		"CREATE TABLE sys_user (id INTEGER PRIMARY KEY, role VARCHAR(20))"},
	config.Postgres: {"CREATE TABLE ro_probe (id INT PRIMARY KEY, name VARCHAR(20), data BYTEA)",
		"CREATE TABLE sys_user (id INT PRIMARY KEY, role VARCHAR(20))", "CREATE SEQUENCE ro_seq"},
	config.MySQL: {"CREATE TABLE ro_probe (id INT PRIMARY KEY, name VARCHAR(20), data VARBINARY(16))",
		"CREATE TABLE sys_user (id INT PRIMARY KEY, role VARCHAR(20))"},
}

// roFixture is a seeded database, its admin handle and a read-only runner on a least-privileged
// login of it.
type roFixture struct {
	kind  config.DBKind
	ds    config.DataSource // the admin's
	admin *db.DB
	ro    *db.ReadOnly
	evil  string // a directory the hostile statements try to write into
}

func newROFixture(t *testing.T, kind config.DBKind, lim db.ReadOnlyLimits) *roFixture {
	t.Helper()
	ds := testservice.DataSource(t, kind)
	f := &roFixture{kind: kind, ds: ds, admin: testservice.OpenDB(t, ds), evil: t.TempDir()}
	ctx := context.Background()
	for _, stmt := range append(roSeed[kind], "INSERT INTO ro_probe (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"INSERT INTO sys_user (id, role) VALUES (1, 'admin'), (2, 'user')") {
		if _, err := f.admin.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	ro, err := db.OpenReadOnly(ctx, "ro", testservice.ReadOnlyLogin(t, ds), lim)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	f.ro = ro
	return f
}

// hostile is one statement of the attack table: refused (wantErr, nil meaning any error), or
// harmless (it may run; the checksum says whether it changed anything).
type hostile struct {
	sql      string
	wantErr  error
	harmless bool
}

// hostileCommon are attacks that every dialect must refuse.
var hostileCommon = []hostile{
	{sql: "INSERT INTO ro_probe (id, name) VALUES (9, 'x')"},
	{sql: "UPDATE sys_user SET role = 'admin'"},
	{sql: "DELETE FROM ro_probe"},
	{sql: "CREATE TABLE ro_evil (id INT)"},
	{sql: "DROP TABLE ro_probe"},
	{sql: "SELECT 1; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
	{sql: "SELECT 1;\nUPDATE sys_user SET role = 'admin';", wantErr: db.ErrMultipleStatements},
	{sql: "SELECT 1 /* ; */; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
	{sql: "SELECT 1 -- ;\n; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
	{sql: "SELECT 'it''s'; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
	{sql: "/* DELETE */ DELETE FROM ro_probe"},
	{sql: "SELECT * FROM ro_probe; -- trailing comment is fine", harmless: true},
	{sql: "  "},
	{sql: "-- nothing but a comment"},
}

// hostileByKind are each dialect's own tricks. {{path}} is the primary database file, {{evil}} a
// directory the statement tries to write into.
var hostileByKind = map[config.DBKind][]hostile{
	config.SQLite: {
		// issue #31: one literal to a guard that reads \ as an escape, three statements to SQLite.
		{sql: `SELECT '\' WHERE 0; UPDATE sys_user SET role = 'admin'; -- '`, wantErr: db.ErrMultipleStatements},
		{sql: `SELECT "\"; DELETE FROM ro_probe; --"`, wantErr: db.ErrMultipleStatements},
		{sql: "ATTACH DATABASE '{{path}}' AS w", wantErr: db.ErrNotReadOnly},
		{sql: "ATTACH (SELECT file FROM pragma_database_list WHERE name = 'main') AS w", wantErr: db.ErrNotReadOnly},
		{sql: "ATTACH DATABASE '{{evil}}/new.db' AS w"},
		{sql: "SELECT 1; ATTACH DATABASE '{{path}}' AS w", wantErr: db.ErrMultipleStatements},
		{sql: "DETACH DATABASE main"},
		{sql: "PRAGMA query_only = 0", wantErr: db.ErrNotReadOnly},
		{sql: "PRAGMA writable_schema = 1", wantErr: db.ErrNotReadOnly},
		{sql: "PRAGMA journal_mode = DELETE", wantErr: db.ErrNotReadOnly},
		{sql: "PRAGMA user_version = 7", wantErr: db.ErrNotReadOnly},
		{sql: "VACUUM INTO '{{evil}}/copy.db'", wantErr: db.ErrNotReadOnly},
		{sql: "VACUUM", wantErr: db.ErrNotReadOnly},
		{sql: "WITH c AS (SELECT 1) DELETE FROM ro_probe", wantErr: db.ErrNotReadOnly},
		{sql: "WITH c AS (SELECT 1) INSERT INTO sys_user (id, role) SELECT 3, 'admin' FROM c", wantErr: db.ErrNotReadOnly},
		{sql: "CREATE TEMP TABLE t (x)", wantErr: db.ErrNotReadOnly},
		{sql: "CREATE VIRTUAL TABLE v USING fts5(x)", wantErr: db.ErrNotReadOnly},
		{sql: "INSERT INTO sqlite_dbpage (pgno, data) VALUES (1, zeroblob(4096))"},
		{sql: "SELECT load_extension('{{evil}}/x.so')", wantErr: db.ErrNotReadOnly},
		{sql: "SELECT fts3_tokenizer('simple')"},
		{sql: "SELECT writefile('{{evil}}/x', 'y')"},
		{sql: "BEGIN IMMEDIATE", wantErr: db.ErrNotReadOnly},
		{sql: "SAVEPOINT s", wantErr: db.ErrNotReadOnly},
		{sql: "ANALYZE", wantErr: db.ErrNotReadOnly},
		{sql: "REINDEX", wantErr: db.ErrNotReadOnly},
		{sql: "REINDEX ro_probe_name", wantErr: db.ErrNotReadOnly},
		{sql: "SELECT * FROM ro_probe FOR UPDATE"},
		{sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", wantErr: db.ErrQueryTimeout},
		{sql: "SELECT randomblob(1000000000)", wantErr: db.ErrResultTooLarge},
		{sql: "SELECT file FROM pragma_database_list", harmless: true},
	},
	config.Postgres: {
		{sql: `SELECT E'\''; DELETE FROM ro_probe; --'`, wantErr: db.ErrMultipleStatements},
		{sql: `SELECT '\'; DELETE FROM ro_probe; --'`, wantErr: db.ErrMultipleStatements},
		{sql: "SELECT $$;$$; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
		{sql: "SELECT 1 /* /* nested */ ; */; DELETE FROM ro_probe", wantErr: db.ErrMultipleStatements},
		{sql: "WITH d AS (DELETE FROM ro_probe RETURNING id) SELECT * FROM d"},
		{sql: "WITH u AS (UPDATE sys_user SET role = 'admin' RETURNING id) SELECT * FROM u"},
		{sql: "SELECT * FROM ro_probe FOR UPDATE"},
		{sql: "SELECT * FROM ro_probe FOR SHARE"},
		{sql: "COPY ro_probe TO '{{evil}}/copy.csv'"},
		{sql: "COPY (SELECT 1) TO PROGRAM 'touch {{evil}}/pwned'"},
		{sql: "COPY ro_probe FROM '/etc/hostname'"},
		{sql: "SELECT pg_read_file('/etc/passwd')"},
		{sql: "SELECT pg_ls_dir('.')"},
		{sql: "SELECT lo_import('/etc/passwd')"},
		{sql: "SELECT lo_export(1, '{{evil}}/lo')"},
		{sql: "SELECT dblink_exec('dbname=test', 'DELETE FROM ro_probe')"},
		{sql: "SELECT nextval('ro_seq')"},
		{sql: "SELECT set_config('transaction_read_only', 'off', false)"},
		{sql: "SELECT set_config('default_transaction_read_only', 'off', false)", harmless: true},
		{sql: "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", harmless: true},
		{sql: "SET TRANSACTION READ WRITE"},
		{sql: "DO $$ BEGIN SET TRANSACTION READ WRITE; DELETE FROM ro_probe; END $$"},
		{sql: "COMMIT", harmless: true},
		{sql: "DO $$ BEGIN DELETE FROM ro_probe; END $$"},
		{sql: "PREPARE p AS DELETE FROM ro_probe", harmless: true},
		{sql: "EXECUTE p"},
		{sql: "SELECT query_to_xml('DELETE FROM ro_probe', true, true, '')"},
		{sql: "SELECT pg_advisory_lock(42)", harmless: true},
		{sql: "SELECT pg_sleep(60)", wantErr: db.ErrQueryTimeout},
		{sql: "SELECT repeat('x', 100000000)", wantErr: db.ErrResultTooLarge},
	},
	config.MySQL: {
		{sql: `SELECT '\'; DELETE FROM ro_probe; -- '`, harmless: true}, // one literal: \' escapes the quote
		{sql: `SELECT '\\'; DELETE FROM ro_probe; -- '`},
		{sql: "SELECT /*!50000 1; DELETE FROM ro_probe */"},
		{sql: "SELECT 1 # ;\n; DELETE FROM ro_probe"},
		{sql: "SELECT * FROM ro_probe INTO OUTFILE '{{evil}}/out.txt'"},
		{sql: "SELECT * FROM ro_probe INTO DUMPFILE '{{evil}}/dump.bin'"},
		{sql: "LOAD DATA INFILE '/etc/hostname' INTO TABLE ro_probe"},
		{sql: "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE ro_probe"},
		{sql: "SELECT LOAD_FILE('/etc/passwd') AS f", harmless: true},
		{sql: "SELECT * FROM ro_probe FOR UPDATE", harmless: true},
		{sql: "SELECT * FROM ro_probe LOCK IN SHARE MODE", harmless: true},
		{sql: "WITH c AS (SELECT 1) DELETE FROM ro_probe"},
		{sql: "SET SESSION TRANSACTION READ WRITE", harmless: true},
		{sql: "SET @@session.tx_read_only = 0", harmless: true},
		{sql: "SELECT GET_LOCK('ro', 0)", harmless: true},
		{sql: "SELECT @x := 1", harmless: true},
		{sql: "CREATE TEMPORARY TABLE t (x INT)"},
		{sql: "SELECT SLEEP(60)", wantErr: db.ErrQueryTimeout},
		{sql: "SELECT BENCHMARK(1000000000000, MD5('x'))", harmless: true}, // stopped by max_statement_time
	},
}

// TestReadOnlyHostile: every statement of the attack table, run through the real runner on a
// least-privileged login, is refused or harmless, and the database — the contents of every
// table, the list of tables, the PostgreSQL sequence, the SQLite files and the directories
// written at — is unchanged afterwards. The runner still answers reads after the whole table.
func TestReadOnlyHostile(t *testing.T) {
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			f := newROFixture(t, kind, db.ReadOnlyLimits{MaxBytes: 1 << 20, Timeout: roTimeout})
			ctx := context.Background()
			before := f.checksum(t)
			for _, tt := range append(slices.Clone(hostileCommon), hostileByKind[kind]...) {
				q := strings.NewReplacer("{{path}}", f.ds.Path, "{{evil}}", f.evil).Replace(tt.sql)
				rows, err := f.ro.Query(ctx, q, nil, 10)
				switch {
				case tt.harmless:
					t.Logf("%q (harmless): %v %v", q, rows, err)
				case err == nil:
					t.Errorf("%q ran: %v", q, rows)
				case tt.wantErr == db.ErrMultipleStatements && kind == config.MySQL:
					// MariaDB's parser refuses a second statement in a prepared statement
					// with a plain syntax error.
				case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
					t.Errorf("%q: %v, want %v", q, err, tt.wantErr)
				}
			}
			if after := f.checksum(t); after != before {
				t.Errorf("checksum after the attack table:\n%s\nwant\n%s", after, before)
			}
			rows, err := f.ro.Query(ctx, "SELECT name FROM ro_probe WHERE id = ?", []any{2}, 10)
			if err != nil || len(rows.Values) != 1 || fmt.Sprintf("%s", rows.Values[0][0]) != "b" {
				t.Errorf("read after the attacks = %v, %v; want [[b]]", rows, err)
			}
			if _, err := f.ro.Query(ctx, "DELETE FROM ro_probe", nil, 10); err == nil {
				t.Error("a write ran after the attacks (a session was left writable)")
			}
		})
	}
}

// checksum is the state the attacks must not change: every table's rows, the sequence, and for
// SQLite the bytes of the database files and the names of the files next to them and in evil.
func (f *roFixture) checksum(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	tables := map[config.DBKind]string{
		config.SQLite:   "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
		config.Postgres: "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
		config.MySQL:    "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1",
	}[f.kind]
	var names []string
	rows, err := f.admin.QueryContext(ctx, tables)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		res, err := db.ScanRows(must(f.admin.QueryContext(ctx, "SELECT * FROM "+n+" ORDER BY 1")), 1000, 1<<20)
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		fmt.Fprintf(&b, "%s: %v\n", n, res.Values)
	}
	if f.kind == config.Postgres {
		var called bool
		if err := f.admin.QueryRowContext(ctx, "SELECT is_called FROM ro_seq").Scan(&called); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "ro_seq called: %t\n", called)
	}
	for _, dir := range []string{filepath.Dir(f.ds.Path), f.evil} {
		if f.kind != config.SQLite && dir == "." {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			fmt.Fprintf(&b, "file %s", e.Name())
			if strings.HasPrefix(e.Name(), filepath.Base(f.ds.Path)) && !strings.HasSuffix(e.Name(), "-shm") {
				data, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(data)
				fmt.Fprintf(&b, " %s", hex.EncodeToString(sum[:8]))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// hugeValue is a query per dialect whose one value is size bytes, built by the server.
var hugeValue = map[config.DBKind]string{
	config.SQLite:   "SELECT zeroblob(%d) AS v",
	config.Postgres: "SELECT repeat('x', %d) AS v",
	config.MySQL:    "SELECT repeat('x', %d) AS v",
}

// TestReadOnlyByteCap: a value far larger than the byte cap is refused with ErrResultTooLarge
// (the zeroblob(100000000) and its server equivalents), and the Go heap allocated during
// the call stays far below the value's size: it is refused before a buffer for it exists. Not
// parallel, so the allocation count is this call's. On MariaDB the value is just under the
// server's max_allowed_packet, beyond which REPEAT answers NULL.
func TestReadOnlyByteCap(t *testing.T) {
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			f := newROFixture(t, kind, db.ReadOnlyLimits{MaxBytes: 4 << 20, Timeout: 30 * time.Second})
			size := int64(100_000_000)
			if kind == config.MySQL {
				var packet int64
				if err := f.admin.QueryRowContext(context.Background(), "SELECT @@max_allowed_packet").Scan(&packet); err != nil {
					t.Fatal(err)
				}
				size = min(size, packet-1024)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rows, err := f.ro.Query(context.Background(), fmt.Sprintf(hugeValue[kind], size), nil, 10)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, db.ErrResultTooLarge) {
				t.Fatalf("a %d-byte value = %v, %v; want ErrResultTooLarge", size, rows, err)
			}
			if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > size/4 {
				t.Errorf("the refused call allocated %d bytes of Go heap, want far below the value's %d", alloc, size)
			}
			// Under the cap the same value is answered.
			rows, err = f.ro.Query(context.Background(), fmt.Sprintf(hugeValue[kind], 1<<20), nil, 10)
			if err != nil || len(rows.Values) != 1 {
				t.Errorf("a 1 MiB value = %v; want one row", err)
			}
		})
	}
}

// TestReadOnlyCallerGone: a caller that goes away stops its statement: the call returns
// context.Canceled long before the statement timeout, and the runner answers the next call.
func TestReadOnlyCallerGone(t *testing.T) {
	endless := map[config.DBKind]string{
		config.SQLite:   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
		config.Postgres: "SELECT pg_sleep(600)",
		config.MySQL:    "SELECT SLEEP(600)",
	}
	for _, kind := range testservice.DBKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			f := newROFixture(t, kind, db.ReadOnlyLimits{MaxBytes: 1 << 20, Timeout: 10 * time.Minute})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := f.ro.Query(ctx, endless[kind], nil, 10)
				done <- err
			}()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled call = %v, want context.Canceled", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the statement kept running after its caller went away")
			}
			if _, err := f.ro.Query(context.Background(), "SELECT 1 AS one", nil, 10); err != nil {
				t.Errorf("next call: %v", err)
			}
		})
	}
}

// TestReadOnlyRefusesPrivilegedLogin: on PostgreSQL and MySQL the runner refuses to run anything
// with the test servers' superuser logins (postgres, root), which a read-only transaction does
// not stop from reading and writing server files.
func TestReadOnlyRefusesPrivilegedLogin(t *testing.T) {
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			ro, err := db.OpenReadOnly(context.Background(), "admin", testservice.DataSource(t, kind),
				db.ReadOnlyLimits{MaxBytes: 1 << 20, Timeout: roTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			if err := ro.CheckLogin(context.Background()); !errors.Is(err, db.ErrPrivilegedLogin) {
				t.Errorf("CheckLogin = %v, want ErrPrivilegedLogin", err)
			}
			_, err = ro.Query(context.Background(), "SELECT 1 AS one", nil, 10)
			if !errors.Is(err, db.ErrPrivilegedLogin) || !strings.Contains(err.Error(), "SELECT grants") {
				t.Errorf("Query as the superuser = %v, want ErrPrivilegedLogin telling what to do", err)
			}
		})
	}
}
