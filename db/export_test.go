package db

import (
	"context"

	"github.com/uptrace/bun"
)

// LockMigrationsForTest takes d's migration lock on conn, as Migrate's locked path does, and
// returns its release: tests hold it to prove a path does not wait for it.
func LockMigrationsForTest(ctx context.Context, d *DB, conn bun.Conn) (func(context.Context) error, error) {
	return d.lockMigrations(ctx, conn)
}
