package approval

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/svc-framework/svc/db"
	"slices"
	"strings"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// FormTable is a row of apv_form_table: one generated physical table of a table-storage version
// (source_field_key "" = the main table, else the detail-table field it holds).
type FormTable struct {
	bun.BaseModel `bun:"table:apv_form_table"`

	ID                string    `bun:"id,pk"`
	CreatedAt         crud.Time `bun:"created_at"`
	CreatedBy         string    `bun:"created_by"`
	FlowID            string    `bun:"flow_id"`
	VersionID         string    `bun:"version_id"`
	PhysicalTableName string    `bun:"physical_table_name"`
	SourceFieldKey    string    `bun:"source_field_key"`
}

// FormTableColumn is a row of apv_form_table_column: one field column of a generated table.
type FormTableColumn struct {
	bun.BaseModel `bun:"table:apv_form_table_column"`

	ID             string    `bun:"id,pk"`
	CreatedAt      crud.Time `bun:"created_at"`
	CreatedBy      string    `bun:"created_by"`
	FormTableID    string    `bun:"form_table_id"`
	ColumnName     string    `bun:"column_name"`
	ColumnType     string    `bun:"column_type"`
	IsNullable     bool      `bun:"is_nullable"`
	SourceFieldKey string    `bun:"source_field_key"`
	SortOrder      int       `bun:"sort_order"`
}

// formTable is one generated table of a version: its name, the field it holds ("" = main) and
// its field columns.
type formTable struct {
	name, source string
	fields       []design.FormField
}

// reservedColumns are the columns every generated table has.
var reservedColumns = []string{"id", "instance_id", "row_index", "created_at"}

// formTablesOf lays out the physical tables of a table-storage version (wire-approval §3): the
// main table apv_form_<code>_<version> (apv_form_<version> when that is longer than 63
// characters or the code is no identifier) with a column per field, and a child table
// apv_form_<version>__<field> per detail-table field. The version id is used without hyphens.
// A field whose key cannot be a column is 40014 naming it.
func formTablesOf(code, versionID string, fields []design.FormField) ([]formTable, error) {
	ver := strings.ToLower(strings.ReplaceAll(versionID, "-", ""))
	main := "apv_form_" + strings.ToLower(code) + "_" + ver
	if !identifier.MatchString(main) {
		main = "apv_form_" + ver
	}
	out := []formTable{{name: main}}
	for _, f := range fields {
		if err := columnName(f.Key); err != nil {
			return nil, err
		}
		if f.Kind != design.FieldTable {
			out[0].fields = append(out[0].fields, f)
			continue
		}
		child := formTable{name: "apv_form_" + ver + "__" + strings.ToLower(f.Key), source: f.Key, fields: f.Columns}
		if !identifier.MatchString(child.name) {
			return nil, ErrTableStorageField.WithArgs("field", f.Key)
		}
		for _, c := range f.Columns {
			if err := columnName(c.Key); err != nil {
				return nil, err
			}
		}
		out = append(out, child)
	}
	return out, nil
}

// checkTableStorage is deploy's check of a table-storage version: a form document whose fields
// can all be columns (40014 naming the problem).
func checkTableStorage(fields []design.FormField) error {
	if len(fields) == 0 {
		return ErrTableStorageNoFields
	}
	_, err := formTablesOf("", strings.Repeat("0", 32), fields)
	return err
}

func columnName(key string) error {
	if !identifier.MatchString(key) || slices.Contains(reservedColumns, strings.ToLower(key)) {
		return ErrTableStorageField.WithArgs("field", key)
	}
	return nil
}

// columnType is the column type of field f: its projected type; a number without one decimal.
func columnType(f design.FormField) design.ColumnType {
	switch {
	case f.ColumnType != "":
		return f.ColumnType
	case f.Kind == design.FieldNumber:
		return design.ColumnDecimal
	}
	return design.ColumnText
}

// columnSQL is the dialect's type of a column of type t (decimals: 20 digits, the field's scale
// or 6; db.DB.SQLType spells the types the dialects spell differently).
func (s *Service) columnSQL(t design.ColumnType, scale *int) string {
	switch t {
	case design.ColumnString:
		return "VARCHAR(512)"
	case design.ColumnInteger:
		return "BIGINT"
	case design.ColumnDecimal:
		sc := 6
		if scale != nil {
			sc = min(*scale, 10)
		}
		return fmt.Sprintf("DECIMAL(20,%d)", sc)
	case design.ColumnBoolean:
		return "BOOLEAN"
	case design.ColumnDate:
		return "DATE"
	case design.ColumnDatetime:
		return s.db.SQLType(db.TypeTimestamp)
	case design.ColumnJSON:
		return s.db.SQLType(db.TypeJSON)
	}
	return s.db.SQLType(db.TypeText)
}

// createFormTable creates t when it does not exist.
func (s *Service) createFormTable(ctx context.Context, idb bun.IDB, t formTable) error {
	ts := s.db.SQLType(db.TypeTimestamp)
	var b strings.Builder
	args := []any{bun.Ident(t.name)}
	b.WriteString("CREATE TABLE IF NOT EXISTS ? (id VARCHAR(64) NOT NULL PRIMARY KEY, instance_id VARCHAR(64) NOT NULL")
	if t.source == "" {
		b.WriteString(" UNIQUE")
	} else {
		b.WriteString(", row_index INTEGER NOT NULL")
	}
	for _, f := range t.fields {
		b.WriteString(", ? " + s.columnSQL(columnType(f), f.Scale) + " NULL")
		args = append(args, bun.Ident(f.Key))
	}
	b.WriteString(", created_at " + ts + " NOT NULL)")
	if _, err := idb.NewRaw(b.String(), args...).Exec(ctx); err != nil {
		return fmt.Errorf("approval: create %s: %w", t.name, err)
	}
	if t.source != "" {
		sum := sha256.Sum256([]byte(t.name))
		idx := "idx_apv_form_" + hex.EncodeToString(sum[:12])
		if _, err := idb.NewRaw("CREATE INDEX IF NOT EXISTS ? ON ? (instance_id)", bun.Ident(idx), bun.Ident(t.name)).Exec(ctx); err != nil {
			return fmt.Errorf("approval: index %s: %w", t.name, err)
		}
	}
	return nil
}

// provisionFormTables creates the physical tables of a table-storage version before it is
// published (DDL outside the publish transaction: MySQL commits DDL implicitly; CREATE TABLE IF
// NOT EXISTS, so a publish that failed after this step can be repeated) and returns their layout
// for recordFormTables. JSON versions, and versions publish_version will refuse, need nothing.
func (s *Service) provisionFormTables(ctx context.Context, cl caller, versionID string) ([]formTable, error) {
	v := new(Version)
	if err := s.db.NewSelect().Model(v).Where("id = ?", versionID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil // publish_version answers it
		}
		return nil, err
	}
	if v.StorageMode != StorageTable || v.Status != VersionDraft {
		return nil, nil
	}
	f, err := s.flowFor(ctx, s.db, cl, v.FlowID, "")
	if err != nil {
		return nil, nil // publish_version answers it
	}
	var fields []design.FormField
	if err := json.Unmarshal(v.FormFields, &fields); err != nil {
		return nil, fmt.Errorf("approval: form fields of version %s: %w", v.ID, err)
	}
	tables, err := formTablesOf(f.Code, v.ID, fields)
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		if err := s.createFormTable(ctx, s.db, t); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

// recordFormTables writes the metadata rows of a version's generated tables (inside the publish
// transaction; nothing for a JSON version).
func (s *Service) recordFormTables(ctx context.Context, tx bun.Tx, flowID, versionID, by string, tables []formTable) error {
	if len(tables) == 0 {
		return nil
	}
	now := crud.NewTime(s.clock())
	var cols []FormTableColumn
	rows := make([]FormTable, len(tables))
	for i, t := range tables {
		rows[i] = FormTable{ID: rpc.NewID(), CreatedAt: now, CreatedBy: by, FlowID: flowID, VersionID: versionID,
			PhysicalTableName: t.name, SourceFieldKey: t.source}
		for j, f := range t.fields {
			cols = append(cols, FormTableColumn{ID: rpc.NewID(), CreatedAt: now, CreatedBy: by, FormTableID: rows[i].ID,
				ColumnName: f.Key, ColumnType: string(columnType(f)), IsNullable: true, SourceFieldKey: f.Key, SortOrder: j})
		}
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&cols).Exec(ctx)
	return err
}

// storeForm replaces the instance's rows in the version's generated tables with its form data
// (start and resubmit; wire-approval §3): the main row, and one row per detail-table row with its
// index, written with the command's other deferred writes. JSON versions store nothing here.
func (r *run) storeForm(ctx context.Context) error {
	if r.g.version.StorageMode != StorageTable {
		return nil
	}
	tables, err := formTablesOf(r.inst.FlowCode, r.g.version.ID, r.g.fields)
	if err != nil {
		return err
	}
	now := crud.NewTime(r.now)
	for _, t := range tables {
		if !r.fresh { // a new instance has no rows yet
			if err := r.writes.Queue(ctx, r.tx.NewRaw("DELETE FROM ? WHERE instance_id = ?", bun.Ident(t.name), r.inst.ID)); err != nil {
				return err
			}
		}
		rows := []map[string]any{r.inst.FormData}
		if t.source != "" {
			rows = tableRows(r.inst.FormData[t.source])
		}
		for i, data := range rows {
			if err := r.insertFormRow(ctx, t, data, i, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertFormRow inserts one row of t from data (row index i in a child table).
func (r *run) insertFormRow(ctx context.Context, t formTable, data map[string]any, i int, now crud.Time) error {
	cols := []any{bun.Ident("id"), bun.Ident("instance_id"), bun.Ident("created_at")}
	vals := []any{rpc.NewID(), r.inst.ID, now}
	if t.source != "" {
		cols, vals = append(cols, bun.Ident("row_index")), append(vals, i)
	}
	for _, f := range t.fields {
		cols, vals = append(cols, bun.Ident(f.Key)), append(vals, columnValue(columnType(f), data[f.Key]))
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	return r.writes.Queue(ctx, r.tx.NewRaw("INSERT INTO ? ("+marks+") VALUES ("+marks+")", append(append([]any{bun.Ident(t.name)}, cols...), vals...)...))
}

// tableRows are the row objects of a detail-table value.
func tableRows(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// columnValue is a form value as the column of type t stores it: JSON columns and structured
// values as JSON text, empty strings of typed columns as NULL.
func columnValue(t design.ColumnType, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" && t != design.ColumnString && t != design.ColumnText {
			return nil
		}
		if t != design.ColumnJSON {
			return x
		}
	case float64, bool:
		if t != design.ColumnJSON {
			return x
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
