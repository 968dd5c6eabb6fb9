package approval

import (
	"context"
	"time"

	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// Types of the flow events (wire-approval §10), published inside the transaction of the change.
const (
	EventFlowCreated   = "approval.flow.created"
	EventFlowUpdated   = "approval.flow.updated"
	EventFlowDeployed  = "approval.flow.deployed"
	EventFlowToggled   = "approval.flow.toggled"
	EventFlowPublished = "approval.flow.published"
)

// FlowEvent is the payload of the approval.flow.* events: the FlowEventBase of the original plus
// each event's extra fields (categoryId on created, versionId and version on deployed, versionId
// on published, isActive on toggled).
type FlowEvent struct {
	FlowID       string    `json:"flowId"`
	TenantID     string    `json:"tenantId"`
	Code         string    `json:"code"`
	Name         string    `json:"name"`
	OccurredTime time.Time `json:"occurredTime"`
	CategoryID   string    `json:"categoryId,omitempty"`
	VersionID    string    `json:"versionId,omitempty"`
	Version      int       `json:"version,omitempty"`
	IsActive     *bool     `json:"isActive,omitempty"`
}

// inTx runs fn in one transaction of the primary database with an event.TxScope in its context:
// the events fn publishes are delivered after the commit (tx_memory) or relayed from their
// outbox rows, and nothing is delivered after a rollback.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	ctx, scope := event.NewTxScope(ctx)
	if err := s.db.RunInTx(ctx, nil, fn); err != nil {
		scope.Discard()
		return err
	}
	scope.Commit(context.WithoutCancel(ctx))
	return nil
}

// publishFlow publishes a flow event of typ inside tx.
func (s *Service) publishFlow(ctx context.Context, tx bun.IDB, typ string, f *Flow, extra func(*FlowEvent)) error {
	e := FlowEvent{FlowID: f.ID, TenantID: f.TenantID, Code: f.Code, Name: f.Name, OccurredTime: s.clock().UTC()}
	if extra != nil {
		extra(&e)
	}
	return s.events.Publish(ctx, event.Named{Type: typ, Payload: e}, event.InTx(tx))
}
