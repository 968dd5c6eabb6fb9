package schema

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/svc-framework/svc/db"
)

// inspector reads the catalog of one dialect. Every query binds the table name and the schema
// as driver parameters: a name from the client never becomes SQL text.
type inspector interface {
	// tables lists the base tables of the inspected schema, by name.
	tables(ctx context.Context) ([]Table, error)
	// table describes one base table, or fails with ErrTableNotFound.
	table(ctx context.Context, name string) (*TableSchema, error)
	// views lists the views of the inspected schema, by name.
	views(ctx context.Context) ([]View, error)
}

// newInspector picks the inspector of d's dialect (catalog queries are written once per
// dialect, like migrations; db.Variant selects). It does no I/O.
func newInspector(d *db.DB) (inspector, error) {
	if d == nil || d.DB == nil {
		return nil, fmt.Errorf("schema: no primary database")
	}
	build, err := db.Variant(d, db.Variants[func() inspector]{
		Postgres: func() inspector {
			schema := d.Schema
			if schema == "" {
				schema = "public"
			}
			return &postgresInspector{db: d.DB.DB, schema: schema}
		},
		MySQL:  func() inspector { return &mysqlInspector{db: d.DB.DB} },
		SQLite: func() inspector { return &sqliteInspector{db: d.DB.DB} },
	})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return build(), nil
}

// queryRows runs query with args and calls scan for every row.
func queryRows(ctx context.Context, q *sql.DB, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// keyPart is one row of a multi-row key listing: the part of key Name at its position.
type keyPart struct {
	name   string
	column string
}

// groupParts folds ordered key parts into one column list per key name, keeping the order in
// which names first appear.
func groupParts(parts []keyPart) (names []string, columns map[string][]string) {
	columns = make(map[string][]string)
	for _, p := range parts {
		if _, seen := columns[p.name]; !seen {
			names = append(names, p.name)
		}
		columns[p.name] = append(columns[p.name], p.column)
	}
	return names, columns
}

// markPrimaryKey sets IsPrimaryKey on the columns of pk.
func markPrimaryKey(t *TableSchema) {
	if t.PrimaryKey == nil {
		return
	}
	for i := range t.Columns {
		for _, c := range t.PrimaryKey.Columns {
			if t.Columns[i].Name == c {
				t.Columns[i].IsPrimaryKey = true
			}
		}
	}
}

// hasEmpty reports whether some part of a key is an expression (listed as "").
func hasEmpty(cols []string) bool {
	for _, c := range cols {
		if c == "" {
			return true
		}
	}
	return false
}

// decodeNames decodes a JSON array of names built by the catalog query.
func decodeNames(s string) ([]string, error) {
	var names []string
	if err := json.Unmarshal([]byte(s), &names); err != nil {
		return nil, fmt.Errorf("schema: column list %q: %w", s, err)
	}
	return names, nil
}

// sortByName orders the keys of t by name so that every dialect answers in the same order
// (SQLite reports indexes newest first). Checks keep their order among equal (empty) names.
func sortByName(t *TableSchema) {
	slices.SortStableFunc(t.Indexes, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(t.UniqueKeys, func(a, b UniqueKey) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(t.ForeignKeys, func(a, b ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(t.Checks, func(a, b Check) int { return strings.Compare(a.Name, b.Name) })
}

// appendForeignKeyPart adds one column pair of a foreign key listed one row per pair in
// constraint order: to the last key when it has the same name, else as a new key.
func appendForeignKeyPart(t *TableSchema, fk ForeignKey, col, refCol string) {
	if n := len(t.ForeignKeys); n > 0 && t.ForeignKeys[n-1].Name == fk.Name {
		last := &t.ForeignKeys[n-1]
		last.Columns = append(last.Columns, col)
		last.RefColumns = append(last.RefColumns, refCol)
		return
	}
	fk.Columns, fk.RefColumns = []string{col}, []string{refCol}
	t.ForeignKeys = append(t.ForeignKeys, fk)
}
