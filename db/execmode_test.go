package db_test

import (
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestPostgresExecMode: queries leave no prepared statement on the session (pgx's exec mode, one
// round trip each), and an exec without arguments may carry several statements (the simple
// protocol a joined flush relies on).
func TestPostgresExecMode(t *testing.T) {
	d := svctest.NewDB(t, config.Postgres)
	ctx := t.Context()
	conn, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var n int
	if err := conn.NewSelect().ColumnExpr("? + 1", 41).Scan(ctx, &n); err != nil || n != 42 {
		t.Fatalf("select = %d, %v; want 42", n, err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE x (n int); INSERT INTO x VALUES (1); INSERT INTO x VALUES (2)"); err != nil {
		t.Fatalf("joined exec: %v", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM x").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows of the joined exec = %d, %v; want 2", n, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&n); err != nil || n != 0 {
		t.Errorf("prepared statements = %d, %v; want 0", n, err)
	}
}
