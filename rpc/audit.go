package rpc

import "context"

// audit emits the AuditRecord of an operation declared with Audit() once its answer is written,
// whatever the outcome: 401s, 403s and 429s of an audited operation are recorded too, with a nil
// Principal when authentication failed. Requests that never resolved to an operation (bad
// envelope, 404) are not audited. The sink gets a context that outlives the client connection.
func (e *Engine) audit(q *request) {
	if e.cfg.Audit == nil || q.route == nil || !q.route.op.Audit {
		return
	}
	rt := q.route
	rec := AuditRecord{
		RequestID: q.id,
		Resource:  rt.resource,
		Action:    rt.action,
		Version:   rt.version,
		Principal: q.principal,
		ClientIP:  q.clientIP,
		Start:     q.start,
		Duration:  e.clock().Sub(q.start),
		Code:      q.code,
		Status:    q.status,
		OK:        q.code == CodeOK && q.wrote,
	}
	e.cfg.Audit.Audit(context.WithoutCancel(q.ctx), rec)
}
