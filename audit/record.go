package audit

import (
	"encoding/json"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// Kinds of record.
const (
	// KindAPI is a call of an /api operation declared with rpc.Audit().
	KindAPI = "api"
	// KindSecurity is a security event (login, failed login, lockout, revocation, logout).
	KindSecurity = "security"
)

// Record is one entry of the trail, as the writer stores it and sys/audit answers it. For a
// KindAPI record Resource, Action, Version, Code and Status are the call's; for a KindSecurity
// record Resource is SecurityResource and Action the event's short name ("login_failed").
type Record struct {
	ID        string    `json:"id"`
	At        time.Time `json:"at"`
	NodeID    string    `json:"nodeId"`
	Kind      string    `json:"kind"`
	RequestID string    `json:"requestId"`
	UserID    string    `json:"userId"`
	UserName  string    `json:"userName"`
	Resource  string    `json:"resource"`
	Action    string    `json:"action"`
	Version   string    `json:"version"`
	ClientIP  string    `json:"clientIp"`
	UserAgent string    `json:"userAgent"`
	Code      int       `json:"code"`
	Status    int       `json:"status"`
	OK        bool      `json:"ok"`
	// DurationMs is the call's duration in milliseconds (0 for security events).
	DurationMs int64 `json:"durationMs"`
	// Detail is what the record carries beyond its columns: for a call its redacted, bounded
	// params, meta and result (rpc.AuditRecord), for a security event its login type,
	// identifier, reason and session or app id. It is a JSON object.
	Detail json.RawMessage `json:"detail"`
}

// SecurityResource is the Resource of KindSecurity records.
const SecurityResource = "security/event"

// apiDetail is the Detail of a KindAPI record.
type apiDetail struct {
	Params any `json:"params"`
	Meta   any `json:"meta"`
	Result any `json:"result"`
}

// entry is a record on its way to the writer: the detail is still a Go value, marshalled by the
// writer goroutine so that the request pays for none of it.
type entry struct {
	rec    Record
	detail any
}

// fromAPI is the entry of an audited call.
func fromAPI(rec rpc.AuditRecord) entry {
	e := entry{rec: Record{Kind: KindAPI, At: rec.Start, RequestID: rec.RequestID, Resource: rec.Resource,
		Action: rec.Action, Version: rec.Version, ClientIP: rec.ClientIP, UserAgent: rec.UserAgent, Code: rec.Code,
		Status: rec.Status, OK: rec.OK, DurationMs: rec.Duration.Milliseconds()},
		detail: apiDetail{Params: rec.Params, Meta: rec.Meta, Result: rec.Result}}
	if rec.Principal != nil {
		e.rec.UserID, e.rec.UserName = rec.Principal.ID, rec.Principal.Name
	}
	return e
}

// Event is a security event as the trail takes it (the composition root maps the security
// module's events to it; audit imports no module). Detail is any JSON-encodable value without
// secrets.
type Event struct {
	// Action is the event's short name ("login_succeeded", "login_failed", "account_locked",
	// "logout", "session_revoked", ...).
	Action    string
	At        time.Time
	RequestID string
	ClientIP  string
	UserID    string
	// UserName is the login identifier as typed, for events about a login.
	UserName string
	// OK is false for failures and refusals (failed login, lockout, refresh reuse).
	OK     bool
	Detail any
}
