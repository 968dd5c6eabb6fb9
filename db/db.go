package db

import (
	"io/fs"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// DB is one opened data source: a bun query builder over database/sql plus what modules need to
// know about it.
type DB struct {
	*bun.DB
	// Name is the data source name ("primary", ...).
	Name string
	// Kind is the dialect: config.Postgres, config.MySQL or config.SQLite.
	Kind config.DBKind
	// Schema is the PostgreSQL schema in use ("public" by default); empty for other kinds.
	Schema string
	// SQLGuard mirrors enable_sql_guard for modules that expose raw SQL.
	SQLGuard bool
	// Path is the file of an embedded (SQLite) data source; empty for the server dialects.
	Path string

	// writer is the process's writer lock of a SQLite file (nil for the server dialects and a
	// hand-built DB): InTx holds it for the whole transaction.
	writer chan struct{}
}

// UseQueryHook makes d run hook around every query: the handle's bun.DB becomes a copy with
// the hook (bun's WithQueryHook), so every holder of d sees it. Call it before d is in use by
// more than one goroutine — while a server is built, before Start — as it replaces a field.
func (d *DB) UseQueryHook(hook bun.QueryHook) { d.DB = d.DB.WithQueryHook(hook) }

// Migrations are one module's embedded migration files: FS holds the directories postgres/,
// mysql/ and sqlite/, each with files named NNN_name.sql applied in ascending NNN order.
type Migrations struct {
	// Module names the module; versions are recorded per module in the version table.
	Module string
	// FS is the embedded tree (usually an embed.FS rooted at "migrations").
	FS fs.FS
}

// EmbeddedMigrations returns module's migrations from fsys's "migrations" directory
// (migrations/{postgres,mysql,sqlite}/NNN_name.sql), the layout every module embeds with
// //go:embed migrations. It panics when fsys has no such directory, which the embed directive
// rules out at build time.
func EmbeddedMigrations(module string, fsys fs.FS) *Migrations {
	sub, err := fs.Sub(fsys, "migrations")
	if err != nil {
		panic(err)
	}
	return &Migrations{Module: module, FS: sub}
}
