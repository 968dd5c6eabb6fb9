package schema

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// postgresInspector reads pg_catalog for one schema (svc.data_sources.primary.schema, default
// public). Base tables are relkind r and p (partitioned parents; partitions are left out); views
// are relkind v and m (materialised views are listed as views).
type postgresInspector struct {
	db     *sql.DB
	schema string
}

var _ inspector = (*postgresInspector)(nil)

const pgTables = `
SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname`

func (p *postgresInspector) tables(ctx context.Context) ([]Table, error) {
	out := []Table{}
	err := queryRows(ctx, p.db, func(r *sql.Rows) error {
		t := Table{Schema: p.schema}
		err := r.Scan(&t.Name, &t.Comment)
		out = append(out, t)
		return err
	}, pgTables, p.schema)
	return out, err
}

const pgTable = `
SELECT c.oid, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`

// pgColumns: identity columns and columns whose default draws from a sequence (serial types)
// are auto-increment; the nextval default of a serial column is an implementation detail of
// that and is not reported. Generated columns report no default.
const pgColumns = `
SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       CASE WHEN a.attgenerated <> '' THEN '' ELSE coalesce(pg_get_expr(d.adbin, d.adrelid), '') END,
       coalesce(col_description(a.attrelid, a.attnum), ''), a.attidentity IN ('a', 'd')
FROM pg_attribute a
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

// pgIndexes lists the key parts of every index (INCLUDE columns left out); an expression part
// has attnum 0 and comes out as "".
const pgIndexes = `
SELECT i.relname, x.indisunique, x.indisprimary, coalesce(pg_get_expr(x.indpred, x.indrelid), ''),
       coalesce(a.attname, '')
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum AND k.attnum <> 0
WHERE x.indrelid = $1 AND k.ord <= x.indnkeyatts
ORDER BY i.relname, k.ord`

// pgForeignKeys spells the referential action codes of pg_constraint in SQL words.
const pgForeignKeys = `
SELECT c.conname, r.relname, a.attname, ra.attname,
       CASE c.confupdtype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT'
            WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END,
       CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT'
            WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END
FROM pg_constraint c
JOIN pg_class r ON r.oid = c.confrelid
CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(col, refcol, ord)
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.col
JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = k.refcol
WHERE c.conrelid = $1 AND c.contype = 'f'
ORDER BY c.conname, k.ord`

const pgChecks = `
SELECT conname, pg_get_expr(conbin, conrelid)
FROM pg_constraint WHERE conrelid = $1 AND contype = 'c'
ORDER BY conname`

func (p *postgresInspector) table(ctx context.Context, name string) (*TableSchema, error) {
	var oid uint32
	t := &TableSchema{Name: name, Schema: p.schema}
	err := p.db.QueryRowContext(ctx, pgTable, p.schema, name).Scan(&oid, &t.Comment)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrTableNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := p.columns(ctx, oid, t); err != nil {
		return nil, err
	}
	if err := p.indexes(ctx, oid, t); err != nil {
		return nil, err
	}
	if err := p.foreignKeys(ctx, oid, t); err != nil {
		return nil, err
	}
	err = queryRows(ctx, p.db, func(r *sql.Rows) error {
		var c Check
		err := r.Scan(&c.Name, &c.Expr)
		t.Checks = append(t.Checks, c)
		return err
	}, pgChecks, oid)
	markPrimaryKey(t)
	return t, err
}

func (p *postgresInspector) columns(ctx context.Context, oid uint32, t *TableSchema) error {
	t.Columns = []Column{}
	return queryRows(ctx, p.db, func(r *sql.Rows) error {
		var c Column
		if err := r.Scan(&c.Name, &c.Type, &c.Nullable, &c.Default, &c.Comment, &c.IsAutoIncrement); err != nil {
			return err
		}
		if strings.HasPrefix(c.Default, "nextval(") {
			c.IsAutoIncrement, c.Default = true, ""
		}
		t.Columns = append(t.Columns, c)
		return nil
	}, pgColumns, oid)
}

func (p *postgresInspector) indexes(ctx context.Context, oid uint32, t *TableSchema) error {
	type info struct {
		unique, primary bool
		predicate       string
	}
	var parts []keyPart
	infos := map[string]info{}
	err := queryRows(ctx, p.db, func(r *sql.Rows) error {
		var (
			kp keyPart
			in info
		)
		if err := r.Scan(&kp.name, &in.unique, &in.primary, &in.predicate, &kp.column); err != nil {
			return err
		}
		parts = append(parts, kp)
		infos[kp.name] = in
		return nil
	}, pgIndexes, oid)
	if err != nil {
		return err
	}
	names, cols := groupParts(parts)
	for _, n := range names {
		in := infos[n]
		switch {
		case in.primary:
			t.PrimaryKey = &PrimaryKey{Name: n, Columns: cols[n]}
		case in.unique:
			t.UniqueKeys = append(t.UniqueKeys, UniqueKey{Name: n, Columns: cols[n],
				Predicate: in.predicate, HasExpressions: hasEmpty(cols[n])})
		default:
			t.Indexes = append(t.Indexes, Index{Name: n, Columns: cols[n]})
		}
	}
	return nil
}

func (p *postgresInspector) foreignKeys(ctx context.Context, oid uint32, t *TableSchema) error {
	return queryRows(ctx, p.db, func(r *sql.Rows) error {
		var fk ForeignKey
		var col, refCol string
		if err := r.Scan(&fk.Name, &fk.RefTable, &col, &refCol, &fk.OnUpdate, &fk.OnDelete); err != nil {
			return err
		}
		appendForeignKeyPart(t, fk, col, refCol)
		return nil
	}, pgForeignKeys, oid)
}

const pgViews = `
SELECT c.relname, pg_get_viewdef(c.oid), coalesce(obj_description(c.oid, 'pg_class'), ''),
       coalesce((SELECT array_to_json(array_agg(a.attname ORDER BY a.attnum))::text FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('v', 'm')
ORDER BY c.relname`

func (p *postgresInspector) views(ctx context.Context) ([]View, error) {
	out := []View{}
	err := queryRows(ctx, p.db, func(r *sql.Rows) error {
		v := View{Schema: p.schema}
		var cols string
		if err := r.Scan(&v.Name, &v.Definition, &v.Comment, &cols); err != nil {
			return err
		}
		v.Definition = strings.TrimSpace(v.Definition)
		var err error
		v.Columns, err = decodeNames(cols)
		out = append(out, v)
		return err
	}, pgViews, p.schema)
	return out, err
}
