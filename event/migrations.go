package event

import (
	"embed"
	"io/fs"

	"github.com/svc-framework/svc/db"
)

//go:embed migrations
var migrationFiles embed.FS

// Migrations returns the bus's migrations (sys_event_outbox, sys_event_inbox):
// migrations/{postgres,mysql,sqlite}/NNN_name.sql, for db.Migrate.
func Migrations() *db.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return &db.Migrations{Module: "event", FS: sub}
}
