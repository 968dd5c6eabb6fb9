package schema

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// sqliteInspector reads the main database of a SQLite file through sqlite_master and the
// table-valued pragma functions, filling in from the statement text what the pragmas leave out
// (sqlite_ddl.go). SQLite has no comments.
type sqliteInspector struct {
	db *sql.DB
}

var _ inspector = (*sqliteInspector)(nil)

// sqliteSchema is the schema name SQLite gives the main database.
const sqliteSchema = "main"

// Tables named sqlite_* are SQLite's own (sqlite_sequence, sqlite_stat1).
const (
	liteTables = `SELECT name FROM sqlite_master
WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	liteTable = `SELECT name, coalesce(sql, '') FROM sqlite_master
WHERE type = 'table' AND name = ? COLLATE NOCASE AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`
	liteColumns = `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_xinfo(?)
WHERE hidden <> 1 ORDER BY cid`
	liteIndexes   = `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`
	liteIndexCols = `SELECT coalesce(name, '') FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`
	liteIndexSQL  = `SELECT coalesce(sql, '') FROM sqlite_master WHERE type = 'index' AND name = ?`
	liteFKs       = `SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?)
ORDER BY id, seq`
	litePKCols = `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`
	liteViews  = `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'view' ORDER BY name`
	liteCols   = `SELECT name FROM pragma_table_info(?) ORDER BY cid`
)

func (s *sqliteInspector) tables(ctx context.Context) ([]Table, error) {
	out := []Table{}
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		t := Table{Schema: sqliteSchema}
		err := r.Scan(&t.Name)
		out = append(out, t)
		return err
	}, liteTables)
	return out, err
}

func (s *sqliteInspector) table(ctx context.Context, name string) (*TableSchema, error) {
	t := &TableSchema{Schema: sqliteSchema}
	var ddlText string
	err := s.db.QueryRowContext(ctx, liteTable, name).Scan(&t.Name, &ddlText)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrTableNotFound
	}
	if err != nil {
		return nil, err
	}
	ddl := parseCreateTable(ddlText)
	if err := s.columns(ctx, t, ddl); err != nil {
		return nil, err
	}
	if err := s.indexes(ctx, t, ddl); err != nil {
		return nil, err
	}
	if err := s.foreignKeys(ctx, t, ddl); err != nil {
		return nil, err
	}
	t.Checks = ddl.checks
	return t, nil
}

// columns reads pragma_table_xinfo. A single INTEGER primary key column is the rowid alias
// (outside WITHOUT ROWID tables): it is never null and numbers itself, so it is reported as
// auto-increment with or without the AUTOINCREMENT keyword. Other primary-key columns of rowid
// tables may hold NULL in SQLite unless declared NOT NULL, and are reported as they are.
func (s *sqliteInspector) columns(ctx context.Context, t *TableSchema, ddl tableDDL) error {
	t.Columns = []Column{}
	pkPos := map[string]int{}
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		var (
			c       Column
			notNull bool
			def     sql.NullString
			pk      int
		)
		if err := r.Scan(&c.Name, &c.Type, &notNull, &def, &pk); err != nil {
			return err
		}
		c.Nullable, c.Default, c.IsPrimaryKey = !notNull, def.String, pk > 0
		if pk > 0 {
			pkPos[c.Name] = pk
			c.Nullable = c.Nullable && !ddl.withoutRowID
		}
		t.Columns = append(t.Columns, c)
		return nil
	}, liteColumns, t.Name)
	if err != nil || len(pkPos) == 0 {
		return err
	}
	pk := &PrimaryKey{Name: ddl.pkName, Columns: make([]string, len(pkPos))}
	for i := range t.Columns {
		c := &t.Columns[i]
		if pos, ok := pkPos[c.Name]; ok {
			pk.Columns[pos-1] = c.Name
			if len(pkPos) == 1 && !ddl.withoutRowID && strings.EqualFold(c.Type, "INTEGER") {
				c.Nullable, c.IsAutoIncrement = false, true
			}
		}
	}
	t.PrimaryKey = pk
	return nil
}

// liteIndex is one row of pragma_index_list.
type liteIndex struct {
	name    string
	unique  bool
	origin  string // c: CREATE INDEX, u: UNIQUE constraint, pk: PRIMARY KEY
	partial bool
}

func (s *sqliteInspector) indexes(ctx context.Context, t *TableSchema, ddl tableDDL) error {
	var list []liteIndex
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		var ix liteIndex
		err := r.Scan(&ix.name, &ix.unique, &ix.origin, &ix.partial)
		list = append(list, ix)
		return err
	}, liteIndexes, t.Name)
	if err != nil {
		return err
	}
	for _, ix := range list {
		if ix.origin == "pk" {
			continue
		}
		cols, err := s.names(ctx, liteIndexCols, ix.name)
		if err != nil {
			return err
		}
		if !ix.unique {
			t.Indexes = append(t.Indexes, Index{Name: ix.name, Columns: cols})
			continue
		}
		uk := UniqueKey{Name: ix.name, Columns: cols, HasExpressions: hasEmpty(cols)}
		if ix.origin == "u" {
			if k, ok := matchKey(ddl.uniques, cols, ""); ok && k.name != "" {
				uk.Name = k.name
			}
		}
		if ix.partial {
			var text string
			if err := s.db.QueryRowContext(ctx, liteIndexSQL, ix.name).Scan(&text); err != nil {
				return err
			}
			uk.Predicate = indexPredicate(text)
		}
		t.UniqueKeys = append(t.UniqueKeys, uk)
	}
	return nil
}

// foreignKeys reads pragma_foreign_key_list, which has no constraint names: they come from the
// statement text, matched by columns and referenced table. A reference written without columns
// points at the parent's primary key.
func (s *sqliteInspector) foreignKeys(ctx context.Context, t *TableSchema, ddl tableDDL) error {
	var (
		ids  []int
		fks  = map[int]*ForeignKey{}
		omit = map[int]bool{}
	)
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		var (
			id       int
			col      string
			refCol   sql.NullString
			fk       ForeignKey
			onUpdate string
			onDelete string
		)
		if err := r.Scan(&id, &fk.RefTable, &col, &refCol, &onUpdate, &onDelete); err != nil {
			return err
		}
		if _, ok := fks[id]; !ok {
			fk.OnUpdate, fk.OnDelete = strings.ToUpper(onUpdate), strings.ToUpper(onDelete)
			fks[id] = &fk
			ids = append(ids, id)
		}
		fks[id].Columns = append(fks[id].Columns, col)
		fks[id].RefColumns = append(fks[id].RefColumns, refCol.String)
		omit[id] = omit[id] || !refCol.Valid
		return nil
	}, liteFKs, t.Name)
	if err != nil {
		return err
	}
	for _, id := range ids {
		fk := fks[id]
		if omit[id] {
			if fk.RefColumns, err = s.names(ctx, litePKCols, fk.RefTable); err != nil {
				return err
			}
		}
		if k, ok := matchKey(ddl.foreignKeys, fk.Columns, fk.RefTable); ok {
			fk.Name = k.name
		}
		t.ForeignKeys = append(t.ForeignKeys, *fk)
	}
	return nil
}

// matchKey finds the constraint written with the given columns (and referenced table, when
// refTable is not empty), comparing names as SQLite does: without regard to case.
func matchKey(keys []namedKey, cols []string, refTable string) (namedKey, bool) {
	for _, k := range keys {
		if refTable != "" && !strings.EqualFold(k.refTable, refTable) || len(k.columns) != len(cols) {
			continue
		}
		same := true
		for i := range cols {
			same = same && strings.EqualFold(k.columns[i], cols[i])
		}
		if same {
			return k, true
		}
	}
	return namedKey{}, false
}

// names runs a one-column query with one argument and returns its rows.
func (s *sqliteInspector) names(ctx context.Context, query, arg string) ([]string, error) {
	out := []string{}
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		var n string
		err := r.Scan(&n)
		out = append(out, n)
		return err
	}, query, arg)
	return out, err
}

// views lists the views with their queries. A view whose tables are gone cannot report its
// columns; it is still listed, without them.
func (s *sqliteInspector) views(ctx context.Context) ([]View, error) {
	out := []View{}
	err := queryRows(ctx, s.db, func(r *sql.Rows) error {
		v := View{Schema: sqliteSchema}
		err := r.Scan(&v.Name, &v.Definition)
		out = append(out, v)
		return err
	}, liteViews)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Definition = viewQuery(out[i].Definition)
		if cols, err := s.names(ctx, liteCols, out[i].Name); err == nil && len(cols) > 0 {
			out[i].Columns = cols
		}
	}
	return out, nil
}
