package integration

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// Data-source access modes (wire-integration §4).
const (
	modeReadOnly  = "read_only"
	modeReadWrite = "read_write"
)

// defaultSQLRowCap is the most rows one query may answer (more is an error, not a truncation).
const defaultSQLRowCap = 1000

// ErrTooManyRows: a query of the sql library answered more rows than the cap.
var ErrTooManyRows = errors.New("sql: the query answers more rows than the row cap")

// systemDBs keeps one pool per system with a data source, reopened when the system's data
// source changes and closed at shutdown.
type systemDBs struct {
	mu  sync.Mutex
	dbs map[string]systemDB // by system id
}

type systemDB struct {
	hash [32]byte
	db   *db.DB
}

// dataSourceOf maps a system's data source (password decrypted) to the platform's shape.
func (s *Service) dataSourceOf(ds *DataSourceConfig) (config.DataSource, error) {
	pw, err := s.secrets.Open(ds.Password)
	if err != nil {
		return config.DataSource{}, &kindError{kind: KindConfig, err: detail(ErrInvalidDataSource, err.Error())}
	}
	return config.DataSource{Type: config.DBKind(ds.Kind), Host: ds.Host, Port: ds.Port, User: ds.User, Password: pw,
		Database: ds.Database, Schema: ds.Schema, Path: ds.Path, SSLMode: config.SSLMode(ds.SSLMode), SSLRootCert: ds.SSLRootCert}, nil
}

// systemDB returns the pool of sys's data source, opening it (or reopening it after a change)
// as needed. A data source that cannot be dialed is a transport failure.
func (s *Service) systemDB(ctx context.Context, sys *System) (*db.DB, error) {
	raw, _ := json.Marshal(sys.DataSource)
	h := sha256.Sum256(raw)
	s.sqlDBs.mu.Lock()
	defer s.sqlDBs.mu.Unlock()
	if e, ok := s.sqlDBs.dbs[sys.ID]; ok {
		if e.hash == h {
			return e.db, nil
		}
		e.db.Close()
		delete(s.sqlDBs.dbs, sys.ID)
	}
	ds, err := s.dataSourceOf(sys.DataSource)
	if err != nil {
		return nil, err
	}
	d, err := db.Open(ctx, "integration:"+sys.Code, ds)
	if err != nil {
		if errors.Is(err, db.ErrUnsupportedDBKind) {
			return nil, &kindError{kind: KindConfig, err: detail(ErrInvalidDataSource, "unsupported kind "+sys.DataSource.Kind)}
		}
		return nil, &transportError{err: err}
	}
	s.sqlDBs.dbs[sys.ID] = systemDB{hash: h, db: d}
	return d, nil
}

// closeSystemDBs closes every system pool (module stop).
func (s *Service) closeSystemDBs(context.Context) error {
	s.sqlDBs.mu.Lock()
	defer s.sqlDBs.mu.Unlock()
	for id, e := range s.sqlDBs.dbs {
		e.db.Close()
		delete(s.sqlDBs.dbs, id)
	}
	return nil
}

// bindSQL installs the scoped sql library when the system has a data source (wire-integration
// §8): queryList and queryOne in a read-only transaction the database enforces, execute only
// in read_write mode, "?" placeholders, a row cap.
func (s *Service) bindSQL(r *run, sys *System) error {
	if sys.DataSource == nil {
		return nil
	}
	d, err := s.systemDB(r.ctx, sys)
	if err != nil {
		return err
	}
	lib := &sqlLib{r: r, db: d, writable: sys.DataSource.Mode == modeReadWrite, cap: s.sqlRowCap}
	o := r.vm.NewObject()
	o.Set("queryList", func(c goja.FunctionCall) goja.Value { return lib.query(c, false) })
	o.Set("queryOne", func(c goja.FunctionCall) goja.Value { return lib.query(c, true) })
	o.Set("execute", lib.execute)
	return r.vm.Set("sql", o)
}

type sqlLib struct {
	r        *run
	db       *db.DB
	writable bool
	cap      int
}

func (l *sqlLib) args(c goja.FunctionCall) (string, []any) {
	q := c.Argument(0).String()
	args := make([]any, 0, len(c.Arguments))
	for _, a := range c.Arguments[min(1, len(c.Arguments)):] {
		args = append(args, a.Export())
	}
	return q, args
}

// sqliteUnsafe are what a read-only SQLite query may not contain: SQLite's read-only
// transaction is advisory, so query_only is set on the connection, and these could undo it
// or reach another file.
var sqliteUnsafe = regexp.MustCompile(`(?i)\b(pragma|attach|detach)\b|;\s*\S`)

// query runs a read-only query: every row (queryList, [] when none) or the first (queryOne,
// null when none).
func (l *sqlLib) query(c goja.FunctionCall, one bool) goja.Value {
	q, args := l.args(c)
	ctx := l.r.ctx
	var rows []map[string]any
	err := l.readOnly(ctx, q, func(tx bun.Tx) error {
		res, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer res.Close()
		rows, err = scanRows(res, l.cap, one)
		return err
	})
	if err != nil {
		l.r.rethrow(fmt.Errorf("sql: %w", err))
	}
	if one {
		if len(rows) == 0 {
			return goja.Null()
		}
		raw, _ := json.Marshal(rows[0])
		return l.r.fromJSON(raw)
	}
	if rows == nil {
		rows = []map[string]any{}
	}
	raw, _ := json.Marshal(rows)
	return l.r.fromJSON(raw)
}

// readOnly runs fn in a transaction the database keeps read-only: BEGIN READ ONLY on
// PostgreSQL, START TRANSACTION READ ONLY on MySQL/MariaDB, PRAGMA query_only on SQLite.
func (l *sqlLib) readOnly(ctx context.Context, q string, fn func(tx bun.Tx) error) error {
	if l.db.Kind != config.SQLite {
		tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return fn(tx)
	}
	if sqliteUnsafe.MatchString(q) {
		return errors.New("PRAGMA, ATTACH, DETACH and stacked statements are not allowed")
	}
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = 0")
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// execute runs a statement in read_write mode and answers {rowsAffected}; read_only refuses.
func (l *sqlLib) execute(c goja.FunctionCall) goja.Value {
	if !l.writable {
		panic(l.r.vm.NewTypeError("sql.execute: the data source is read_only"))
	}
	q, args := l.args(c)
	res, err := l.db.ExecContext(l.r.ctx, q, args...)
	if err != nil {
		l.r.rethrow(fmt.Errorf("sql: %w", err))
	}
	n, _ := res.RowsAffected()
	o := l.r.vm.NewObject()
	o.Set("rowsAffected", n)
	return o
}

// scanRows reads rows as column → value maps (bytes as strings, times as RFC 3339); more than
// cap rows is ErrTooManyRows. one stops after the first row.
func scanRows(rows *sql.Rows, cap int, one bool) ([]map[string]any, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for rows.Next() {
		if len(out) >= cap {
			return nil, fmt.Errorf("%w (%d)", ErrTooManyRows, cap)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			switch v := vals[i].(type) {
			case []byte:
				m[c] = string(v)
			case time.Time:
				m[c] = v.UTC().Format(time.RFC3339Nano)
			default:
				m[c] = v
			}
		}
		out = append(out, m)
		if one {
			break
		}
	}
	return out, rows.Err()
}

// probeDatabase opens a throwaway connection to the system's data source and reads the
// server version; unreachable is data, a configuration fault an error.
func (s *Service) probeDatabase(ctx context.Context, sys *System) (*DatabaseProbe, error) {
	ds, err := s.dataSourceOf(sys.DataSource)
	if err != nil {
		return nil, unwrapKind(err)
	}
	probe := &DatabaseProbe{}
	start := s.clock()
	d, err := db.Open(ctx, "integration-probe:"+sys.Code, ds)
	if err == nil {
		defer d.Close()
		q := "SELECT version()"
		if d.Kind == config.SQLite {
			q = "SELECT sqlite_version()"
		}
		err = d.QueryRowContext(ctx, q).Scan(&probe.Version)
	}
	probe.DurationMs = s.clock().Sub(start).Milliseconds()
	if errors.Is(err, db.ErrUnsupportedDBKind) {
		return nil, detail(ErrInvalidDataSource, "unsupported kind "+sys.DataSource.Kind)
	}
	if err != nil {
		probe.Error = redactPassword(err.Error(), ds.Password)
		return probe, nil
	}
	probe.Reachable = true
	return probe, nil
}

func redactPassword(msg, pw string) string {
	if pw == "" {
		return msg
	}
	return strings.ReplaceAll(msg, pw, MaskedSecret)
}
