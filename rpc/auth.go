package rpc

import (
	"context"
	"net/http"
	"time"
)

// Names of the authentication strategies (wire-core §3.1).
const (
	StrategyNone      = "none"
	StrategyBearer    = "bearer"
	StrategyAPIKey    = "api_key"
	StrategyHTTPBasic = "http_basic"
	StrategyIP        = "ip"
)

// AuthRequest is the input of a strategy.
type AuthRequest struct {
	Request  *http.Request
	ClientIP string
	Args     []string // the arguments given with Auth(strategy, args...)
}

// Strategy authenticates a request. It returns the principal, or an *Error (401 codes of
// wire-core §2.3); missing credentials answer ErrUnauthenticated (401/1000). The same registry
// serves /api, the download proxy, /ws and /mcp.
type Strategy interface {
	Name() string
	Authenticate(ctx context.Context, req AuthRequest) (*Principal, error)
}

// PermissionChecker decides whether a principal holds a permission token. A denial, a missing
// checker or a checker error all answer 403/1100 (wire-core §3.3); system principals bypass it.
type PermissionChecker interface {
	HasPermission(ctx context.Context, p *Principal, token string) (bool, error)
}

// AuditRecord describes one call of an audited operation. Its strings are safe to log as they
// are: the request id is bounded where it is accepted, the client IP is a parsed address, and
// the principal's ID and Name are cut by LogText (a copy; the request's principal is untouched).
type AuditRecord struct {
	RequestID string
	Resource  string
	Action    string
	Version   string
	Principal *Principal
	ClientIP  string
	UserAgent string // the User-Agent header; empty for in-process calls
	Start     time.Time
	Duration  time.Duration
	Code      int  // business code of the answer (0 on success)
	Status    int  // HTTP status of the answer
	OK        bool // Code == 0
	// Params and Meta are the request's params and meta, and Result the data of a successful
	// answer (nil otherwise), as decoded JSON with the values of credential-like keys replaced
	// by RedactedAuditValue (AuditRedacts), each bounded by MaxAuditValueBytes
	// (TruncatedAuditValue past it); nil when absent.
	Params, Meta, Result any
}

// AuditSink receives audit records. Implementations must not block the request for long; on the
// server package svc plugs the event bus in here (each record's Event published as
// EventRequestAudit).
type AuditSink interface {
	Audit(ctx context.Context, rec AuditRecord)
}
