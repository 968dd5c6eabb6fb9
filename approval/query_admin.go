package approval

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// adminQueryOps are the supervision queries of approval/admin (wire-approval §6.6); they join
// AdminOps' commands on the same resource. Lists span the caller's tenant; a super-admin's span
// every tenant unless it asks for one.
func (s queries) adminQueryOps() []rpc.Op {
	return []rpc.Op{
		rpc.Handle("find_instances", s.findInstances, rpc.RequiredPermission("approval.instance.query")),
		rpc.Handle("find_tasks", s.findTasks, rpc.RequiredPermission("approval.task.query")),
		rpc.Handle("find_action_logs", s.findActionLogs, rpc.RequiredPermission("approval.action_log.query")),
		rpc.Handle("get_metrics", s.getMetrics, rpc.RequiredPermission("approval.metrics.query")),
	}
}

// AdminInstancesParams are find_instances' params.
type AdminInstancesParams struct {
	TenantID    string `json:"tenantId"`
	ApplicantID string `json:"applicantId"`
	Status      string `json:"status"`
	FlowID      string `json:"flowId"`
	Keyword     string `json:"keyword"`
	PageParams
}

// AdminTasksParams are find_tasks' params.
type AdminTasksParams struct {
	TenantID   string `json:"tenantId"`
	AssigneeID string `json:"assigneeId"`
	InstanceID string `json:"instanceId"`
	Status     string `json:"status"`
	PageParams
}

// ActionLogsParams are find_action_logs' params.
type ActionLogsParams struct {
	InstanceID string `json:"instanceId"`
	TenantID   string `json:"tenantId"`
	PageParams
}

// Validate: instanceId is required.
func (p *ActionLogsParams) Validate() error {
	var c rpc.Check
	c.Required("instanceId", p.InstanceID != "")
	return c.Err()
}

// AdminInstance is an instance in the supervision list (admin.Instance).
type AdminInstance struct {
	InstanceID      string    `bun:"instance_id" json:"instanceId"`
	InstanceNo      string    `bun:"instance_no" json:"instanceNo"`
	Title           string    `bun:"title" json:"title"`
	TenantID        string    `bun:"tenant_id" json:"tenantId"`
	FlowID          string    `bun:"flow_id" json:"flowId"`
	FlowName        string    `bun:"flow_name" json:"flowName"`
	Applicant       UserInfo  `bun:"embed:applicant_" json:"applicant"`
	Status          string    `bun:"status" json:"status"`
	CurrentNodeName *string   `bun:"current_node_name" json:"currentNodeName,omitempty"`
	CreatedAt       crud.Time `bun:"created_at" json:"createdAt"`
	FinishedAt      crud.Time `bun:"finished_at" json:"finishedAt,omitzero"`
}

// AdminTask is a task in the supervision list (admin.Task).
type AdminTask struct {
	TaskID        string    `bun:"task_id" json:"taskId"`
	InstanceID    string    `bun:"instance_id" json:"instanceId"`
	InstanceTitle string    `bun:"instance_title" json:"instanceTitle"`
	FlowName      string    `bun:"flow_name" json:"flowName"`
	NodeName      string    `bun:"node_name" json:"nodeName"`
	Assignee      UserInfo  `bun:"embed:assignee_" json:"assignee"`
	Status        string    `bun:"status" json:"status"`
	CreatedAt     crud.Time `bun:"created_at" json:"createdAt"`
	Deadline      crud.Time `bun:"deadline" json:"deadline,omitzero"`
	FinishedAt    crud.Time `bun:"finished_at" json:"finishedAt,omitzero"`
}

// findInstances answers instances newest first: applicant, status, flow, keyword in the title
// or the instance number.
func (s queries) findInstances(ctx context.Context, c rpc.Call, p AdminInstancesParams) (*crud.Page[AdminInstance], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := cl.tenantFilter(s.db.NewSelect().TableExpr("apv_instance AS i"), "i.tenant_id", p.TenantID)
	q = whereSet(q, [][2]string{{"i.applicant_id", p.ApplicantID}, {"i.status", p.Status}, {"i.flow_id", p.FlowID}})
	if p.Keyword != "" {
		like := containsLike(p.Keyword)
		q = q.Where("(i.title LIKE ? ESCAPE '!' OR i.instance_no LIKE ? ESCAPE '!')", like, like)
	}
	return scanPage[AdminInstance](ctx, q, p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Join("JOIN apv_flow AS f ON f.id = i.flow_id").Join("LEFT JOIN apv_flow_node AS n ON n.id = i.current_node_id").
			ColumnExpr("i.id AS instance_id, i.instance_no, i.title, i.tenant_id, i.flow_id, f.name AS flow_name").
			ColumnExpr(applicantColumns).ColumnExpr("i.status, n.name AS current_node_name, i.created_at, i.finished_at").
			OrderExpr("i.created_at DESC, i.id DESC")
	})
}

// findTasks answers tasks newest first: assignee, instance, status.
func (s queries) findTasks(ctx context.Context, c rpc.Call, p AdminTasksParams) (*crud.Page[AdminTask], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := cl.tenantFilter(s.db.NewSelect().TableExpr("apv_task AS t"), "t.tenant_id", p.TenantID)
	q = whereSet(q, [][2]string{{"t.assignee_id", p.AssigneeID}, {"t.instance_id", p.InstanceID}, {"t.status", p.Status}})
	return scanPage[AdminTask](ctx, q, p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Join("JOIN apv_instance AS i ON i.id = t.instance_id").Join("JOIN apv_flow AS f ON f.id = i.flow_id").
			Join("JOIN apv_flow_node AS n ON n.id = t.node_id").
			ColumnExpr("t.id AS task_id, t.instance_id, i.title AS instance_title, f.name AS flow_name, n.name AS node_name").
			ColumnExpr("t.assignee_id, t.assignee_name, t.assignee_department_id, t.assignee_department_name").
			ColumnExpr("t.status, t.created_at, t.deadline, t.finished_at").OrderExpr("t.created_at DESC, t.id DESC")
	})
}

// whereSet adds column = value for each {column, value} filter whose value is set, in order (so
// the SQL text of one filter combination is always the same).
func whereSet(q *bun.SelectQuery, filters [][2]string) *bun.SelectQuery {
	for _, f := range filters {
		if f[1] != "" {
			q = q.Where("? = ?", bun.Ident(f[0]), f[1])
		}
	}
	return q
}

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
func (s queries) findActionLogs(ctx context.Context, c rpc.Call, p ActionLogsParams) (*crud.Page[AdminActionLog], error) {
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
			ColumnExpr("l.added_assignees, l.removed_assignees, l.cc_users, l.created_at").OrderExpr("l.seq ASC, l.created_at ASC, l.id ASC")
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
