package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/svc-framework/svc/config"
)

// ReadOnly runs SQL written by someone else — the MCP database_query tool, the integration
// scripts' read_only data sources — so that the database engine and the driver, not a text
// guard, keep it to one read (issue #31). See doc.go, "Read-only queries", for what each
// dialect enforces.
type ReadOnly struct {
	name   string
	kind   config.DBKind
	lim    ReadOnlyLimits
	sem    chan struct{}
	sqlite *sqliteSource // SQLite: the read-only connections
	pg     *sql.DB       // PostgreSQL: a pool of its own
	my     *mysql.Config // MySQL: the settings of a fresh session per call
	login  loginCheck    // PostgreSQL and MySQL: the privilege check, run once
	flavor mysqlFlavor   // MySQL: MariaDB or MySQL, asked once
}

// ReadOnlyLimits bound every call of a ReadOnly runner.
type ReadOnlyLimits struct {
	// MaxBytes is the most bytes of values one call reads (text and binary values by length,
	// other values 8 bytes); more stops the statement with ErrResultTooLarge. No single value
	// larger than MaxBytes is built or received either (SQLite's length limit, the wire
	// guards), so memory stays within a small multiple of it.
	MaxBytes int64
	// Timeout is the statement timeout the database enforces; the call's context is cancelled
	// a little later (at Timeout on SQLite, where the interrupt is the timeout).
	Timeout time.Duration
}

// readOnlyMaxConns bounds the connections (and so the concurrent calls) of one runner.
const readOnlyMaxConns = 4

// timeoutGrace is how long past the statement timeout a server call's context ends: the
// database should stop the statement first and say why.
const timeoutGrace = 2 * time.Second

// OpenReadOnly opens a read-only runner on the data source ds (named name in errors, which never
// hold its password): its own connections, never the application's pool. A SQLite file must
// exist. The login's privileges are checked at the first call (CheckLogin). Other kinds fail
// with ErrUnsupportedDBKind.
func OpenReadOnly(ctx context.Context, name string, ds config.DataSource, lim ReadOnlyLimits) (*ReadOnly, error) {
	if lim.MaxBytes <= 0 || lim.Timeout <= 0 {
		return nil, fmt.Errorf("db: data source %q (read-only): the byte cap and the timeout must be positive", name)
	}
	r := &ReadOnly{name: name, kind: ds.Type, lim: lim, sem: make(chan struct{}, readOnlyMaxConns)}
	var err error
	switch ds.Type {
	case config.SQLite:
		err = r.openSQLite(ds)
	case config.Postgres:
		err = r.openPostgres(ctx, ds)
	case config.MySQL:
		err = r.openMySQL(ctx, ds)
	default:
		return nil, ErrUnsupportedDBKind
	}
	if err != nil {
		return nil, redact(fmt.Errorf("db: data source %q (%s, read-only): %w", name, ds.Type, err), ds.Password)
	}
	return r, nil
}

func (r *ReadOnly) openSQLite(ds config.DataSource) error {
	if ds.Path == "" {
		return errors.New("path is required")
	}
	r.sqlite = &sqliteSource{path: ds.Path, maxBytes: r.lim.MaxBytes}
	c, err := r.sqlite.get() // the file must exist and open read-only
	if err != nil {
		return err
	}
	r.sqlite.put(c)
	return nil
}

// Kind is the dialect of the runner's data source.
func (r *ReadOnly) Kind() config.DBKind { return r.kind }

// Limits are the runner's limits.
func (r *ReadOnly) Limits() ReadOnlyLimits { return r.lim }

// Query runs text — exactly one statement — with args bound to its placeholders (? in order;
// on PostgreSQL ? is turned into $n before the statement is sent) and returns at most maxRows
// rows (Truncated when more matched). Every value read is charged to the byte cap (text and
// binary values by length, other values 8 bytes). Failures wrap ErrNotReadOnly,
// ErrMultipleStatements, ErrEmptyStatement, ErrResultTooLarge, ErrQueryTimeout (or
// context.Canceled when ctx ended first), ErrPrivilegedLogin, or are the database's own error.
func (r *ReadOnly) Query(ctx context.Context, text string, args []any, maxRows int) (*Rows, error) {
	res := &Rows{Values: [][]any{}}
	truncated, err := r.run(ctx, text, args, maxRows, &byteCap{max: r.lim.MaxBytes, fixed: fixedValueBytes}, &collector{res})
	if err != nil {
		return nil, err
	}
	res.Truncated = truncated
	return res, nil
}

// QueryTo runs text as Query does but hands the result to sink as it is read and keeps no row:
// the columns, then each of at most maxRows rows; truncated reports that a further row
// matched (it was not fetched). Only the row being read is held, and before sink sees a row its
// text and binary values are charged to the byte cap by their length, counted over the whole
// call (numbers, times and NULLs count nothing: their size is fixed), so no row larger than the
// cap is ever built. That count is a lower bound of any encoding that writes every value; a
// sink that bounds its own output (MCP's database_query bounds the encoded answer) returns its
// error from Row, which stops the statement and is the call's error. The statement timeout and
// ctx cover the sink's work too: it runs while the statement does.
func (r *ReadOnly) QueryTo(ctx context.Context, text string, args []any, maxRows int, sink RowSink) (truncated bool, err error) {
	return r.run(ctx, text, args, maxRows, &byteCap{max: r.lim.MaxBytes}, sink)
}

// run is Query and QueryTo: the call's deadline and slot, then the dialect's runner.
func (r *ReadOnly) run(ctx context.Context, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	limit := r.lim.Timeout
	if r.kind != config.SQLite {
		limit += timeoutGrace
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return false, r.classify(ctx, ctx.Err())
	}
	defer func() { <-r.sem }()
	cols := &columnCount{RowSink: sink}
	var (
		truncated bool
		err       error
	)
	switch r.kind {
	case config.SQLite:
		truncated, err = r.sqlite.query(ctx, text, args, max(maxRows, 0), cap, cols)
	case config.Postgres:
		truncated, err = r.queryPostgres(ctx, text, args, max(maxRows, 0), cap, cols)
	default:
		truncated, err = r.queryMySQL(ctx, text, args, max(maxRows, 0), cap, cols)
	}
	if err != nil {
		return false, r.classify(ctx, err)
	}
	if cols.n == 0 { // SET, COMMIT, PREPARE…: ran harmlessly (rolled back), still refused
		return false, fmt.Errorf("%w: the statement is not a query (it returns no columns)", ErrNotReadOnly)
	}
	return truncated, nil
}

// columnCount remembers how many columns the result has.
type columnCount struct {
	RowSink
	n int
}

func (c *columnCount) Columns(names []string) error {
	c.n = len(names)
	return c.RowSink.Columns(names)
}

// CheckLogin runs (once) the check that the data source's login holds none of the privileges
// that reach past the database (ErrPrivilegedLogin); SQLite has none to check. A failure to
// ask is returned and asked again next time.
func (r *ReadOnly) CheckLogin(ctx context.Context) error {
	switch r.kind {
	case config.Postgres:
		return r.login.run(ctx, r.name, func(ctx context.Context) (string, error) { return postgresPrivilege(ctx, r.pg) })
	case config.MySQL:
		conn, _, done, err := r.mysqlSession(ctx)
		if err != nil {
			return err
		}
		defer done()
		return r.checkMySQLLogin(ctx, conn)
	}
	return nil
}

// Close closes the runner's connections.
func (r *ReadOnly) Close() error {
	if r.sqlite != nil {
		r.sqlite.close()
	}
	if r.pg != nil {
		return r.pg.Close()
	}
	return nil
}

// classify names why a call failed: the byte cap, the timeout, the caller gone, or the
// database's own error.
func (r *ReadOnly) classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrResultTooLarge) || isBodyTooLarge(err):
		if !errors.Is(err, ErrResultTooLarge) {
			err = fmt.Errorf("%w of %d bytes: %w", ErrResultTooLarge, r.lim.MaxBytes, err)
		}
		return err
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("%w: %w", context.Canceled, err)
	case ctx.Err() != nil || isStatementTimeout(err) || errors.Is(err, errInterrupted):
		return fmt.Errorf("%w after %s: %w", ErrQueryTimeout, r.lim.Timeout, err)
	}
	return serverError(err)
}

// loginCheck remembers the verdict of the privilege check once it was obtained.
type loginCheck struct {
	mu   sync.Mutex
	done bool
	err  error
}

// run asks probe for the privilege that disqualifies the login ("" when none) unless a verdict
// is known.
func (l *loginCheck) run(ctx context.Context, name string, probe func(context.Context) (string, error)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.err
	}
	priv, err := probe(ctx)
	if err != nil {
		return fmt.Errorf("db: data source %q: checking the login's privileges: %w", name, err)
	}
	l.done = true
	if priv != "" {
		l.err = fmt.Errorf("%w: data source %q logs in with %s, which reads or writes server files "+
			"whatever the transaction mode; give read-only queries a data source whose login has "+
			"only SELECT grants (docs/mcp.md, \"A least-privileged login\")", ErrPrivilegedLogin, name, priv)
	}
	return l.err
}
