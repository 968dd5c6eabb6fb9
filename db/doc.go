// Package db opens the data sources of svc.data_sources (spec §8.3), owns the transaction policy
// and every dialect difference modules meet at run time (no package outside db, config and the
// test support branches on the database kind; layering_dialect_test.go checks it), and runs each
// module's embedded migrations.
//
// # Kinds
//
// Open supports three kinds, each behind a github.com/uptrace/bun query builder over
// database/sql:
//
//   - postgres: PostgreSQL through pgx (github.com/jackc/pgx/v5/stdlib);
//   - mysql: MySQL and MariaDB through github.com/go-sql-driver/mysql;
//   - sqlite: SQLite through modernc.org/sqlite (pure Go, no cgo).
//
// oracle and sqlserver are declared by the spec but not implemented: Open fails with
// ErrUnsupportedDBKind (the config package's sentinel), as does any other type. OpenAll opens the
// whole map, "primary" first, fails with config.ErrMissingPrimaryDataSource when "primary" is
// absent, and closes what it had opened when any source fails. Every source is pinged within 10 s
// at open. Errors name the data source ("db: data source \"primary\" (postgres): …") and never
// contain its password: drivers leave it out, and Open removes it from the message in case one
// does not. UseQueryHook adds a bun query hook (tracing spans, tests' statement counters) to a
// handle before it is shared with running code: every holder of the *DB sees it.
//
// # Connection settings
//
// Zero fields fall back to the spec's defaults, so a hand-built config.DataSource works without
// the config package's defaults: host 127.0.0.1, port 5432 or 3306, ssl_mode disable, PostgreSQL
// schema public. A host starting with "/" is a unix socket (directory for PostgreSQL, socket
// file for MySQL).
//
// PostgreSQL: the connection URL is built with net/url (user, password and database escaped),
// with sslmode from ssl_mode and sslrootcert from ssl_root_cert (verify-ca and verify-full use
// the system pool when it is empty). The session's search_path is the schema alone, quoted so
// its case is kept, and timezone is UTC. DB.Schema holds the schema in use. Migrate creates the
// schema when it does not exist yet. Queries run in pgx's exec mode (parse, bind and execute of
// an unnamed statement in one round trip): bun writes the values into the SQL text, so pgx's
// default of preparing and caching each statement would cost one more round trip per query and
// a server-side statement per distinct text. A statement without arguments goes through the
// simple protocol (pgx's rule), so one ExecContext may carry several statements separated by
// ";" — event.TxScope.Flush joins a transaction's deferred writes that way.
//
// MySQL/MariaDB: the driver is configured through mysql.Config and a connector, not a DSN
// string, and no TLS configuration is registered globally. parseTime is on, loc and the session
// time_zone are UTC, the connection collation is utf8mb4_unicode_ci. multiStatements stays off:
// Migrate splits files itself, so an injected ";" can never start a second statement. ssl_mode
// require encrypts without verifying the server (like libpq's require, and unlike the driver's
// "preferred", which may fall back to plain text); verify-ca verifies the chain against
// ssl_root_cert (or the system pool) but not the host name; verify-full verifies both.
//
// Network pools are capped at 25 open connections, so a burst cannot exhaust the server's
// max_connections; all 25 may stay idle (a lower idle limit makes a load that keeps more busy
// open and close connections continuously), for at most 5 minutes, and are recycled after an
// hour (TestServerPoolKeepsConnections).
//
// # SQLite
//
// path is required; its directory is created. Every pooled connection runs:
//
//   - busy_timeout(5000): a connection that meets the write lock waits up to 5 s instead of
//     failing at once with SQLITE_BUSY;
//   - journal_mode(WAL): readers do not block the writer nor the writer the readers;
//   - synchronous(NORMAL): durable across application crashes, the usual pairing with WAL;
//   - foreign_keys(1): foreign keys are enforced (SQLite's default is off);
//   - _txlock=immediate: transactions begin with BEGIN IMMEDIATE and take the write lock at the
//     start. A deferred transaction that reads and then writes can fail with SQLITE_BUSY without
//     the busy handler ever being called (its snapshot is stale); an immediate one waits in
//     busy_timeout instead;
//   - _time_format=sqlite: time.Time arguments are stored as sortable "YYYY-MM-DD HH:MM:SS…" text.
//
// Pool strategy: SQLite allows one writer at a time. The pool holds up to 8 connections, so reads
// run beside the writer under WAL. InTx transactions of one process queue on the process's
// writer lock (see Transactions) before they take a connection; autocommit statements and other
// processes queue on the database lock through busy_timeout. A single-connection pool was not
// chosen because a query issued outside a transaction while that transaction is open would wait
// for the pool forever; with this strategy it reads, or waits at most 5 s to write. The cost: a
// write transaction held longer than 5 s makes autocommit writers and other processes fail with
// SQLITE_BUSY, so keep write transactions short (as on any database).
//
// # Transactions
//
// (*DB).InTx is the one transaction runner of the house (event.RunInTx, every module and the
// outbox relay go through it; bun's RunInTx with options is not used outside db). It runs a
// function in one transaction, committed on nil and rolled back on error or panic, under one
// policy for every module:
//
//   - PostgreSQL and MySQL/MariaDB: READ COMMITTED. Every write transaction of the modules is
//     "lock, then read, then write": it locks the rows it decides on (ForUpdate, or
//     ForUpdateSkipLocked for leases) and must see, after the lock, what the previous holder
//     committed. MySQL's default REPEATABLE READ keeps the snapshot of the first read, taken
//     before the lock was granted, and takes next-key (gap) locks that made concurrent lease and
//     finish transactions deadlock on MariaDB; PostgreSQL's default is READ COMMITTED already.
//     SERIALIZABLE was not chosen: every transaction could then fail with a serialization error
//     and would have to be repeated, and not every function is safe to repeat (it may act
//     outside the database), while the explicit row locks already serialise the decisions that
//     matter.
//   - SQLite: a single writer. The transaction begins with BEGIN IMMEDIATE (_txlock=immediate)
//     and, before that, waits for the process's writer lock of the database file (one per file,
//     shared by every DB opened on it; the wait ends with ctx). Without it, writers waiting in
//     BEGIN IMMEDIATE each hold a pooled connection, and the lock holder can starve for one (a
//     directory read inside a command) until busy_timeout. A call made with the context of a
//     transaction that holds the lock does not wait for it again (it would wait for itself).
//
// InTx makes one attempt and never retries, because the function may have effects outside the
// database. InTxRetrying runs it again (TxAttempts in all) while IsRetryable holds (a deadlock
// victim or serialization failure on PostgreSQL, a deadlock or lock wait timeout on
// MySQL/MariaDB); Retrying is the same loop around a caller's attempt (storage sets up an event
// scope per attempt). IsBusy recognises SQLite's busy and locked errors (another process held
// the lock past busy_timeout), which a caller may leave to its next tick.
//
// # Dialect policy
//
// What differs between the dialects at run time is asked of db by what it does, never by the
// kind (migrations directories per dialect are data, selected by Migrate):
//
//   - locking: ForUpdate (FOR UPDATE; nothing on SQLite, whose InTx transactions hold the write
//     lock from the start), SkipLocked and ForUpdateSkipLocked (FOR UPDATE SKIP LOCKED, MariaDB
//     10.6 or later; nothing on SQLite), for leases shared by several nodes;
//   - SQL: OnConflictUpdate (upsert: ON CONFLICT … DO UPDATE or ON DUPLICATE KEY UPDATE),
//     WhereJSONText (a top-level JSON key's text), SecondsBetween (seconds between two times),
//     SQLType with TypeTimestamp, TypeJSON and TypeText (runtime DDL column types);
//   - capabilities: UpdateReturning (PostgreSQL's UPDATE … RETURNING and data-modifying WITH,
//     for one-statement claims), MultiStatementExec (several statements in one exec), Notifies
//     with Listen and Notify (LISTEN/NOTIFY), AsyncCommitConn and DiscardConn (a session with
//     synchronous_commit off, never pooled again);
//   - other: QueryInReadOnlyTx (someone else's SQL in a read-only transaction of a writable
//     pool), ServerVersion, SystemName (OpenTelemetry db.system.name), DeclaredKind (the spec's
//     data source types), and Variant over Variants for code written once per dialect as a
//     whole (the schema module's catalog queries);
//   - errors: IsUniqueViolation, IsForeignKeyViolation, IsUndefinedObject, IsRetryable and
//     IsBusy classify driver errors of all three kinds, through any %w wrapping.
//
// # Read-only queries
//
// ReadOnly (OpenReadOnly) runs SQL someone else wrote — MCP's database_query, the integration
// scripts' read_only data sources — on connections of its own, never the application's pool.
// Read-only is enforced by the engine and the driver, not by reading the SQL (issue #31: a text
// guard that treated \ in a literal as an escape let four statements through on SQLite):
//
//   - one statement per call, decided by the engine after preparing: SQLite's tail pointer
//     (what follows must prepare to nothing, i.e. be white space or comments), PostgreSQL's
//     extended protocol (the server refuses several commands in one prepared statement),
//     MySQL's server-side prepared statement (the same; multiStatements is off);
//   - SQLite: SQLITE_OPEN_READONLY through the C API (modernc.org/sqlite/lib), an authorizer
//     that allows only SQLITE_SELECT, SQLITE_READ, SQLITE_RECURSIVE and SQLITE_FUNCTION (not
//     load_extension nor fts3_tokenizer) and denies everything else at prepare time (writes,
//     DDL, ATTACH, DETACH, every PRAGMA, VACUUM INTO, transactions), SQLITE_LIMIT_ATTACHED 0,
//     defensive mode, extension loading off, SQLITE_LIMIT_LENGTH at the byte cap,
//     sqlite3_stmt_readonly, and a progress handler plus sqlite3_interrupt when the context
//     ends;
//   - PostgreSQL: sessions with default_transaction_read_only, each call BEGIN READ ONLY with
//     SET LOCAL statement_timeout, always rolled back, then DISCARD ALL (session settings,
//     advisory locks, prepared statements); ? placeholders become $n (bun's reading of ?), so
//     values are bind parameters; pgx refuses a protocol message longer than the byte cap
//     before reading its body;
//   - MySQL/MariaDB: a fresh session per call (nothing a statement leaves in a session reaches
//     another call), SET SESSION TRANSACTION READ ONLY, max_statement_time/max_execution_time,
//     START TRANSACTION READ ONLY, a server-side prepared statement, rolled back; on plain
//     connections packetGuard follows the protocol's framing and fails a packet longer than
//     the byte cap before the driver allocates for it;
//   - PostgreSQL and MySQL: CheckLogin refuses (ErrPrivilegedLogin, on every call) a login
//     that is a superuser, has CREATEROLE, is a member of pg_read_server_files,
//     pg_write_server_files or pg_execute_server_program, or holds FILE, SUPER or ALL on *.*:
//     a read-only transaction does not stop those from reading or writing server files;
//   - a statement that returns no columns (SET, COMMIT, PREPARE) ran harmlessly and is then
//     refused as ErrNotReadOnly;
//   - every value is charged to the byte cap as it is read (ErrResultTooLarge; SQLite before
//     copying, by sqlite3_column_bytes), rows past maxRows are not fetched (Truncated), and the
//     timeout is the database's statement timeout (ErrQueryTimeout).
//
// Query keeps the rows (values charged by length, fixed-size values 8 bytes). QueryTo hands each
// row to a RowSink as it is read and keeps none (issue #42): the sink — MCP's encoder — bounds
// what it builds itself and stops the statement with its error; the runner still charges text
// and binary values by length over the call (a lower bound of any encoding of them), so no row
// larger than the cap is built before the sink sees it. ScanRows is Query's row and
// byte-capped scanning for callers that run their own statements.
//
// # Migrations
//
// A module embeds its migrations as a tree with one directory per dialect:
//
//	migrations/postgres/001_init.sql
//	migrations/mysql/001_init.sql
//	migrations/sqlite/001_init.sql
//
// and passes Migrations{Module: "storage", FS: sub-tree} to Migrate. Rules, checked for every set
// before anything is applied (violations wrap ErrInvalidMigrations and name the file):
//
//   - a dialect directory holds only files named NNN_name.sql: at least three digits, "_", a
//     name of letters, digits, "_" and "-";
//   - versions are numbered 1, 2, 3, … with no gap and no duplicate (001_a.sql and 0001_b.sql
//     are both version 1);
//   - each module appears once in a call, and the directory of the database's dialect exists.
//
// Applied versions are recorded in one table, created on first use in the database (on
// PostgreSQL in the data source's schema):
//
//	svc_schema_migrations(module, version, name, applied_at)  PRIMARY KEY (module, version)
//
// applied_at is the database's clock in UTC. Sets are applied in the order given, files in version
// order; versions already recorded are skipped, so a re-run is a no-op. Recorded versions that
// have no file (a database migrated by a newer release) are left alone, so an older node can
// still start during a rolling upgrade. Every recorded version is read in one query first: when
// nothing is pending — every start of an existing database — Migrate returns there, without the
// migration lock or any DDL (the start of the shipped binary with every module on spends 0.3 ms
// here, bench/startup).
//
// Each file is applied on its own:
//
//   - PostgreSQL and SQLite have transactional DDL: the file runs as one multi-statement exec
//     inside a transaction together with its version row, so it is applied completely or not at
//     all. Dollar-quoted bodies and triggers are fine.
//   - MySQL/MariaDB commit DDL implicitly. The file is split into statements, run one by one,
//     and its version row is written after the last. The split rule: a statement ends at a line
//     whose last non-blank character is ";"; lines that are only a "--" or "#" comment are
//     dropped; text after the last ";" is a final statement. There is no DELIMITER, so no stored
//     procedures or compound trigger bodies, and a string literal must not end a line with ";".
//     When a statement fails, the earlier statements of that file stay applied and the file is
//     not recorded: prefer one DDL statement per MySQL file, or statements that can be re-run
//     (IF NOT EXISTS).
//
// A failing file stops the run. Files before it stay applied and recorded, and the error names
// the data source, the module and the file (and on MySQL the statement number).
//
// Concurrent runs (several nodes starting together) apply each file once. PostgreSQL: the run
// holds pg_advisory_lock on one connection, keyed by the schema. MySQL: the run holds GET_LOCK on
// a name derived from the database. SQLite: each file's transaction is BEGIN IMMEDIATE and checks
// the version again inside it, so the database write lock serialises runs across processes.
//
// Pending lists what Migrate would apply, in order, without locking or creating anything (for
// progress output such as `svc migrate`).
package db
