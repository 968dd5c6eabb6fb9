package integration

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
)

// Data-source access modes (wire-integration §4).
const (
	modeReadOnly  = "read_only"
	modeReadWrite = "read_write"
)

// defaultSQLRowCap is the most rows one query may answer (more is an error, not a truncation).
const defaultSQLRowCap = 1000

// defaultSQLByteCap is the most bytes of values one query may read (text and binary values by
// length, other values 8 bytes), counted while the rows are read: the same 4 MiB as
// svc.mcp.query.max_bytes's default. More stops the query with a script error.
const defaultSQLByteCap = 4 << 20

// ErrTooManyRows: a query of the sql library answered more rows than the row cap.
var ErrTooManyRows = errors.New("sql: the query answers more rows than the row cap")

// systemDBs keeps one pool per system with a data source, reopened when the system's data
// source changes and closed at shutdown.
type systemDBs struct {
	mu  sync.Mutex
	dbs map[string]systemDB // by system id
}

// systemDB is a system's handle: the read-only runner of a read_only data source, or the pool
// of a read_write one.
type systemDB struct {
	hash [32]byte
	db   *db.DB
	ro   *db.ReadOnly
}

func (e systemDB) close() {
	if e.ro != nil {
		_ = e.ro.Close()
	}
	if e.db != nil {
		_ = e.db.Close()
	}
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

// systemDB returns the handle of sys's data source, opening it (or reopening it after a change)
// as needed: db.ReadOnly for read_only (the default), a pool for read_write. A data source that
// cannot be dialed is a transport failure.
func (s *Service) systemDB(ctx context.Context, sys *System) (systemDB, error) {
	raw, _ := json.Marshal(sys.DataSource)
	h := sha256.Sum256(raw)
	s.sqlDBs.mu.Lock()
	defer s.sqlDBs.mu.Unlock()
	if e, ok := s.sqlDBs.dbs[sys.ID]; ok {
		if e.hash == h {
			return e, nil
		}
		e.close()
		delete(s.sqlDBs.dbs, sys.ID)
	}
	ds, err := s.dataSourceOf(sys.DataSource)
	if err != nil {
		return systemDB{}, err
	}
	e := systemDB{hash: h}
	name := "integration:" + sys.Code
	if sys.DataSource.Mode == modeReadWrite {
		e.db, err = db.Open(ctx, name, ds)
	} else {
		e.ro, err = db.OpenReadOnly(ctx, name, ds, db.ReadOnlyLimits{MaxBytes: defaultSQLByteCap, Timeout: s.cfg.RunTimeout})
	}
	if err != nil {
		if errors.Is(err, db.ErrUnsupportedDBKind) {
			return systemDB{}, &kindError{kind: KindConfig, err: detail(ErrInvalidDataSource, "unsupported kind "+sys.DataSource.Kind)}
		}
		return systemDB{}, &transportError{err: err}
	}
	s.sqlDBs.dbs[sys.ID] = e
	return e, nil
}

// closeSystemDBs closes every system pool (module stop).
func (s *Service) closeSystemDBs(context.Context) error {
	s.sqlDBs.mu.Lock()
	defer s.sqlDBs.mu.Unlock()
	for id, e := range s.sqlDBs.dbs {
		e.close()
		delete(s.sqlDBs.dbs, id)
	}
	return nil
}

// bindSQL installs the scoped sql library when the system has a data source (wire-integration
// §8): queryList and queryOne with "?" placeholders under a row and a byte cap — on a read_only
// data source through db.ReadOnly (one statement, the database refusing anything but a read),
// on a read_write one in a read-only transaction of its pool —, and execute only in read_write
// mode.
func (s *Service) bindSQL(r *run, sys *System) error {
	if sys.DataSource == nil {
		return nil
	}
	h, err := s.systemDB(r.ctx, sys)
	if err != nil {
		return err
	}
	lib := &sqlLib{r: r, h: h, cap: s.sqlRowCap}
	o := r.vm.NewObject()
	o.Set("queryList", func(c goja.FunctionCall) goja.Value { return lib.query(c, false) })
	o.Set("queryOne", func(c goja.FunctionCall) goja.Value { return lib.query(c, true) })
	o.Set("execute", lib.execute)
	return r.set("sql", o)
}

type sqlLib struct {
	r   *run
	h   systemDB
	cap int
}

func (l *sqlLib) args(c goja.FunctionCall) (string, []any) {
	q := c.Argument(0).String()
	args := make([]any, 0, len(c.Arguments))
	for _, a := range c.Arguments[min(1, len(c.Arguments)):] {
		args = append(args, a.Export())
	}
	return q, args
}

// query runs a read: every row (queryList, [] when none; more than the row cap is
// ErrTooManyRows) or the first (queryOne, null when none).
func (l *sqlLib) query(c goja.FunctionCall, one bool) goja.Value {
	q, args := l.args(c)
	limit := l.cap
	if one {
		limit = 1
	}
	res, err := l.read(l.r.ctx, q, args, limit)
	if err == nil && res.Truncated && !one {
		err = fmt.Errorf("%w (%d)", ErrTooManyRows, l.cap)
	}
	if err != nil {
		l.r.rethrow(fmt.Errorf("sql: %w", err))
	}
	rows := rowMaps(res)
	if one {
		if len(rows) == 0 {
			return goja.Null()
		}
		raw, _ := json.Marshal(rows[0])
		return l.r.fromJSON(raw)
	}
	raw, _ := json.Marshal(rows)
	return l.r.fromJSON(raw)
}

// read runs q on the read-only runner, or on a read_write pool in a read-only transaction
// (db.DB.QueryInReadOnlyTx), which the script could lift with execute anyway.
func (l *sqlLib) read(ctx context.Context, q string, args []any, limit int) (*db.Rows, error) {
	if l.h.ro != nil {
		return l.h.ro.Query(ctx, q, args, limit)
	}
	return l.h.db.QueryInReadOnlyTx(ctx, q, args, limit, defaultSQLByteCap)
}

// rowMaps turns rows into column → value maps: bytes as strings, times as RFC 3339.
func rowMaps(res *db.Rows) []map[string]any {
	out := make([]map[string]any, 0, len(res.Values))
	for _, vals := range res.Values {
		m := make(map[string]any, len(res.Columns))
		for i, c := range res.Columns {
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
	}
	return out
}

// execute runs a statement in read_write mode and answers {rowsAffected}; read_only refuses.
func (l *sqlLib) execute(c goja.FunctionCall) goja.Value {
	if l.h.db == nil {
		panic(l.r.vm.NewTypeError("sql.execute: the data source is read_only"))
	}
	q, args := l.args(c)
	res, err := l.h.db.ExecContext(l.r.ctx, q, args...)
	if err != nil {
		l.r.rethrow(fmt.Errorf("sql: %w", err))
	}
	n, _ := res.RowsAffected()
	o := l.r.vm.NewObject()
	o.Set("rowsAffected", n)
	return o
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
		probe.Version, err = d.ServerVersion(ctx)
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
