package approval

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
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

// inTx runs fn in one transaction of the primary database through event.RunInTx (a batching
// TxScope: the writes fn defers and the outbox rows of its events are flushed before the
// commit, on PostgreSQL in one round trip; nothing is delivered after a rollback), under db's
// transaction policy (db.DB.InTx): read committed, so every statement after the instance lock
// sees the rows committed by the command that held it before; on SQLite one writer at a time in
// the process, so a transaction waiting for the write lock holds no pooled connection the lock
// holder may need for a directory read.
//
// A refusal that carries a cause (an *rpc.Error wrapping one: the business record a binding
// could not write, a directory failure, a malformed businessRef) is logged with the request id
// (explain): the client reads the catalogue's message only.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return s.explain(ctx, event.RunInTx(ctx, s.db, fn))
}

// explain logs, at warning level with the request id, the cause an answered refusal carries
// (an *rpc.Error below 500 that wraps one; the rpc engine logs the causes of 500s itself), and
// returns err unchanged. The cause may name the host's tables and columns, so it goes to the
// server log, never to the client.
func (s *Service) explain(ctx context.Context, err error) error {
	re, ok := rpc.AsError(err)
	if !ok || re.Unwrap() == nil || re.HTTPStatus() >= http.StatusInternalServerError {
		return err
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "approval: request refused", slog.String("request_id", rpc.RequestInfoFrom(ctx).ID),
		slog.Int("code", re.Code), slog.String("key", re.Key), slog.Any("cause", re.Unwrap()))
	return err
}

// publishFlow publishes a flow event of typ inside tx.
func (s *Service) publishFlow(ctx context.Context, tx bun.IDB, typ string, f *Flow, extra func(*FlowEvent)) error {
	e := FlowEvent{FlowID: f.ID, TenantID: f.TenantID, Code: f.Code, Name: f.Name, OccurredTime: s.clock().UTC()}
	if extra != nil {
		extra(&e)
	}
	return s.events.Publish(ctx, event.Named{Type: typ, Payload: e}, event.InTx(tx))
}

// Types of the instance, task, node and cc events (wire-approval §10), published inside the
// transaction of the engine command that causes them.
const (
	EventInstanceCreated     = "approval.instance.created"
	EventInstanceCompleted   = "approval.instance.completed"
	EventInstanceWithdrawn   = "approval.instance.withdrawn"
	EventInstanceRolledBack  = "approval.instance.rolled_back"
	EventInstanceReturned    = "approval.instance.returned"
	EventInstanceResubmitted = "approval.instance.resubmitted"
	EventNodeAutoPassed      = "approval.node.auto_passed"
	EventTaskCreated         = "approval.task.created"
	EventTaskApproved        = "approval.task.approved"
	EventTaskHandled         = "approval.task.handled"
	EventTaskRejected        = "approval.task.rejected"
	EventTaskCanceled        = "approval.task.canceled"
	EventTaskTransferred     = "approval.task.transferred"
	EventCCNotified          = "approval.cc.notified"
)

// InstanceEvent is the payload of the instance, task, node and cc events: the InstanceEventBase
// of the original (instanceId … occurredTime), the TaskEventBase additions (taskId, nodeId,
// nodeName) on task events, and each event's extra fields (§10), absent when they do not apply.
type InstanceEvent struct {
	InstanceID   string    `json:"instanceId"`
	InstanceNo   string    `json:"instanceNo"`
	TenantID     string    `json:"tenantId"`
	Title        string    `json:"title"`
	FlowID       string    `json:"flowId"`
	FlowCode     string    `json:"flowCode"`
	BusinessRef  *string   `json:"businessRef,omitempty"`
	Applicant    UserInfo  `json:"applicant"`
	OccurredTime time.Time `json:"occurredTime"`

	TaskID   string `json:"taskId,omitempty"`
	NodeID   string `json:"nodeId,omitempty"`
	NodeName string `json:"nodeName,omitempty"`

	FinalStatus  string                 `json:"finalStatus,omitempty"`
	FinishedAt   *crud.Time             `json:"finishedAt,omitempty"`
	Reason       string                 `json:"reason,omitempty"`
	Operator     *UserInfo              `json:"operator,omitempty"`
	Opinion      string                 `json:"opinion,omitempty"`
	Assignee     *UserInfo              `json:"assignee,omitempty"`
	Deadline     *crud.Time             `json:"deadline,omitempty"`
	From         *UserInfo              `json:"from,omitempty"`
	To           *UserInfo              `json:"to,omitempty"`
	FromNodeID   string                 `json:"fromNodeId,omitempty"`
	FromNodeName string                 `json:"fromNodeName,omitempty"`
	ToNodeID     string                 `json:"toNodeId,omitempty"`
	ToNodeName   string                 `json:"toNodeName,omitempty"`
	Recipients   []UserInfo             `json:"recipients,omitempty"`
	IsManual     *bool                  `json:"isManual,omitempty"`
	AddType      design.AddAssigneeType `json:"addType,omitempty"`
	Assignees    []UserInfo             `json:"assignees,omitempty"`
	Urger        *UserInfo              `json:"urger,omitempty"`
	Target       *UserInfo              `json:"target,omitempty"`
	Message      string                 `json:"message,omitempty"`
	HoursLeft    *int                   `json:"hoursLeft,omitempty"`
}
