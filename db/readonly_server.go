package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// wireSlack is what a protocol message may carry beyond the byte cap's values (row framing,
// column descriptions) before the wire guards refuse it.
const wireSlack = 64 << 10

// resetTimeout bounds putting a PostgreSQL connection back in its initial state.
const resetTimeout = 5 * time.Second

// openPostgres opens the runner's own pool: sessions that default to read-only transactions,
// whose driver refuses any protocol message longer than the byte cap (before reading its body),
// and that send every statement through the extended protocol (exec mode: parse, bind, execute
// of an unnamed statement), where the server refuses more than one command.
func (r *ReadOnly) openPostgres(ctx context.Context, ds config.DataSource) error {
	schemaName := ds.Schema
	if schemaName == "" {
		schemaName = "public"
	}
	dsn, err := postgresURL(ds, schemaName)
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = dialTimeout
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.MaxProtocolMessageBodyLen = int(min(r.lim.MaxBytes+wireSlack, math.MaxInt32))
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	r.pg = stdlib.OpenDB(*cfg)
	r.pg.SetMaxOpenConns(readOnlyMaxConns)
	r.pg.SetMaxIdleConns(readOnlyMaxConns)
	r.pg.SetConnMaxIdleTime(serverConnMaxIdleTime)
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := r.pg.PingContext(pingCtx); err != nil {
		_ = r.pg.Close()
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// queryPostgres runs the statement in BEGIN READ ONLY with SET LOCAL statement_timeout, always
// rolled back, then DISCARD ALL puts the session back as it was opened (advisory locks, prepared
// statements, settings); a session that cannot be reset is closed instead.
func (r *ReadOnly) queryPostgres(ctx context.Context, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	if err := r.CheckLogin(ctx); err != nil {
		return false, err
	}
	conn, err := r.pg.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	truncated, err := r.runPostgres(ctx, conn, text, args, maxRows, cap, sink)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resetTimeout)
	defer cancel()
	if _, rerr := conn.ExecContext(rctx, "DISCARD ALL"); rerr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return truncated, err
}

func (r *ReadOnly) runPostgres(ctx context.Context, conn *sql.Conn, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", r.lim.Timeout.Milliseconds())); err != nil {
		return false, err
	}
	rows, err := tx.QueryContext(ctx, pgPlaceholders(text, len(args)), args...)
	if err != nil {
		return false, err
	}
	return scanRows(rows, maxRows, cap, sink)
}

// pgQueryGen rewrites ? placeholders; bun's formatter is what database_query always used to
// find them.
var pgQueryGen = schema.NewQueryGen(pgdialect.New())

// pgPlaceholders turns the ? placeholders of text into $1…$n (bun's reading of ?, \? for a
// literal question mark), so the values travel as bind parameters and never inside the text.
func pgPlaceholders(text string, n int) string {
	if n == 0 {
		return text
	}
	marks := make([]any, n)
	for i := range marks {
		marks[i] = schema.Safe(fmt.Sprintf("$%d", i+1))
	}
	return pgQueryGen.FormatQuery(text, marks...)
}

// serverError classifies the servers' refusals: several commands in one prepared statement
// (PostgreSQL 42601 with that reason; MariaDB answers a plain syntax error), a write in a
// read-only transaction (PostgreSQL 25006, MySQL 1792), an empty query (MySQL 1065).
func serverError(err error) error {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &pe) && pe.Code == "42601" && strings.Contains(pe.Message, "multiple commands"):
		return fmt.Errorf("%w: %w", ErrMultipleStatements, err)
	case errors.As(err, &pe) && pe.Code == "25006", errors.As(err, &me) && me.Number == 1792:
		return fmt.Errorf("%w: %w", ErrNotReadOnly, err)
	case errors.As(err, &me) && me.Number == 1065:
		return fmt.Errorf("%w: %w", ErrEmptyStatement, err)
	}
	return err
}

// postgresPrivilege names the first privilege of the session's login that reaches past the
// database: superuser, CREATEROLE (which before PostgreSQL 16 may grant itself the roles below)
// or membership in pg_read_server_files, pg_write_server_files or pg_execute_server_program
// (COPY to and from files and programs, pg_read_file, lo_import, lo_export).
func postgresPrivilege(ctx context.Context, pool *sql.DB) (string, error) {
	var super, createRole bool
	var member sql.NullString
	err := pool.QueryRowContext(ctx, `SELECT r.rolsuper, r.rolcreaterole,
  (SELECT min(f.rolname) FROM pg_roles f
    WHERE f.rolname IN ('pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program')
      AND pg_has_role(current_user, f.oid, 'MEMBER'))
FROM pg_roles r WHERE r.rolname = current_user`).Scan(&super, &createRole, &member)
	switch {
	case err != nil:
		return "", err
	case super:
		return "a superuser role", nil
	case createRole:
		return "a CREATEROLE role", nil
	case member.Valid:
		return "a member of " + member.String, nil
	}
	return "", nil
}

// isBodyTooLarge reports pgx's refusal of a message longer than MaxProtocolMessageBodyLen.
func isBodyTooLarge(err error) bool {
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	return errors.As(err, &tooLong) || errors.Is(err, errPacketTooLarge)
}

// isStatementTimeout reports the servers' statement-timeout errors: PostgreSQL query_canceled,
// MariaDB max_statement_time (1969), MySQL max_execution_time (3024).
func isStatementTimeout(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57014"
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1969 || me.Number == 3024)
}

// openMySQL keeps the connection settings; every call opens a session of its own (mysqlSession).
// The first session is opened now to see that the server answers.
func (r *ReadOnly) openMySQL(ctx context.Context, ds config.DataSource) error {
	cfg, err := mysqlConfig(ds)
	if err != nil {
		return err
	}
	r.my = cfg
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, _, done, err := r.mysqlSession(pingCtx)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	done()
	return nil
}

// mysqlSession opens a fresh session for one call, closed by done: nothing a statement leaves in
// a session (user variables, named locks, temporary tables, settings) reaches another call. On
// plain connections every read passes a packetGuard (nil over TLS, which the driver starts
// inside the connection, where the framing is not visible).
func (r *ReadOnly) mysqlSession(ctx context.Context) (conn *sql.Conn, guard *packetGuard, done func(), err error) {
	cfg := r.my.Clone()
	cfg.Logger = quietLogger{} // a refused packet is reported by the call, not on stderr
	if cfg.TLS == nil {
		limit := int(min(r.lim.MaxBytes+wireSlack, math.MaxInt32))
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: dialTimeout}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			guard = &packetGuard{Conn: c, limit: limit}
			return guard, nil
		}
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(1)
	conn, err = pool.Conn(ctx)
	if err != nil {
		_ = pool.Close()
		return nil, nil, nil, err
	}
	return conn, guard, func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // never back to a pool
		_ = conn.Close()
		_ = pool.Close()
	}, nil
}

// quietLogger drops the MySQL driver's own log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// queryMySQL runs the statement on a fresh session made read-only (SET SESSION TRANSACTION READ
// ONLY, so DDL, which commits implicitly, is refused too) with a statement timeout, inside START
// TRANSACTION READ ONLY, as a server-side prepared statement (one statement, values bound by
// the server, never interpolated), always rolled back.
func (r *ReadOnly) queryMySQL(ctx context.Context, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	conn, guard, done, err := r.mysqlSession(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	if err := r.checkMySQLLogin(ctx, conn); err != nil {
		return false, err
	}
	truncated, err := r.runMySQL(ctx, conn, text, args, maxRows, cap, sink)
	if err != nil && guard != nil && guard.tripped() {
		return false, fmt.Errorf("%w of %d bytes: %w", ErrResultTooLarge, r.lim.MaxBytes, errPacketTooLarge)
	}
	return truncated, err
}

func (r *ReadOnly) runMySQL(ctx context.Context, conn *sql.Conn, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	timeout := fmt.Sprintf("SET SESSION max_execution_time = %d", r.lim.Timeout.Milliseconds())
	if r.flavor.mariaDB(ctx, conn) {
		timeout = fmt.Sprintf("SET SESSION max_statement_time = %.3f", r.lim.Timeout.Seconds())
	}
	for _, stmt := range []string{"SET SESSION TRANSACTION READ ONLY", timeout} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return false, err
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, text)
	if err != nil {
		return false, err
	}
	defer stmt.Close()
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return false, err
	}
	return scanRows(rows, maxRows, cap, sink)
}

// checkMySQLLogin runs the privilege check of a MySQL login on conn.
func (r *ReadOnly) checkMySQLLogin(ctx context.Context, conn *sql.Conn) error {
	return r.login.run(ctx, r.name, func(ctx context.Context) (string, error) { return mysqlPrivilege(ctx, conn) })
}

// mysqlPrivilege names the first global privilege of the session's grants (the login's, and on
// MariaDB those of its current role) that reaches past the database: FILE (INTO OUTFILE,
// LOAD_FILE, LOAD DATA INFILE), SUPER, or ALL.
func mysqlPrivilege(ctx context.Context, conn *sql.Conn) (string, error) {
	rows, err := conn.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var grant string
		if err := rows.Scan(&grant); err != nil {
			return "", err
		}
		if p := globalPrivilege(grant); p != "" {
			return "the global privilege " + p, nil
		}
	}
	return "", rows.Err()
}

// globalPrivilege returns FILE, SUPER or ALL PRIVILEGES when grant (a line of SHOW GRANTS) grants
// it ON *.*.
func globalPrivilege(grant string) string {
	privs, ok := strings.CutPrefix(grant, "GRANT ")
	if !ok {
		return ""
	}
	privs, _, ok = strings.Cut(privs, " ON *.* TO ")
	if !ok {
		return ""
	}
	for p := range strings.SplitSeq(privs, ",") {
		switch p = strings.TrimSpace(p); p {
		case "FILE", "SUPER", "ALL", "ALL PRIVILEGES":
			return p
		}
	}
	return ""
}

// mysqlFlavor remembers whether the server is MariaDB, which names its statement timeout
// differently.
type mysqlFlavor struct {
	mu    sync.Mutex
	known bool
	maria bool
}

// mariaDB asks the server once; an error leaves the question open and answers MySQL, whose
// timeout statement then fails on MariaDB with a clear message.
func (f *mysqlFlavor) mariaDB(ctx context.Context, conn *sql.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known {
		var version string
		if err := conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err == nil {
			f.known, f.maria = true, strings.Contains(strings.ToLower(version), "mariadb")
		}
	}
	return f.maria
}
