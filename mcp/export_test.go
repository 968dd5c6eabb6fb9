package mcp

import (
	"context"

	"github.com/svc-framework/svc/db"
)

// RunReadOnly runs sql on the tool's read-only runner, as database_query does.
func (s *Service) RunReadOnly(ctx context.Context, sql string, args ...any) (*db.Rows, error) {
	return s.ro.Query(ctx, sql, args, s.cfg.Query.MaxRows)
}

// SetFastPath turns the tools/call fast path on or off, so tests and benchmarks can compare it
// with the SDK's own handling of the same request.
func (s *Service) SetFastPath(on bool) { s.noFastPath.Store(!on) }

// FastCalls is the number of requests the fast path answered.
func (s *Service) FastCalls() int64 { return s.fastCalls.Load() }
