package cron

import (
	"embed"
	"io/fs"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
)

//go:embed migrations
var migrationFiles embed.FS

//go:embed messages
var messageFiles embed.FS

// Migrations returns the module's migrations: migrations/{postgres,mysql,sqlite}/NNN_name.sql,
// creating crn_schedule, crn_fire_request and crn_run (wire-runtime §1.2).
func Migrations() *db.Migrations {
	return db.EmbeddedMigrations("cron", migrationFiles)
}

// Messages returns the module's message catalog: messages/<lang>/cron.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }
