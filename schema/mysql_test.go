package schema

import (
	"database/sql"
	"testing"
)

func TestMySQLDefault(t *testing.T) {
	t.Parallel()
	null := sql.NullString{}
	val := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	tests := []struct {
		name                     string
		flavour, dataType, extra string
		def                      sql.NullString
		want                     string
	}{
		{"no default", flavourMariaDB, "int", "", null, ""},
		{"mariadb null default", flavourMariaDB, "datetime", "", val("NULL"), ""},
		{"mariadb string literal", flavourMariaDB, "varchar", "", val("'anon'"), "'anon'"},
		{"mariadb expression", flavourMariaDB, "timestamp", "", val("current_timestamp()"), "current_timestamp()"},
		{"mysql number", flavourMySQL, "decimal", "", val("0.00"), "0.00"},
		{"mysql string is quoted", flavourMySQL, "varchar", "", val("it's"), "'it''s'"},
		{"mysql string NULL is a string", flavourMySQL, "varchar", "", val("NULL"), "'NULL'"},
		{"mysql generated default", flavourMySQL, "datetime", "DEFAULT_GENERATED", val("CURRENT_TIMESTAMP"), "CURRENT_TIMESTAMP"},
		{"mysql 5.7 current timestamp", flavourMySQL, "timestamp", "on update CURRENT_TIMESTAMP", val("CURRENT_TIMESTAMP"), "CURRENT_TIMESTAMP"},
		{"mysql expression", flavourMySQL, "json", "DEFAULT_GENERATED", val("json_array()"), "json_array()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mysqlDefault(tt.flavour, tt.dataType, tt.extra, tt.def); got != tt.want {
				t.Errorf("mysqlDefault = %q, want %q", got, tt.want)
			}
		})
	}
}
