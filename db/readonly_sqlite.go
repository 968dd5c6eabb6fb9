package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The read-only SQLite connection of ReadOnly talks to SQLite's C API (modernc.org/sqlite/lib)
// directly, because database/sql and the driver expose neither an authorizer nor the tail of a
// prepared statement. Every connection is opened SQLITE_OPEN_READONLY and then configured so
// the engine itself refuses what a SELECT does not need:
//
//   - an authorizer that allows only SQLITE_SELECT, SQLITE_READ, SQLITE_RECURSIVE and
//     SQLITE_FUNCTION (except sqliteDeniedFuncs) and denies every other action at prepare time:
//     writes, DDL, ATTACH, DETACH, PRAGMA (reads and writes), VACUUM (INTO), transactions,
//     savepoints, ANALYZE, REINDEX, virtual-table creation;
//   - SQLITE_LIMIT_ATTACHED 0 (ATTACH fails even if the authorizer were bypassed), defensive
//     mode (no writable_schema, no writes to shadow tables or sqlite_dbpage), extension loading
//     off;
//   - SQLITE_LIMIT_LENGTH at the byte cap, so no value (zeroblob, randomblob, printf padding)
//     larger than the cap is ever built;
//   - the statement must be the only one in the text (the engine's tail pointer, not our
//     scanning, says where it ends) and sqlite3_stmt_readonly must hold;
//   - when the call's context ends (timeout or caller gone) a flag the progress handler reads
//     every sqliteProgressOps virtual-machine steps stops the statement, and sqlite3_interrupt
//     stops a step that is under way. The flag also catches a context that ended before the
//     first step, which sqlite3_interrupt alone would miss (the first step clears it).

// sqliteBusyTimeout is how long a read waits for a lock held by a writer (checkpoints).
const sqliteBusyTimeout = 5 * time.Second

// sqliteDeniedFuncs are functions the authorizer refuses although they only appear in a SELECT:
// loading native code and the FTS3 tokenizer pointer function.
var sqliteDeniedFuncs = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// sqliteProgressOps is how many virtual-machine steps pass between calls of the progress handler.
const sqliteProgressOps = 1000

// sqliteAuthorizerPtr and sqliteProgressPtr are the callbacks as the C function pointers SQLite
// calls. A Go func value of a top-level function points to a static funcval, which is what the
// transpiled code calls through (the same representation the driver relies on for its hooks).
var (
	sqliteAuthorizerPtr = funcPointer(sqliteAuthorize)
	sqliteProgressPtr   = funcPointer(sqliteProgress)
)

func funcPointer[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// sqliteAuthorize is the authorizer callback: action codes of a read are allowed, everything
// else is denied (sqlite3_set_authorizer). denied is the connection's flag (a C int) that
// records a denial, because SQLite reports some (functions) as plain SQLITE_ERROR.
func sqliteAuthorize(_ *libc.TLS, denied uintptr, action int32, _, arg2, _, _ uintptr) int32 {
	switch action {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE:
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_FUNCTION:
		if !sqliteDeniedFuncs[strings.ToLower(libc.GoString(arg2))] {
			return sqlite3.SQLITE_OK
		}
	}
	libc.AtomicStoreNInt32(denied, 1, 0)
	return sqlite3.SQLITE_DENY
}

// sqliteProgress is the progress handler: non-zero (stop the statement) once the connection's
// stop flag is set.
func sqliteProgress(_ *libc.TLS, stop uintptr) int32 {
	return libc.AtomicLoadNInt32(stop, 0)
}

// sqliteConn is one read-only connection. It is used by one call at a time; only interrupt may
// run concurrently with the call.
type sqliteConn struct {
	tls    *libc.TLS
	db     uintptr
	denied uintptr // C int set by the authorizer when it denies an action
	stop   uintptr // C int set when the call's context ends
}

// openSQLiteConn opens path read-only and configures the connection as described above.
func openSQLiteConn(path string, maxBytes int64) (*sqliteConn, error) {
	c := &sqliteConn{tls: libc.NewTLS()}
	c.denied, c.stop = c.alloc(4), c.alloc(4)
	libc.AtomicStoreNInt32(c.denied, 0, 0)
	libc.AtomicStoreNInt32(c.stop, 0, 0)
	cpath := c.cBytes(path)
	defer libc.Xfree(c.tls, cpath)
	pdb := c.alloc(ptrSize)
	defer libc.Xfree(c.tls, pdb)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, cpath, pdb, sqlite3.SQLITE_OPEN_READONLY|sqlite3.SQLITE_OPEN_FULLMUTEX, 0)
	c.db = loadPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		err := c.error(rc)
		c.close()
		return nil, err
	}
	if err := c.configure(maxBytes); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *sqliteConn) configure(maxBytes int64) error {
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	for _, cfg := range []struct{ op, on int32 }{
		{sqlite3.SQLITE_DBCONFIG_DEFENSIVE, 1},
		{sqlite3.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
	} {
		if rc := c.dbConfig(cfg.op, cfg.on); rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("sqlite3_db_config(%d): %w", cfg.op, c.error(rc))
		}
	}
	sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_ATTACHED, 0)
	sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_LENGTH, int32(min(maxBytes, math.MaxInt32)))
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(sqliteBusyTimeout.Milliseconds()))
	sqlite3.Xsqlite3_progress_handler(c.tls, c.db, sqliteProgressOps, sqliteProgressPtr, c.stop)
	if rc := sqlite3.Xsqlite3_set_authorizer(c.tls, c.db, sqliteAuthorizerPtr, c.denied); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite3_set_authorizer: %w", c.error(rc))
	}
	return nil
}

// dbConfig calls sqlite3_db_config(db, op, on, (int*)NULL).
func (c *sqliteConn) dbConfig(op, on int32) int32 {
	const slot = 8 // libc.VaList stores every argument in an 8-byte slot
	va := c.alloc(2 * slot)
	defer libc.Xfree(c.tls, va)
	return sqlite3.Xsqlite3_db_config(c.tls, c.db, op, libc.VaList(va, on, uintptr(0)))
}

// alloc allocates n bytes of C memory; the transpiled allocator only fails when the process is
// out of memory, which the Go runtime would not survive either.
func (c *sqliteConn) alloc(n uintptr) uintptr {
	p := libc.Xmalloc(c.tls, uint64(n))
	if p == 0 {
		panic("db: out of C memory")
	}
	return p
}

func (c *sqliteConn) close() {
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	libc.Xfree(c.tls, c.denied)
	libc.Xfree(c.tls, c.stop)
	c.tls.Close()
}

// error turns a result code into an error carrying SQLite's message, classified with this
// package's sentinels where one applies.
func (c *sqliteConn) error(rc int32) error {
	msg := sqlite3ErrStr(c.tls, rc)
	if c.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	}
	err := fmt.Errorf("sqlite: %s (%d)", msg, rc)
	if libc.AtomicLoadNInt32(c.denied, 0) != 0 {
		return fmt.Errorf("%w: %w", ErrNotReadOnly, err)
	}
	switch rc & 0xff {
	case sqlite3.SQLITE_AUTH, sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w: %w", ErrNotReadOnly, err)
	case sqlite3.SQLITE_TOOBIG:
		return fmt.Errorf("%w: %w", ErrResultTooLarge, err)
	case sqlite3.SQLITE_INTERRUPT:
		return fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return err
}

func sqlite3ErrStr(tls *libc.TLS, rc int32) string {
	return libc.GoString(sqlite3.Xsqlite3_errstr(tls, rc))
}

// errInterrupted marks a statement stopped by sqlite3_interrupt; the caller maps it to the
// context's reason.
var errInterrupted = errors.New("interrupted")

// watch stops the connection's statement when ctx ends. The returned function waits for an
// interrupt already under way, so none can reach the connection's next statement.
func (c *sqliteConn) watch(ctx context.Context) func() {
	libc.AtomicStoreNInt32(c.stop, 0, 0)
	done := make(chan struct{})
	db, stop := c.db, c.stop
	cancel := context.AfterFunc(ctx, func() {
		defer close(done)
		libc.AtomicStoreNInt32(stop, 1, 0)
		// sqlite3_interrupt is safe from any thread; a fresh TLS because c.tls belongs to the
		// goroutine running the statement.
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, db)
		tls.Close()
	})
	return func() {
		if !cancel() {
			<-done
		}
	}
}

// query runs the one statement of text with args and reads at most maxRows rows within the
// byte cap.
func (c *sqliteConn) query(ctx context.Context, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	if strings.IndexByte(text, 0) >= 0 {
		return false, fmt.Errorf("%w: the text contains a NUL byte", ErrNotReadOnly)
	}
	defer c.watch(ctx)()
	libc.AtomicStoreNInt32(c.denied, 0, 0)
	stmt, err := c.prepareOne(text)
	if err != nil {
		return false, err
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, stmt)
	if sqlite3.Xsqlite3_stmt_readonly(c.tls, stmt) == 0 {
		return false, fmt.Errorf("%w: sqlite3_stmt_readonly is false", ErrNotReadOnly)
	}
	allocs, err := c.bind(stmt, args)
	defer func() {
		for _, p := range allocs {
			libc.Xfree(c.tls, p)
		}
	}()
	if err != nil {
		return false, err
	}
	return c.read(stmt, maxRows, cap, sink)
}

// prepareOne prepares the first statement of text and makes the engine prepare what follows
// it: a second statement (even one the authorizer refuses) is ErrMultipleStatements; white
// space and comments prepare to nothing. Nothing is stepped before the whole text passed.
func (c *sqliteConn) prepareOne(text string) (uintptr, error) {
	csql := c.cBytes(text)
	defer libc.Xfree(c.tls, csql)
	out := c.alloc(2 * ptrSize)
	defer libc.Xfree(c.tls, out)
	pstmt, ptail := out, out+ptrSize
	var first uintptr
	for off := 0; off < len(text); {
		rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, csql+uintptr(off), int32(len(text)-off+1), 0, pstmt, ptail)
		stmt := loadPtr(pstmt)
		next := int(loadPtr(ptail) - csql)
		switch {
		case rc != sqlite3.SQLITE_OK && first != 0:
			sqlite3.Xsqlite3_finalize(c.tls, first)
			return 0, fmt.Errorf("%w: %w", ErrMultipleStatements, c.error(rc))
		case rc != sqlite3.SQLITE_OK:
			return 0, c.error(rc)
		case stmt != 0 && first != 0:
			sqlite3.Xsqlite3_finalize(c.tls, stmt)
			sqlite3.Xsqlite3_finalize(c.tls, first)
			return 0, ErrMultipleStatements
		case stmt != 0:
			first = stmt
		}
		if next <= off { // no progress: text the engine did not take as statement or comment
			if first != 0 {
				sqlite3.Xsqlite3_finalize(c.tls, first)
			}
			return 0, ErrMultipleStatements
		}
		off = next
	}
	if first == 0 {
		return 0, ErrEmptyStatement
	}
	return first, nil
}

// bind binds args to the statement's parameters in order; their number must match. It returns
// the C memory to free after the statement is finalized.
func (c *sqliteConn) bind(stmt uintptr, args []any) (allocs []uintptr, err error) {
	if n := int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, stmt)); n != len(args) {
		return nil, fmt.Errorf("the statement has %d parameters, %d values were given", n, len(args))
	}
	for i, a := range args {
		idx := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, stmt, idx)
		case string:
			p := c.cBytes(v)
			allocs = append(allocs, p)
			rc = sqlite3.Xsqlite3_bind_text(c.tls, stmt, idx, p, int32(len(v)), 0)
		case []byte:
			p := c.cBytes(string(v))
			allocs = append(allocs, p)
			rc = sqlite3.Xsqlite3_bind_blob(c.tls, stmt, idx, p, int32(len(v)), 0)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, stmt, idx, v)
		case float32:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, stmt, idx, float64(v))
		case bool:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, stmt, idx, map[bool]int64{false: 0, true: 1}[v])
		case time.Time:
			s := v.UTC().Format(sqliteTimeLayout)
			p := c.cBytes(s)
			allocs = append(allocs, p)
			rc = sqlite3.Xsqlite3_bind_text(c.tls, stmt, idx, p, int32(len(s)), 0)
		default:
			n, ok := asInt64(a)
			if !ok {
				return allocs, fmt.Errorf("parameter %d: unsupported type %T", i+1, a)
			}
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, stmt, idx, n)
		}
		if rc != sqlite3.SQLITE_OK {
			return allocs, c.error(rc)
		}
	}
	return allocs, nil
}

// cBytes copies s, NUL-terminated, into C memory (never NULL, even for an empty s).
func (c *sqliteConn) cBytes(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		panic("db: out of C memory")
	}
	return p
}

// ptrSize is the size of a C pointer.
const ptrSize = unsafe.Sizeof(uintptr(0))

// loadPtr reads the C pointer stored at p (an out-parameter of the C API).
func loadPtr(p uintptr) uintptr { return libc.AtomicLoadNUintptr(p, 0) }

// sqliteTimeLayout is how time parameters are bound, the layout of the main pool
// (_time_format=sqlite).
const sqliteTimeLayout = "2006-01-02 15:04:05.999999999-07:00"

// asInt64 converts Go's integer kinds.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

// read steps stmt and hands at most maxRows rows to sink; it reports whether a further row
// existed. Each value's size is charged to cap before it is copied out of SQLite
// (sqlite3_column_bytes does not expand a zeroblob).
func (c *sqliteConn) read(stmt uintptr, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	n := int(sqlite3.Xsqlite3_column_count(c.tls, stmt))
	names := make([]string, n)
	timeCol := make([]bool, n)
	for i := range n {
		names[i] = libc.GoString(sqlite3.Xsqlite3_column_name(c.tls, stmt, int32(i)))
		switch strings.ToUpper(libc.GoString(sqlite3.Xsqlite3_column_decltype(c.tls, stmt, int32(i)))) {
		case "DATE", "DATETIME", "TIMESTAMP":
			timeCol[i] = true
		}
	}
	if err := sink.Columns(names); err != nil {
		return false, err
	}
	row := make([]any, n)
	for rows := 0; ; rows++ {
		switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
		case sqlite3.SQLITE_DONE:
			return false, nil
		case sqlite3.SQLITE_ROW:
		default:
			return false, c.error(rc)
		}
		if rows == maxRows {
			return true, nil
		}
		for i := range row {
			v, err := c.column(stmt, int32(i), timeCol[i], cap)
			if err != nil {
				return false, err
			}
			row[i] = v
		}
		if err := sink.Row(row); err != nil {
			return false, err
		}
	}
}

// column reads one value: int64, float64, string (time.Time for a parsable value of a column
// declared DATE, DATETIME or TIMESTAMP, as the driver does), []byte or nil.
func (c *sqliteConn) column(stmt uintptr, col int32, timeCol bool, cap *byteCap) (any, error) {
	switch sqlite3.Xsqlite3_column_type(c.tls, stmt, col) {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(c.tls, stmt, col), cap.charge(cap.fixed)
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(c.tls, stmt, col), cap.charge(cap.fixed)
	case sqlite3.SQLITE_TEXT:
		n := int64(sqlite3.Xsqlite3_column_bytes(c.tls, stmt, col))
		if err := cap.charge(n); err != nil {
			return nil, err
		}
		s := string(cMem(sqlite3.Xsqlite3_column_text(c.tls, stmt, col), n))
		if timeCol {
			if t, ok := parseSQLiteTime(s); ok {
				return t, nil
			}
		}
		return s, nil
	case sqlite3.SQLITE_BLOB:
		n := int64(sqlite3.Xsqlite3_column_bytes(c.tls, stmt, col))
		if err := cap.charge(n); err != nil {
			return nil, err
		}
		return append([]byte{}, cMem(sqlite3.Xsqlite3_column_blob(c.tls, stmt, col), n)...), nil
	}
	return nil, nil
}

// cMem views n bytes of C memory at p (nil when p is NULL).
func cMem(p uintptr, n int64) []byte {
	if p == 0 || n == 0 {
		return nil
	}
	return libc.GoBytes(p, int(n))
}

// sqliteTimeLayouts are the text forms of times the driver parses in DATE/DATETIME/TIMESTAMP
// columns.
var sqliteTimeLayouts = []string{
	sqliteTimeLayout, "2006-01-02T15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02",
}

func parseSQLiteTime(s string) (time.Time, bool) {
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqliteTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// sqliteSource is the pool of read-only connections to one SQLite file. ReadOnly's semaphore
// bounds how many are in use.
type sqliteSource struct {
	path     string
	maxBytes int64
	mu       sync.Mutex
	idle     []*sqliteConn
	closed   bool
}

func (s *sqliteSource) get() (*sqliteConn, error) {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		c := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	return openSQLiteConn(s.path, s.maxBytes)
}

func (s *sqliteSource) put(c *sqliteConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.close()
		return
	}
	s.idle = append(s.idle, c)
}

func (s *sqliteSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.idle {
		c.close()
	}
	s.idle = nil
}

func (s *sqliteSource) query(ctx context.Context, text string, args []any, maxRows int, cap *byteCap, sink RowSink) (bool, error) {
	c, err := s.get()
	if err != nil {
		return false, err
	}
	defer s.put(c)
	return c.query(ctx, text, args, maxRows, cap, sink)
}
