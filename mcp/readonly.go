package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/svc-framework/svc/db"
)

// database_query runs on db.ReadOnly (issue #31): the database engine and the driver keep the
// call to one read of the data source svc.mcp.query.data_source, within svc.mcp.query.max_rows,
// max_bytes and timeout. There is no text guard: see db/doc.go, "Read-only queries", for what
// each dialect enforces, and docs/mcp.md for what the tool can and cannot do.

// encodeGrace is how long past the statement timeout the whole call, encoding included, may
// take: the runner's own deadline on PostgreSQL and MySQL ends 2 s past the timeout.
const encodeGrace = 3 * time.Second

// errEncodeTimeout: the call's deadline passed while the rows were being encoded.
var errEncodeTimeout = errors.New("the query timed out while its result was encoded")

// openReadOnly opens the runner on the query data source (Start) and warns when its login is
// one the runner refuses, so the operator learns it at start rather than from the first caller.
func (s *Service) openReadOnly(ctx context.Context) error {
	ro, err := db.OpenReadOnly(ctx, s.cfg.Query.DataSource, s.source, db.ReadOnlyLimits{
		MaxBytes: int64(s.cfg.Query.MaxBytes), Timeout: s.cfg.Query.Timeout})
	if err != nil {
		return fmt.Errorf("mcp: svc.mcp.query.data_source: %w", err)
	}
	s.ro = ro
	if err := ro.CheckLogin(ctx); errors.Is(err, db.ErrPrivilegedLogin) {
		s.log.Warn("mcp: database_query will refuse every call", "error", err)
	}
	return nil
}

// closeReadOnly closes the runner (Stop).
func (s *Service) closeReadOnly(context.Context) error {
	if s.ro == nil {
		return nil
	}
	return s.ro.Close()
}

// runReadOnly runs query with args on the runner.
func (s *Service) runReadOnly(ctx context.Context, query string, args []any) (*db.Rows, error) {
	if s.ro == nil {
		return nil, errors.New("the read-only runner is not open (module not started)")
	}
	return s.ro.Query(ctx, query, args, s.cfg.Query.MaxRows)
}

// encodeRows writes rows as a JSON array of objects keyed by column name, checking ctx between
// rows so that the statement timeout covers the encoding too.
func encodeRows(ctx context.Context, rows *db.Rows) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	obj := make(map[string]any, len(rows.Columns))
	for i, vals := range rows.Values {
		if ctx.Err() != nil {
			return nil, errEncodeTimeout
		}
		clear(obj)
		for j, c := range rows.Columns {
			obj[c] = jsonValue(vals[j])
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
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
