package audit

import (
	"embed"

	"github.com/svc-framework/svc/db"
)

//go:embed migrations
var migrationFiles embed.FS

// Migrations returns the module's migrations: migrations/{postgres,mysql,sqlite}/NNN_name.sql,
// creating sys_audit_record.
func Migrations() *db.Migrations {
	return db.EmbeddedMigrations("audit", migrationFiles)
}
