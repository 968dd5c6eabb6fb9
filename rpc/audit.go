package rpc

import "context"

// EventRequestAudit is the type of the audit event (wire-runtime §2.9, svc. prefix).
const EventRequestAudit = "svc.api.request.audit"

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
		UserAgent: q.userAgent(),
		Start:     q.start,
		Duration:  e.clock().Sub(q.start),
		Code:      q.code,
		Status:    q.status,
		OK:        q.code == CodeOK && q.wrote,
		Params:    auditJSON(q.env.params.val),
		Meta:      auditJSON(q.env.meta.val),
	}
	if rec.OK {
		rec.Result = auditResult(q.result)
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

// userAgent is the User-Agent of an HTTP request; in-process calls have none.
func (q *request) userAgent() string {
	if q.r == nil {
		return ""
	}
	return q.r.UserAgent()
}

// AuditEvent is the payload of EventRequestAudit (wire-runtime §2.9). UserID is null when the
// call was not authenticated; ElapsedTime is in milliseconds. RequestParams and RequestMeta are
// objects ({} when the request had none), ResultData the data of a successful answer (null
// otherwise), all redacted and bounded as AuditRecord says. The original's resultMessage is not
// carried (the message is rendered in the client's language after the record is taken).
type AuditEvent struct {
	Resource      string  `json:"resource"`
	Action        string  `json:"action"`
	Version       string  `json:"version"`
	UserID        *string `json:"userId"`
	UserAgent     string  `json:"userAgent"`
	RequestID     string  `json:"requestId"`
	RequestIP     string  `json:"requestIp"`
	RequestParams any     `json:"requestParams"`
	RequestMeta   any     `json:"requestMeta"`
	ResultCode    int     `json:"resultCode"`
	ResultData    any     `json:"resultData"`
	ElapsedTime   int64   `json:"elapsedTime"`
}

// EventType returns EventRequestAudit, so subscribers can use event.SubscribeTyped.
func (AuditEvent) EventType() string { return EventRequestAudit }

// Event is rec as the payload of EventRequestAudit. The server's audit sink (package svc) publishes
// it on the event bus; rpc itself knows no bus.
func (rec AuditRecord) Event() AuditEvent {
	ev := AuditEvent{Resource: rec.Resource, Action: rec.Action, Version: rec.Version, UserAgent: rec.UserAgent,
		RequestID: rec.RequestID, RequestIP: rec.ClientIP, RequestParams: objectOrEmpty(rec.Params),
		RequestMeta: objectOrEmpty(rec.Meta), ResultCode: rec.Code, ResultData: rec.Result, ElapsedTime: rec.Duration.Milliseconds()}
	if rec.Principal != nil {
		ev.UserID = &rec.Principal.ID
	}
	return ev
}

// objectOrEmpty is v, or an empty object when v is nil (requestParams and requestMeta are
// objects on the wire).
func objectOrEmpty(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}

// AuditSinks returns the AuditSink that hands each record to every non-nil sink, in order. The
// server uses it so a host sink (svc.WithAuditSink) adds to its bus sink instead of replacing
// it.
func AuditSinks(sinks ...AuditSink) AuditSink {
	var list auditSinks
	for _, s := range sinks {
		if s != nil {
			list = append(list, s)
		}
	}
	return list
}

// auditSinks fans a record out to several sinks.
type auditSinks []AuditSink

// Audit implements AuditSink.
func (l auditSinks) Audit(ctx context.Context, rec AuditRecord) {
	for _, s := range l {
		s.Audit(ctx, rec)
	}
}
