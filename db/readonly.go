package db

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
)

// sqliteReadOnlyMaxOpenConns bounds the read-only handle's connections.
const sqliteReadOnlyMaxOpenConns = 2

// OpenSQLiteReadOnly opens a second handle on the SQLite data source ds whose connections cannot
// write: the file is opened read-only (URI mode=ro, so no statement, PRAGMA query_only = OFF
// included, can make it writable) and every connection also runs PRAGMA query_only. It is for
// code that runs SQL it did not write (the MCP database_query tool). The caller closes it. Other
// kinds fail with ErrUnsupportedDBKind.
func OpenSQLiteReadOnly(ctx context.Context, name string, ds config.DataSource) (*DB, error) {
	if ds.Type != config.SQLite {
		return nil, ErrUnsupportedDBKind
	}
	if ds.Path == "" || strings.ContainsAny(ds.Path, "?#") {
		return nil, fmt.Errorf("db: data source %q: path %q cannot be opened read-only", name, ds.Path)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	q.Add("_pragma", "query_only(1)")
	q.Set("_time_format", "sqlite")
	sqldb, err := sql.Open("sqlite", "file:"+strings.ReplaceAll(ds.Path, "%", "%25")+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("db: data source %q (read-only): %w", name, err)
	}
	sqldb.SetMaxOpenConns(sqliteReadOnlyMaxOpenConns)
	sqldb.SetMaxIdleConns(sqliteReadOnlyMaxOpenConns)
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := sqldb.PingContext(pingCtx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("db: data source %q (read-only): ping: %w", name, err)
	}
	return &DB{DB: bun.NewDB(sqldb, sqlitedialect.New()), Name: name, Kind: config.SQLite}, nil
}
