package mcp

import "context"

// RunReadOnly runs sql through the read-only executor without the text guard, so tests can show
// that the database itself refuses writes.
func (s *Service) RunReadOnly(ctx context.Context, sql string, args ...any) ([]map[string]any, bool, error) {
	res, err := s.runReadOnly(ctx, sql, args)
	return res.Rows, res.Truncated, err
}

// GuardReadOnly is the text guard.
var GuardReadOnly = guardReadOnly

// SetFastPath turns the tools/call fast path on or off, so tests and benchmarks can compare it
// with the SDK's own handling of the same request.
func (s *Service) SetFastPath(on bool) { s.noFastPath.Store(!on) }

// FastCalls is the number of requests the fast path answered.
func (s *Service) FastCalls() int64 { return s.fastCalls.Load() }
