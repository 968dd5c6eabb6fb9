package schema

// The result shapes of sys/schema (wire-core §8.1). Field names and omitempty follow the original
// framework exactly: clients render these objects as they come.

// Table is one entry of list_tables.
type Table struct {
	// Name is the table name as stored in the catalog.
	Name string `json:"name"`
	// Schema is the PostgreSQL schema, the MySQL database or "main" for SQLite.
	Schema string `json:"schema,omitempty"`
	// Comment is the table comment; SQLite has none.
	Comment string `json:"comment,omitempty"`
}

// TableSchema is the answer of get_table_schema.
type TableSchema struct {
	// Name is the table name as stored in the catalog.
	Name string `json:"name"`
	// Schema is as in Table.
	Schema string `json:"schema,omitempty"`
	// Comment is the table comment.
	Comment string `json:"comment,omitempty"`
	// Columns are the columns in declaration order.
	Columns []Column `json:"columns"`
	// PrimaryKey is the primary key, if any.
	PrimaryKey *PrimaryKey `json:"primaryKey,omitempty"`
	// Indexes are the non-unique indexes, by name.
	Indexes []Index `json:"indexes,omitempty"`
	// UniqueKeys are the unique constraints and unique indexes, by name.
	UniqueKeys []UniqueKey `json:"uniqueKeys,omitempty"`
	// ForeignKeys are the foreign keys, by name.
	ForeignKeys []ForeignKey `json:"foreignKeys,omitempty"`
	// Checks are the CHECK constraints, by name.
	Checks []Check `json:"checks,omitempty"`
}

// Column describes one column in declaration order.
type Column struct {
	Name string `json:"name"`
	// Type is the type as the database reports it, with length and precision where the
	// dialect keeps them ("character varying(200)", "decimal(10,2)", "VARCHAR(200)").
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
	// Default is the default as an SQL expression as the database reports it ("'new'::text",
	// "0.00", "CURRENT_TIMESTAMP"); empty when the column has none.
	Default         string `json:"default,omitempty"`
	Comment         string `json:"comment,omitempty"`
	IsPrimaryKey    bool   `json:"isPrimaryKey,omitempty"`
	IsAutoIncrement bool   `json:"isAutoIncrement,omitempty"`
}

// PrimaryKey is the primary key constraint; its name is omitted where the dialect has none.
type PrimaryKey struct {
	Name    string   `json:"name,omitempty"`
	Columns []string `json:"columns"`
}

// Index is a non-unique index. An expression part is listed as "".
type Index struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// UniqueKey is a unique constraint or unique index other than the primary key. Predicate is the
// WHERE clause of a partial index; HasExpressions is set when some part is an expression (that
// part is listed as "").
type UniqueKey struct {
	Name           string   `json:"name"`
	Columns        []string `json:"columns"`
	Predicate      string   `json:"predicate,omitempty"`
	HasExpressions bool     `json:"hasExpressions,omitempty"`
}

// ForeignKey is a foreign key constraint. OnUpdate and OnDelete are the referential actions in
// upper case ("CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT", "NO ACTION").
type ForeignKey struct {
	Name       string   `json:"name"`
	Columns    []string `json:"columns"`
	RefTable   string   `json:"refTable"`
	RefColumns []string `json:"refColumns"`
	OnUpdate   string   `json:"onUpdate,omitempty"`
	OnDelete   string   `json:"onDelete,omitempty"`
}

// Check is a CHECK constraint; Expr is its condition as the database reports it.
type Check struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// View is one entry of list_views. Definition is the view's query.
type View struct {
	Name       string   `json:"name"`
	Schema     string   `json:"schema,omitempty"`
	Definition string   `json:"definition"`
	Comment    string   `json:"comment,omitempty"`
	Columns    []string `json:"columns,omitempty"`
}
