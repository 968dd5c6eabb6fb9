package rpc

import (
	"context"
	"log/slog"
)

// authorize is step 5: the operation's RequiredPermission, if any (wire-core §3.3).
func (e *Engine) authorize(q *request) error {
	if q.route.op.Permission == "" {
		return nil
	}
	err := e.CheckPermission(q.ctx, q.principal, q.route.op.Permission)
	if err != nil && !isAccessDenied(err) {
		e.log.LogAttrs(q.ctx, slog.LevelError, "rpc: permission check failed",
			slog.String("request_id", q.id), slog.Any("error", err))
		return ErrAccessDenied
	}
	return err
}

// CheckPermission returns nil when p holds token, and ErrAccessDenied (403/1100) otherwise.
// System principals hold every token. A missing checker denies; a checker error denies too and
// is returned as the cause of the ErrAccessDenied it answers (log it, never send it). Routes
// outside /api use it to apply the same rule.
func (e *Engine) CheckPermission(ctx context.Context, p *Principal, token string) error {
	if p.IsSystem() {
		return nil
	}
	if e.checker == nil || p == nil {
		return ErrAccessDenied
	}
	ok, err := e.checker.HasPermission(ctx, p, token)
	if err != nil {
		return ErrAccessDenied.Wrap(err)
	}
	if !ok {
		return ErrAccessDenied
	}
	return nil
}

// isAccessDenied reports a plain denial (no internal cause worth logging).
func isAccessDenied(err error) bool {
	e, ok := err.(*Error)
	return ok && e == ErrAccessDenied
}
