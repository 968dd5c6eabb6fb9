package schema_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
)

// loadFixture creates the tables and the view of testdata/fixture_<kind>.sql in d: composite
// keys, a partial unique index (an expression index where the dialect has one), foreign keys
// with ON DELETE CASCADE, check constraints, comments (PostgreSQL, MySQL) and a view.
func loadFixture(t testing.TB, d *db.DB) {
	t.Helper()
	b, err := os.ReadFile("testdata/fixture_" + string(d.Kind) + ".sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(string(b), ";\n") {
		if strings.TrimSpace(stripComments(stmt)) == "" {
			continue
		}
		if _, err := d.DB.DB.ExecContext(context.Background(), stmt); err != nil {
			t.Fatalf("fixture: %v\n%s", err, stmt)
		}
	}
}

// stripComments drops the "--" comment lines of a fixture statement.
func stripComments(stmt string) string {
	var keep []string
	for _, line := range strings.Split(stmt, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// schemaName is what the inspector reports as "schema" for d: the PostgreSQL schema, the MySQL
// database or SQLite's "main".
func schemaName(t testing.TB, d *db.DB) string {
	t.Helper()
	switch d.Kind {
	case config.Postgres:
		return d.Schema
	case config.MySQL:
		var name string
		if err := d.DB.DB.QueryRowContext(context.Background(), "SELECT DATABASE()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	default:
		return "main"
	}
}

// golden returns the expected answers of testdata/want_<kind>.json, keyed by action or table
// name, with $SCHEMA replaced by the inspected schema's name.
func golden(t testing.TB, d *db.DB) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/want_" + string(d.Kind) + ".json")
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("$SCHEMA"), []byte(schemaName(t, d)))
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// fixtureOnly keeps the entries of a list_tables or list_views answer that belong to the
// fixture (named fx_*): the server's own modules add tables of their own.
func fixtureOnly(list any) any {
	items, ok := list.([]any)
	if !ok {
		return list
	}
	out := []any{}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && strings.HasPrefix(m["name"].(string), "fx_") {
			out = append(out, it)
		}
	}
	return out
}
