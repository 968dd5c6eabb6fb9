package schema

import (
	"context"
	"database/sql"
	"github.com/svc-framework/svc/db"
	"strings"
	"sync"
)

// mysqlInspector reads information_schema for the connection's database (DATABASE()), on MySQL
// and MariaDB. The two differ in how they report column defaults and check constraints, so the
// server flavour is read once, on first use.
type mysqlInspector struct {
	db *sql.DB

	mu      sync.Mutex
	flavour string // "", flavourMariaDB or flavourMySQL (the server, not the data source type)
}

var _ inspector = (*mysqlInspector)(nil)

const (
	flavourMariaDB = "MariaDB"
	flavourMySQL   = "MySQL"
)

// MariaDB reports system-versioned base tables with a table type of their own.
const myTables = `
SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')
ORDER BY TABLE_NAME`

const myTable = `
SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`

const myColumns = `
SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, IS_NULLABLE = 'YES', COLUMN_DEFAULT, COLUMN_COMMENT, EXTRA
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

// myIndexes: a functional key part (MySQL 8) has no COLUMN_NAME and comes out as "".
const myIndexes = `
SELECT INDEX_NAME, NON_UNIQUE = 0, coalesce(COLUMN_NAME, '')
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
ORDER BY INDEX_NAME, SEQ_IN_INDEX`

const myForeignKeys = `
SELECT k.CONSTRAINT_NAME, k.REFERENCED_TABLE_NAME, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME,
       r.UPDATE_RULE, r.DELETE_RULE
FROM information_schema.KEY_COLUMN_USAGE k
JOIN information_schema.REFERENTIAL_CONSTRAINTS r
  ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
 AND r.TABLE_NAME = k.TABLE_NAME
WHERE k.TABLE_SCHEMA = DATABASE() AND k.TABLE_NAME = ? AND k.REFERENCED_TABLE_NAME IS NOT NULL
ORDER BY k.CONSTRAINT_NAME, k.ORDINAL_POSITION`

// MariaDB names check constraints per table and lists the table in CHECK_CONSTRAINTS; MySQL 8
// names them per schema and lists the table only in TABLE_CONSTRAINTS.
const (
	myChecksMariaDB = `
SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = ?
ORDER BY CONSTRAINT_NAME`
	myChecksMySQL = `
SELECT cc.CONSTRAINT_NAME, cc.CHECK_CLAUSE
FROM information_schema.TABLE_CONSTRAINTS tc
JOIN information_schema.CHECK_CONSTRAINTS cc
  ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
WHERE tc.TABLE_SCHEMA = DATABASE() AND tc.TABLE_NAME = ? AND tc.CONSTRAINT_TYPE = 'CHECK'
ORDER BY cc.CONSTRAINT_NAME`
)

// Servers without check constraints in information_schema: MySQL before 8.0.16 has no
// CHECK_CONSTRAINTS view (ER_UNKNOWN_TABLE), MariaDB before 10.3.10 lists no TABLE_NAME in it
// (ER_BAD_FIELD_ERROR). Both report no checks (db.IsUndefinedObject).

func (m *mysqlInspector) tables(ctx context.Context) ([]Table, error) {
	out := []Table{}
	err := queryRows(ctx, m.db, func(r *sql.Rows) error {
		var t Table
		err := r.Scan(&t.Schema, &t.Name, &t.Comment)
		out = append(out, t)
		return err
	}, myTables)
	return out, err
}

func (m *mysqlInspector) table(ctx context.Context, name string) (*TableSchema, error) {
	t, err := m.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	flavour, err := m.serverFlavour(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.columns(ctx, flavour, t); err != nil {
		return nil, err
	}
	if err := m.indexes(ctx, t); err != nil {
		return nil, err
	}
	if err := m.foreignKeys(ctx, t); err != nil {
		return nil, err
	}
	if err := m.checks(ctx, flavour, t); err != nil {
		return nil, err
	}
	markPrimaryKey(t)
	return t, nil
}

// lookup finds the base table named exactly name (information_schema compares names without
// regard to case on some servers).
func (m *mysqlInspector) lookup(ctx context.Context, name string) (*TableSchema, error) {
	var found *TableSchema
	err := queryRows(ctx, m.db, func(r *sql.Rows) error {
		t := &TableSchema{}
		if err := r.Scan(&t.Schema, &t.Name, &t.Comment); err != nil {
			return err
		}
		if t.Name == name {
			found = t
		}
		return nil
	}, myTable, name)
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, ErrTableNotFound
	}
	return found, nil
}

// serverFlavour reads VERSION() once; a failed read is retried on the next call.
func (m *mysqlInspector) serverFlavour(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.flavour != "" {
		return m.flavour, nil
	}
	var version string
	if err := m.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", err
	}
	m.flavour = flavourMySQL
	if strings.Contains(strings.ToLower(version), "mariadb") {
		m.flavour = flavourMariaDB
	}
	return m.flavour, nil
}

func (m *mysqlInspector) columns(ctx context.Context, flavour string, t *TableSchema) error {
	t.Columns = []Column{}
	return queryRows(ctx, m.db, func(r *sql.Rows) error {
		var (
			c               Column
			dataType, extra string
			def             sql.NullString
		)
		if err := r.Scan(&c.Name, &c.Type, &dataType, &c.Nullable, &def, &c.Comment, &extra); err != nil {
			return err
		}
		c.Default = mysqlDefault(flavour, dataType, extra, def)
		c.IsAutoIncrement = strings.Contains(strings.ToLower(extra), "auto_increment")
		t.Columns = append(t.Columns, c)
		return nil
	}, myColumns, t.Name)
}

// mysqlDefault turns COLUMN_DEFAULT into an SQL expression. MariaDB (10.2.7 and later) already
// reports one, with the word NULL for a null default; MySQL reports string literals unquoted
// and marks expression defaults with DEFAULT_GENERATED in EXTRA.
func mysqlDefault(flavour, dataType, extra string, def sql.NullString) string {
	if !def.Valid {
		return ""
	}
	v := def.String
	if flavour == flavourMariaDB {
		if strings.EqualFold(v, "NULL") {
			return ""
		}
		return v
	}
	if strings.Contains(strings.ToUpper(extra), "DEFAULT_GENERATED") {
		return v
	}
	switch strings.ToLower(dataType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric",
		"float", "double", "real", "bit", "year":
		return v
	case "timestamp", "datetime":
		if strings.HasPrefix(strings.ToUpper(v), "CURRENT_TIMESTAMP") {
			return v
		}
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

func (m *mysqlInspector) indexes(ctx context.Context, t *TableSchema) error {
	var parts []keyPart
	unique := map[string]bool{}
	err := queryRows(ctx, m.db, func(r *sql.Rows) error {
		var kp keyPart
		var u bool
		if err := r.Scan(&kp.name, &u, &kp.column); err != nil {
			return err
		}
		parts = append(parts, kp)
		unique[kp.name] = u
		return nil
	}, myIndexes, t.Name)
	if err != nil {
		return err
	}
	names, cols := groupParts(parts)
	for _, n := range names {
		switch {
		case n == "PRIMARY":
			t.PrimaryKey = &PrimaryKey{Name: n, Columns: cols[n]}
		case unique[n]:
			t.UniqueKeys = append(t.UniqueKeys, UniqueKey{Name: n, Columns: cols[n], HasExpressions: hasEmpty(cols[n])})
		default:
			t.Indexes = append(t.Indexes, Index{Name: n, Columns: cols[n]})
		}
	}
	return nil
}

func (m *mysqlInspector) foreignKeys(ctx context.Context, t *TableSchema) error {
	return queryRows(ctx, m.db, func(r *sql.Rows) error {
		var fk ForeignKey
		var col, refCol string
		if err := r.Scan(&fk.Name, &fk.RefTable, &col, &refCol, &fk.OnUpdate, &fk.OnDelete); err != nil {
			return err
		}
		appendForeignKeyPart(t, fk, col, refCol)
		return nil
	}, myForeignKeys, t.Name)
}

func (m *mysqlInspector) checks(ctx context.Context, flavour string, t *TableSchema) error {
	query := myChecksMySQL
	if flavour == flavourMariaDB {
		query = myChecksMariaDB
	}
	err := queryRows(ctx, m.db, func(r *sql.Rows) error {
		var c Check
		err := r.Scan(&c.Name, &c.Expr)
		t.Checks = append(t.Checks, c)
		return err
	}, query, t.Name)
	if db.IsUndefinedObject(err) {
		t.Checks = nil
		return nil
	}
	return err
}

const myViews = `
SELECT v.TABLE_SCHEMA, v.TABLE_NAME, coalesce(v.VIEW_DEFINITION, ''), coalesce(c.COLUMN_NAME, '')
FROM information_schema.VIEWS v
LEFT JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = v.TABLE_SCHEMA AND c.TABLE_NAME = v.TABLE_NAME
WHERE v.TABLE_SCHEMA = DATABASE()
ORDER BY v.TABLE_NAME, c.ORDINAL_POSITION`

// views: MySQL and MariaDB views carry no comment (TABLE_COMMENT reads "VIEW").
func (m *mysqlInspector) views(ctx context.Context) ([]View, error) {
	out := []View{}
	err := queryRows(ctx, m.db, func(r *sql.Rows) error {
		var v View
		var col string
		if err := r.Scan(&v.Schema, &v.Name, &v.Definition, &col); err != nil {
			return err
		}
		if n := len(out); n > 0 && out[n-1].Name == v.Name {
			out[n-1].Columns = append(out[n-1].Columns, col)
			return nil
		}
		if col != "" {
			v.Columns = []string{col}
		}
		out = append(out, v)
		return nil
	}, myViews)
	return out, err
}
