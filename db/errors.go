package db

import "errors"

// Errors of the read-only query runner (ReadOnly). Each wraps the engine's own explanation where
// there is one, so callers can show it; errors.Is tells the kind.
var (
	// ErrNotReadOnly: the engine refused the statement as something other than a read (a write,
	// DDL, ATTACH, a PRAGMA, a denied function) or it is not a query at all.
	ErrNotReadOnly = errors.New("the statement is not a read-only query")
	// ErrMultipleStatements: text other than white space and comments follows the first
	// statement. The engine decides where the first statement ends.
	ErrMultipleStatements = errors.New("only one statement is allowed")
	// ErrEmptyStatement: the text holds no statement.
	ErrEmptyStatement = errors.New("the text holds no statement")
	// ErrResultTooLarge: the values read exceed the runner's byte cap; the statement was
	// stopped.
	ErrResultTooLarge = errors.New("the result exceeds the byte cap")
	// ErrQueryTimeout: the statement timeout or the runner's deadline stopped the statement.
	ErrQueryTimeout = errors.New("the query timed out")
	// ErrPrivilegedLogin: the login of the runner's data source may read or write server files
	// or run programs (PostgreSQL superuser or pg_read_server_files, pg_write_server_files,
	// pg_execute_server_program; MySQL FILE or SUPER), which a read-only transaction does not
	// stop, so the runner refuses to run anything with it.
	ErrPrivilegedLogin = errors.New("the data source's login is too privileged for read-only queries")
)
