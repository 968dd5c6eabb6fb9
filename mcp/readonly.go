package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-framework/svc/db"
)

// database_query runs on db.ReadOnly (issue #31): the database engine and the driver keep the
// call to one read of the data source svc.mcp.query.data_source, within svc.mcp.query.max_rows,
// max_bytes and timeout. There is no text guard: see db/doc.go, "Read-only queries", for what
// each dialect enforces, and docs/mcp.md for what the tool can and cannot do.

// encodeGrace is how long past the statement timeout the whole call — reading, encoding and
// writing the answer — may take: the runner's own deadline on PostgreSQL and MySQL ends 2 s
// past the timeout, and the answer is encoded while the rows are read.
const encodeGrace = 3 * time.Second

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

// runReadOnly runs query with args on the runner, handing the rows to sink as they are read.
func (s *Service) runReadOnly(ctx context.Context, query string, args []any, sink db.RowSink) (truncated bool, err error) {
	if s.ro == nil {
		return false, errors.New("the read-only runner is not open (module not started)")
	}
	return s.ro.QueryTo(ctx, query, args, s.cfg.Query.MaxRows, sink)
}
