package approval

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// AdminActionLog is one entry of an instance's audit trail (admin.ActionLog).
type AdminActionLog struct {
	LogID            string     `bun:"log_id" json:"logId"`
	Action           string     `bun:"action" json:"action"`
	NodeID           *string    `bun:"node_id" json:"nodeId,omitempty"`
	TaskID           *string    `bun:"task_id" json:"taskId,omitempty"`
	Operator         UserInfo   `bun:"embed:operator_" json:"operator"`
	TransferTo       *UserInfo  `bun:"-" json:"transferTo,omitempty"`
	RollbackToNodeID *string    `bun:"rollback_to_node_id" json:"rollbackToNodeId,omitempty"`
	AddedAssignees   []UserInfo `bun:"added_assignees,type:json" json:"addedAssignees,omitempty"`
	RemovedAssignees []UserInfo `bun:"removed_assignees,type:json" json:"removedAssignees,omitempty"`
	CCUsers          []UserInfo `bun:"cc_users,type:json" json:"ccUsers,omitempty"`
	Opinion          *string    `bun:"opinion" json:"opinion,omitempty"`
	Attachments      []string   `bun:"attachments,type:json" json:"attachments,omitempty"`
	CreatedAt        crud.Time  `bun:"created_at" json:"createdAt"`
}

// actionLogRow is a log as read: the DTO and the transfer target's columns.
type actionLogRow struct {
	AdminActionLog `bun:",extend"`
	TransferTo     UserInfo `bun:"embed:transfer_to_"`
}

// findActionLogs answers an instance's action logs oldest first. The instance must be of the
// caller's tenant (a super-admin: any, or the tenantId it asks for); another tenant's instance
// answers an empty page, as an unknown one does. Two statements: the count and the page, the
// tenant checked by a join.
func (s *Service) findActionLogs(ctx context.Context, c rpc.Call, p ActionLogsParams) (*crud.Page[AdminActionLog], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := s.db.NewSelect().TableExpr("apv_action_log AS l").Join("JOIN apv_instance AS i ON i.id = l.instance_id").
		Where("l.instance_id = ?", p.InstanceID)
	rows, err := scanPage[actionLogRow](ctx, cl.tenantFilter(q, "i.tenant_id", p.TenantID), p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.ColumnExpr("l.id AS log_id, l.action, l.node_id, l.task_id, l.rollback_to_node_id, l.opinion, l.attachments").
			ColumnExpr("l.operator_id, l.operator_name, l.operator_department_id, l.operator_department_name").
			ColumnExpr("l.transfer_to_id, l.transfer_to_name, l.transfer_to_department_id, l.transfer_to_department_name").
			ColumnExpr("l.added_assignees, l.removed_assignees, l.cc_users, l.created_at").OrderExpr("l.created_at ASC, l.id ASC")
	})
	if err != nil {
		return nil, err
	}
	out := &crud.Page[AdminActionLog]{Page: rows.Page, Size: rows.Size, Total: rows.Total, Items: make([]AdminActionLog, len(rows.Items))}
	for i, r := range rows.Items {
		out.Items[i] = r.AdminActionLog
		if r.TransferTo.ID != "" {
			to := r.TransferTo
			out.Items[i].TransferTo = &to
		}
	}
	return out, nil
}
