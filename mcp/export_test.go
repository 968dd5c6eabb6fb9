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
