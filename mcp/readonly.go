package mcp

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// Read-only execution of database_query (issue #18): the database itself refuses writes, so
// nothing the text guard misses can change data.
//
//   - PostgreSQL: a READ ONLY transaction (BEGIN READ ONLY) with SET LOCAL statement_timeout,
//     always rolled back. Writes, DDL, writable CTEs, FOR UPDATE and nextval() fail in it.
//   - MySQL and MariaDB: START TRANSACTION READ ONLY on a dedicated connection whose session is
//     made read-only (SET SESSION TRANSACTION READ ONLY, so DDL, which commits implicitly and
//     runs outside the transaction, is refused too) with a statement timeout (MariaDB
//     max_statement_time, MySQL max_execution_time) for the query, both reset afterwards;
//     always rolled back. Multi-statements are off in the driver.
//   - SQLite: a second handle on the database file opened read-only (mode=ro, with PRAGMA
//     query_only on every connection), so even a statement list that switches query_only off
//     cannot write; the query's context deadline interrupts it.
//
// A connection whose session state cannot be restored is closed instead of going back to the
// pool. Every query also runs under a context deadline a little past the statement timeout.

// timeoutGrace is how long past the statement timeout the context deadline falls: the database
// should stop the query first and report why.
const timeoutGrace = 2 * time.Second

// restoreTimeout bounds restoring a connection's session state.
const restoreTimeout = 5 * time.Second

// errTimedOut is the cause when the context deadline stopped a query.
var errTimedOut = errors.New("query timed out")

// rowSet is a query result: rows as JSON objects, and whether rows past the cap were dropped.
type rowSet struct {
	Rows      []map[string]any
	Truncated bool
}

// runReadOnly runs query with args (? placeholders, bound by bun's formatter as the original
// does) read-only on the primary database.
func (s *Service) runReadOnly(ctx context.Context, query string, args []any) (rowSet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Query.Timeout+timeoutGrace)
	defer cancel()
	if s.db.Kind == config.SQLite {
		return s.runSQLite(ctx, query, args)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return rowSet{}, err
	}
	defer conn.Close()
	var res rowSet
	switch s.db.Kind {
	case config.Postgres:
		res, err = s.runPostgres(ctx, conn, query, args)
	case config.MySQL:
		res, err = s.runMySQL(ctx, conn, query, args)
	default:
		err = fmt.Errorf("unsupported database type %q", s.db.Kind)
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w after %s: %w", errTimedOut, s.cfg.Query.Timeout, err)
	}
	return res, err
}

func (s *Service) runPostgres(ctx context.Context, conn bun.Conn, query string, args []any) (rowSet, error) {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rowSet{}, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", s.cfg.Query.Timeout.Milliseconds())); err != nil {
		return rowSet{}, err
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return rowSet{}, err
	}
	return collect(rows, s.cfg.Query.MaxRows)
}

func (s *Service) runMySQL(ctx context.Context, conn bun.Conn, query string, args []any) (rowSet, error) {
	set, reset, err := s.mysql.sessionStatements(ctx, conn, s.cfg.Query.Timeout)
	if err != nil {
		return rowSet{}, err
	}
	defer s.restore(conn, reset...)
	for _, stmt := range set {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return rowSet{}, err
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rowSet{}, err
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return rowSet{}, err
	}
	return collect(rows, s.cfg.Query.MaxRows)
}

func (s *Service) runSQLite(ctx context.Context, query string, args []any) (rowSet, error) {
	if s.ro == nil {
		return rowSet{}, errors.New("the read-only database handle is not open (module not started)")
	}
	qctx, cancel := context.WithTimeout(ctx, s.cfg.Query.Timeout)
	defer cancel()
	rows, err := s.ro.QueryContext(qctx, query, args...)
	if err != nil {
		if qctx.Err() != nil {
			err = fmt.Errorf("%w after %s: %w", errTimedOut, s.cfg.Query.Timeout, err)
		}
		return rowSet{}, err
	}
	return collect(rows, s.cfg.Query.MaxRows)
}

// openReadOnly opens the read-only SQLite handle (Start); other databases need none.
func (s *Service) openReadOnly(ctx context.Context) error {
	if s.db.Kind != config.SQLite {
		return nil
	}
	ro, err := db.OpenSQLiteReadOnly(ctx, s.db.Name, s.source)
	if err != nil {
		return err
	}
	s.ro = ro
	return nil
}

// closeReadOnly closes the read-only SQLite handle (Stop).
func (s *Service) closeReadOnly(context.Context) error {
	if s.ro == nil {
		return nil
	}
	return s.ro.Close()
}

// restore runs stmts to put the connection's session state back; when one fails the
// connection is closed rather than returned to the pool in the query's state.
func (s *Service) restore(conn bun.Conn, stmts ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			s.log.Warn("mcp: closing a connection whose session state could not be restored", "error", err)
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			return
		}
	}
}

// collect reads at most limit rows as JSON objects keyed by column name and closes rows.
func collect(rows *sql.Rows, limit int) (rowSet, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return rowSet{}, err
	}
	res := rowSet{Rows: []map[string]any{}}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for rows.Next() {
		if len(res.Rows) == limit {
			res.Truncated = true
			return res, nil
		}
		for i := range vals {
			vals[i] = nil
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return rowSet{}, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = jsonValue(vals[i])
		}
		res.Rows = append(res.Rows, row)
	}
	return res, rows.Err()
}

// jsonValue converts a scanned value for the JSON result (wire-runtime §4): UTF-8 bytes become a
// string, other bytes base64.
func jsonValue(v any) any {
	b, ok := v.([]byte)
	if !ok {
		return v
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// mysqlFlavor remembers whether the MySQL-protocol server is MariaDB, which names its statement
// timeout differently.
type mysqlFlavor struct {
	mu      sync.Mutex
	known   bool
	mariaDB bool
}

// sessionStatements returns the statements that make the session read-only with a statement
// timeout, and those that undo it, asking the server for its flavour on first use.
func (f *mysqlFlavor) sessionStatements(ctx context.Context, conn bun.Conn, d time.Duration) (set, reset []string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known {
		var version string
		if err := conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
			return nil, nil, err
		}
		f.known, f.mariaDB = true, strings.Contains(strings.ToLower(version), "mariadb")
	}
	// The session, not only the transaction, is read-only: DDL commits the open transaction
	// implicitly and would then run in the session's default access mode.
	set, reset = []string{"SET SESSION TRANSACTION READ ONLY"}, []string{"SET SESSION TRANSACTION READ WRITE"}
	if f.mariaDB {
		set = append(set, fmt.Sprintf("SET SESSION max_statement_time = %.3f", d.Seconds()))
		return set, append(reset, "SET SESSION max_statement_time = DEFAULT"), nil
	}
	set = append(set, fmt.Sprintf("SET SESSION max_execution_time = %d", d.Milliseconds()))
	return set, append(reset, "SET SESSION max_execution_time = DEFAULT"), nil
}
