package svctest

import (
	"context"
	"sync"

	"github.com/svc-framework/svc/rpc"
)

// Audits records the audit records of a test server: pass it to svc.WithAuditSink (through
// WithOptions) and read what the operations marked rpc.Audit recorded.
type Audits struct {
	mu   sync.Mutex
	recs []rpc.AuditRecord
}

var _ rpc.AuditSink = (*Audits)(nil)

// Audit implements rpc.AuditSink.
func (a *Audits) Audit(_ context.Context, rec rpc.AuditRecord) {
	a.mu.Lock()
	a.recs = append(a.recs, rec)
	a.mu.Unlock()
}

// Records returns a copy of every record so far, oldest first.
func (a *Audits) Records() []rpc.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]rpc.AuditRecord(nil), a.recs...)
}

// Last returns the newest successful record of resource and action, or false.
func (a *Audits) Last(resource, action string) (rpc.AuditRecord, bool) {
	recs := a.Records()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Resource == resource && recs[i].Action == action && recs[i].OK {
			return recs[i], true
		}
	}
	return rpc.AuditRecord{}, false
}
