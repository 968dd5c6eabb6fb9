package event

import (
	"embed"

	"github.com/svc-framework/svc/db"
)

//go:embed migrations
var migrationFiles embed.FS

// Migrations returns the bus's migrations (sys_event_outbox, sys_event_inbox):
// migrations/{postgres,mysql,sqlite}/NNN_name.sql, for db.Migrate.
func Migrations() *db.Migrations {
	return db.EmbeddedMigrations("event", migrationFiles)
}
