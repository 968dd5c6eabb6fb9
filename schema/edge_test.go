package schema_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/svctest"
)

// TestOddTableNames: names with quotes and spaces reach the catalog as parameters and come back
// as stored.
func TestOddTableNames(t *testing.T) {
	t.Parallel()
	ddl := map[config.DBKind]string{
		config.SQLite:   `CREATE TABLE "odd ""name" ("x y" INTEGER NOT NULL PRIMARY KEY)`,
		config.Postgres: `CREATE TABLE "odd ""name" ("x y" integer NOT NULL PRIMARY KEY)`,
		config.MySQL:    "CREATE TABLE `odd \"name` (`x y` int NOT NULL PRIMARY KEY)",
	}
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := newServer(t, kind)
		if _, err := srv.DB().DB.DB.ExecContext(context.Background(), ddl[kind]); err != nil {
			t.Fatal(err)
		}
		resp := srv.Call(t, schema.Resource, "get_table_schema", map[string]any{"name": `odd "name`},
			admin())
		if resp.Code != 0 {
			t.Fatalf("code = %d (%s), want 0", resp.Code, resp.Message)
		}
		var got schema.TableSchema
		resp.DataAs(t, &got)
		if got.Name != `odd "name` || len(got.Columns) != 1 || got.Columns[0].Name != "x y" ||
			got.PrimaryKey == nil || !cmp.Equal(got.PrimaryKey.Columns, []string{"x y"}) {
			t.Errorf("table = %+v", got)
		}
	})
}

// TestSQLiteQuirks: WITHOUT ROWID keys are never null, the rowid alias numbers itself without
// AUTOINCREMENT, a REFERENCES without columns points at the parent's primary key, constraint
// names come from the statement text, and names match without regard to case.
func TestSQLiteQuirks(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	for _, stmt := range []string{
		`CREATE TABLE fx_parent (code TEXT PRIMARY KEY, label TEXT) WITHOUT ROWID`,
		`CREATE TABLE "Fx Child" (
			"my id" integer primary key,
			parent TEXT CONSTRAINT child_parent_fk REFERENCES fx_parent ON DELETE SET NULL,
			qty INT CONSTRAINT qty_uq UNIQUE /* a comment, with ) in it */
		)`,
	} {
		if _, err := srv.DB().DB.DB.ExecContext(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		want schema.TableSchema
	}{
		{"fx_parent", schema.TableSchema{
			Name: "fx_parent", Schema: "main",
			Columns: []schema.Column{
				{Name: "code", Type: "TEXT", Nullable: false, IsPrimaryKey: true},
				{Name: "label", Type: "TEXT", Nullable: true},
			},
			PrimaryKey: &schema.PrimaryKey{Columns: []string{"code"}},
		}},
		{"fx child", schema.TableSchema{
			Name: "Fx Child", Schema: "main",
			Columns: []schema.Column{
				{Name: "my id", Type: "INTEGER", IsPrimaryKey: true, IsAutoIncrement: true},
				{Name: "parent", Type: "TEXT", Nullable: true},
				{Name: "qty", Type: "INT", Nullable: true},
			},
			PrimaryKey: &schema.PrimaryKey{Columns: []string{"my id"}},
			UniqueKeys: []schema.UniqueKey{{Name: "qty_uq", Columns: []string{"qty"}}},
			ForeignKeys: []schema.ForeignKey{{Name: "child_parent_fk", Columns: []string{"parent"},
				RefTable: "fx_parent", RefColumns: []string{"code"}, OnUpdate: "NO ACTION", OnDelete: "SET NULL"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := srv.Call(t, schema.Resource, "get_table_schema", map[string]any{"name": tt.name},
				admin())
			if resp.Code != 0 {
				t.Fatalf("code = %d (%s), want 0", resp.Code, resp.Message)
			}
			var got schema.TableSchema
			resp.DataAs(t, &got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("table mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
