package approval

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// InitiatedParams are find_initiated's params.
type InitiatedParams struct {
	TenantID string `json:"tenantId"`
	Status   string `json:"status"`
	Keyword  string `json:"keyword"`
	PageParams
}

// MyTasksParams are find_pending_tasks' and find_completed_tasks' params.
type MyTasksParams struct {
	TenantID string `json:"tenantId"`
	PageParams
}

// MyCCParams are find_cc_records' params; isRead filters read (true) or unread (false) copies.
type MyCCParams struct {
	TenantID string `json:"tenantId"`
	IsRead   *bool  `json:"isRead"`
	PageParams
}

// TenantParams carry only the optional tenant (get_pending_counts, get_metrics).
type TenantParams struct {
	TenantID string `json:"tenantId"`
}

// InitiatedInstance is an instance the caller started (my.InitiatedInstance).
type InitiatedInstance struct {
	InstanceID      string    `bun:"instance_id" json:"instanceId"`
	InstanceNo      string    `bun:"instance_no" json:"instanceNo"`
	Title           string    `bun:"title" json:"title"`
	FlowName        string    `bun:"flow_name" json:"flowName"`
	FlowIcon        *string   `bun:"flow_icon" json:"flowIcon,omitempty"`
	Status          string    `bun:"status" json:"status"`
	CurrentNodeName *string   `bun:"current_node_name" json:"currentNodeName,omitempty"`
	CreatedAt       crud.Time `bun:"created_at" json:"createdAt"`
	FinishedAt      crud.Time `bun:"finished_at" json:"finishedAt,omitzero"`
}

// InstanceRef is how the caller's task and copy lists show an instance: its title and number,
// its flow and its applicant.
type InstanceRef struct {
	InstanceID    string   `bun:"instance_id" json:"instanceId"`
	InstanceTitle string   `bun:"instance_title" json:"instanceTitle"`
	InstanceNo    string   `bun:"instance_no" json:"instanceNo"`
	FlowName      string   `bun:"flow_name" json:"flowName"`
	FlowIcon      *string  `bun:"flow_icon" json:"flowIcon,omitempty"`
	Applicant     UserInfo `bun:"embed:applicant_" json:"applicant"`
}

// instanceRefColumns select an InstanceRef from apv_instance i joined to apv_flow f.
const instanceRefColumns = "i.id AS instance_id, i.title AS instance_title, i.instance_no, f.name AS flow_name, " +
	"f.icon AS flow_icon, i.applicant_id, i.applicant_name, i.applicant_department_id, i.applicant_department_name"

// TaskRef is what the caller's task lists show of a task: the task, its instance and node.
type TaskRef struct {
	TaskID string `bun:"task_id" json:"taskId"`
	InstanceRef
	NodeName string `bun:"node_name" json:"nodeName"`
}

// PendingTask is a task awaiting the caller's decision (my.PendingTask).
type PendingTask struct {
	TaskRef
	CreatedAt crud.Time `bun:"created_at" json:"createdAt"`
	Deadline  crud.Time `bun:"deadline" json:"deadline,omitzero"`
	IsTimeout bool      `bun:"is_timeout" json:"isTimeout"`
}

// CompletedTask is a task the caller decided (my.CompletedTask).
type CompletedTask struct {
	TaskRef
	Status     string    `bun:"status" json:"status"`
	FinishedAt crud.Time `bun:"finished_at" json:"finishedAt,omitzero"`
}

// MyCCRecord is a carbon copy delivered to the caller (my.CCRecord).
type MyCCRecord struct {
	CCRecordID string `bun:"cc_record_id" json:"ccRecordId"`
	InstanceRef
	NodeName  *string   `bun:"node_name" json:"nodeName,omitempty"`
	IsRead    bool      `bun:"-" json:"isRead"`
	ReadAt    crud.Time `bun:"read_at" json:"-"`
	CreatedAt crud.Time `bun:"created_at" json:"createdAt"`
}

// PendingCounts are the caller's badges (my.PendingCounts).
type PendingCounts struct {
	PendingTaskCount int64 `json:"pendingTaskCount"`
	UnreadCCCount    int64 `json:"unreadCcCount"`
}

// completedTaskStatuses are the outcomes find_completed_tasks lists (§6.5).
var completedTaskStatuses = []string{TaskApproved, TaskRejected, TaskHandled, TaskTransferred, TaskRolledBack}

// applicantColumns select the instance's applicant snapshot for an embedded UserInfo.
const applicantColumns = "i.applicant_id, i.applicant_name, i.applicant_department_id, i.applicant_department_name"

// findInitiated answers the caller's instances, newest first: status, keyword in the title.
func (s queries) findInitiated(ctx context.Context, c rpc.Call, p InitiatedParams) (*crud.Page[InitiatedInstance], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := cl.tenantFilter(s.db.NewSelect().TableExpr("apv_instance AS i").Where("i.applicant_id = ?", cl.ID), "i.tenant_id", p.TenantID)
	if p.Status != "" {
		q = q.Where("i.status = ?", p.Status)
	}
	if p.Keyword != "" {
		q = q.Where("i.title LIKE ? ESCAPE '!'", containsLike(p.Keyword))
	}
	return scanPage[InitiatedInstance](ctx, q, p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Join("JOIN apv_flow AS f ON f.id = i.flow_id").Join("LEFT JOIN apv_flow_node AS n ON n.id = i.current_node_id").
			ColumnExpr("i.id AS instance_id, i.instance_no, i.title, f.name AS flow_name, f.icon AS flow_icon, i.status").
			ColumnExpr("n.name AS current_node_name, i.created_at, i.finished_at").OrderExpr("i.created_at DESC, i.id DESC")
	})
}

// myTaskQuery selects the caller's tasks of its tenant.
func (s queries) myTaskQuery(cl caller, tenant string) *bun.SelectQuery {
	return cl.tenantFilter(s.db.NewSelect().TableExpr("apv_task AS t").Where("t.assignee_id = ?", cl.ID), "t.tenant_id", tenant)
}

// taskRefColumns joins a task query to the task's instance and flow for TaskRef, reads the
// node's name by a scalar subquery (the node exists: a foreign key; on PostgreSQL a fourth
// joined table costs about half again the plan of the three, and the pending list is planned
// anew on every call), then adds columns (the list's own) in order.
func taskRefColumns(columns, order string) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Join("JOIN apv_instance AS i ON i.id = t.instance_id").Join("JOIN apv_flow AS f ON f.id = i.flow_id").
			ColumnExpr("t.id AS task_id, (SELECT n.name FROM apv_flow_node AS n WHERE n.id = t.node_id) AS node_name").
			ColumnExpr(instanceRefColumns).ColumnExpr(columns).OrderExpr(order)
	}
}

// findPendingTasks answers the caller's pending tasks, newest first.
func (s queries) findPendingTasks(ctx context.Context, c rpc.Call, p MyTasksParams) (*crud.Page[PendingTask], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := s.myTaskQuery(cl, p.TenantID).Where("t.status = ?", TaskPending)
	return scanPage[PendingTask](ctx, q, p.PageParams, taskRefColumns("t.created_at, t.deadline, t.is_timeout", "t.created_at DESC, t.id DESC"))
}

// findCompletedTasks answers the tasks the caller decided (approved, rejected, handled,
// transferred, rolled back), most recently finished first.
func (s queries) findCompletedTasks(ctx context.Context, c rpc.Call, p MyTasksParams) (*crud.Page[CompletedTask], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := s.myTaskQuery(cl, p.TenantID).Where("t.status IN (?)", bun.List(completedTaskStatuses))
	return scanPage[CompletedTask](ctx, q, p.PageParams, taskRefColumns("t.status, t.finished_at", "t.finished_at DESC, t.id DESC"))
}

// findCCRecords answers the carbon copies delivered to the caller, newest first; isRead
// filters read or unread ones.
func (s queries) findCCRecords(ctx context.Context, c rpc.Call, p MyCCParams) (*crud.Page[MyCCRecord], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := s.myCCQuery(cl, p.TenantID)
	switch {
	case p.IsRead == nil:
	case *p.IsRead:
		q = q.Where("cc.read_at IS NOT NULL")
	default:
		q = q.Where("cc.read_at IS NULL")
	}
	page, err := scanPage[MyCCRecord](ctx, q, p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Join("JOIN apv_flow AS f ON f.id = i.flow_id").Join("LEFT JOIN apv_flow_node AS n ON n.id = cc.node_id").
			ColumnExpr("cc.id AS cc_record_id, n.name AS node_name, cc.read_at, cc.created_at").ColumnExpr(instanceRefColumns).
			OrderExpr("cc.created_at DESC, cc.id DESC")
	})
	if err != nil {
		return nil, err
	}
	for i := range page.Items {
		page.Items[i].IsRead = !page.Items[i].ReadAt.IsZero()
	}
	return page, nil
}

// myCCQuery selects the carbon copies delivered to the caller in its tenant (the instance's).
func (s queries) myCCQuery(cl caller, tenant string) *bun.SelectQuery {
	q := s.db.NewSelect().TableExpr("apv_cc_record AS cc").Join("JOIN apv_instance AS i ON i.id = cc.instance_id").
		Where("cc.cc_user_id = ?", cl.ID)
	return cl.tenantFilter(q, "i.tenant_id", tenant)
}

// getPendingCounts counts the caller's pending tasks and unread carbon copies (two statements).
func (s queries) getPendingCounts(ctx context.Context, c rpc.Call, p TenantParams) (*PendingCounts, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	pending, err := s.myTaskQuery(cl, p.TenantID).Where("t.status = ?", TaskPending).Count(ctx)
	if err != nil {
		return nil, err
	}
	unread, err := s.myCCQuery(cl, p.TenantID).Where("cc.read_at IS NULL").Count(ctx)
	if err != nil {
		return nil, err
	}
	return &PendingCounts{PendingTaskCount: int64(pending), UnreadCCCount: int64(unread)}, nil
}
