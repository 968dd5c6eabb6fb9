package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCreateTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sql  string
		want tableDDL
	}{
		{
			name: "table constraints",
			sql: `CREATE TABLE t (a INT, b INT, c TEXT,
				CONSTRAINT t_pk PRIMARY KEY (a, b),
				CONSTRAINT t_uq UNIQUE (b COLLATE NOCASE DESC, c),
				CONSTRAINT t_fk FOREIGN KEY (a) REFERENCES "Parent Table" (id) ON DELETE CASCADE,
				CHECK (a > 0 AND (b < 10)))`,
			want: tableDDL{
				pkName:      "t_pk",
				uniques:     []namedKey{{name: "t_uq", columns: []string{"b", "c"}}},
				foreignKeys: []namedKey{{name: "t_fk", columns: []string{"a"}, refTable: "Parent Table"}},
				checks:      []Check{{Name: "", Expr: "(a > 0 AND (b < 10))"}},
			},
		},
		{
			name: "column constraints, quoting and comments",
			sql: "CREATE TABLE [t] (\n" +
				"  \"my id\" INTEGER CONSTRAINT my_pk PRIMARY KEY, -- the key, (with a comma\n" +
				"  `note` VARCHAR(10) DEFAULT ('x,(y') CONSTRAINT note_chk CHECK (note <> 'a,b)'),\n" +
				"  ref INT CONSTRAINT ref_fk REFERENCES p /* no columns, ) */ ON UPDATE SET NULL,\n" +
				"  qty INT UNIQUE CHECK (qty >= 0)\n" +
				") WITHOUT ROWID",
			want: tableDDL{
				pkName:      "my_pk",
				uniques:     []namedKey{{name: "", columns: []string{"qty"}}},
				foreignKeys: []namedKey{{name: "ref_fk", columns: []string{"ref"}, refTable: "p"}},
				checks: []Check{
					{Name: "note_chk", Expr: "(note <> 'a,b)')"},
					{Name: "", Expr: "(qty >= 0)"},
				},
				withoutRowID: true,
			},
		},
		{
			name: "doubled quotes inside identifiers",
			sql:  `CREATE TABLE t ("a""b" INT CONSTRAINT "c""k" CHECK ("a""b" > 1))`,
			want: tableDDL{checks: []Check{{Name: `c"k`, Expr: `("a""b" > 1)`}}},
		},
		{
			name: "not a table definition",
			sql:  "CREATE TABLE t AS SELECT 1",
			want: tableDDL{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseCreateTable(tt.sql)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(tableDDL{}, namedKey{})); diff != "" {
				t.Errorf("parseCreateTable mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIndexPredicate(t *testing.T) {
	t.Parallel()
	tests := []struct{ sql, want string }{
		{"CREATE UNIQUE INDEX i ON t (a) WHERE deleted_at IS NULL", "deleted_at IS NULL"},
		{"CREATE INDEX i ON t (a, (b + 1)) WHERE a > 0 AND \"where\" = 'WHERE'", "a > 0 AND \"where\" = 'WHERE'"},
		{"CREATE INDEX \"where\" ON \"where\" (\"where\")", ""},
		{"CREATE INDEX i ON t (a) -- WHERE a > 0", ""},
	}
	for _, tt := range tests {
		if got := indexPredicate(tt.sql); got != tt.want {
			t.Errorf("indexPredicate(%q) = %q, want %q", tt.sql, got, tt.want)
		}
	}
}

func TestViewQuery(t *testing.T) {
	t.Parallel()
	tests := []struct{ sql, want string }{
		{"CREATE VIEW v AS SELECT a FROM t", "SELECT a FROM t"},
		{"CREATE VIEW IF NOT EXISTS \"as\" (x, y) AS\n  SELECT 1 AS x, 2 AS y;", "SELECT 1 AS x, 2 AS y"},
		{"CREATE TEMP VIEW [v] as select (1) as a", "select (1) as a"},
	}
	for _, tt := range tests {
		if got := viewQuery(tt.sql); got != tt.want {
			t.Errorf("viewQuery(%q) = %q, want %q", tt.sql, got, tt.want)
		}
	}
}
