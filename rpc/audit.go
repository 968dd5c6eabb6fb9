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
		Principal: auditPrincipal(q.principal),
		ClientIP:  q.clientIP,
		Start:     q.start,
		Duration:  e.clock().Sub(q.start),
		Code:      q.code,
		Status:    q.status,
		OK:        q.code == CodeOK && q.wrote,
	}
	e.cfg.Audit.Audit(context.WithoutCancel(q.ctx), rec)
}

// auditPrincipal returns p, or a copy with ID and Name cut by LogText when either is longer than
// MaxLoggedBytes, so an audit log line stays bounded whatever an authenticator returned.
func auditPrincipal(p *Principal) *Principal {
	if p == nil || len(p.ID) <= MaxLoggedBytes && len(p.Name) <= MaxLoggedBytes {
		return p
	}
	c := *p
	c.ID, c.Name = LogText(p.ID), LogText(p.Name)
	return &c
}
