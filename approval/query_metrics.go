package approval

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Metrics are the engine's health and throughput for one tenant, or every tenant for a
// super-admin who asks for none (admin.Metrics). The count maps carry every status of their
// enumeration, zero included.
type Metrics struct {
	TenantID                   string           `json:"tenantId"`
	CapturedAt                 crud.Time        `json:"capturedAt"`
	InstanceCounts             map[string]int64 `json:"instanceCounts"`
	TaskCounts                 map[string]int64 `json:"taskCounts"`
	TimeoutTaskCount           int64            `json:"timeoutTaskCount"`
	AvgCompletionSeconds       float64          `json:"avgCompletionSeconds"`
	PendingBindingFailures     int64            `json:"pendingBindingFailures"`
	BusinessProjectionCounts   map[string]int64 `json:"businessProjectionCounts"`
	PendingBusinessProjections int64            `json:"pendingBusinessProjections"`
}

// Status sets the metrics count (wire-approval §4).
var (
	instanceStatuses   = InstanceStatuses
	taskStatuses       = []string{TaskWaiting, TaskPending, TaskApproved, TaskRejected, TaskHandled, TaskTransferred, TaskRolledBack, TaskCanceled, TaskRemoved, TaskSkipped}
	projectionStatuses = []string{ProjectionPending, ProjectionProcessing, ProjectionApplied, ProjectionFailed}
)

// statusCount is one group of a metrics query: a status, its rows and a per-query sum (the
// completion seconds of final instances, the timed-out tasks).
type statusCount struct {
	Status string          `bun:"status"`
	N      int64           `bun:"n"`
	Sum    sql.NullFloat64 `bun:"extra"`
}

// getMetrics answers the metrics in three grouped statements (instances with their completion
// time, tasks with their timeouts, business projections). avgCompletionSeconds averages
// finished_at − created_at over approved, rejected and terminated instances (-1 when none);
// timeoutTaskCount counts pending tasks the timeout scanner marked timed out; pendingBindingFailures counts
// failed projections (awaiting a retry) and pendingBusinessProjections those not applied yet
// (pending, processing, failed).
func (s queries) getMetrics(ctx context.Context, c rpc.Call, p TenantParams) (*Metrics, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	m := &Metrics{TenantID: cl.listTenant(p.TenantID), CapturedAt: crud.NewTime(s.clock())}
	// SUM skips the NULL of an unfinished instance; only the final statuses' sums are read.
	inst, err := s.countGroups(ctx, cl, p.TenantID, "apv_instance", "SUM("+s.db.SecondsBetween("created_at", "finished_at")+")")
	if err != nil {
		return nil, err
	}
	var done int64
	var secs float64
	m.InstanceCounts = countsOf(instanceStatuses, inst, func(g statusCount) {
		if final(g.Status) {
			done, secs = done+g.N, secs+g.Sum.Float64
		}
	})
	m.AvgCompletionSeconds = -1
	if done > 0 {
		m.AvgCompletionSeconds = secs / float64(done)
	}
	tasks, err := s.countGroups(ctx, cl, p.TenantID, "apv_task", "SUM(CASE WHEN is_timeout = ? THEN 1 ELSE 0 END)", true)
	if err != nil {
		return nil, err
	}
	m.TaskCounts = countsOf(taskStatuses, tasks, func(g statusCount) {
		if g.Status == TaskPending {
			m.TimeoutTaskCount = int64(g.Sum.Float64)
		}
	})
	projs, err := s.countGroups(ctx, cl, p.TenantID, "apv_business_projection", "0")
	if err != nil {
		return nil, err
	}
	m.BusinessProjectionCounts = countsOf(projectionStatuses, projs, func(statusCount) {})
	m.PendingBindingFailures = m.BusinessProjectionCounts[ProjectionFailed]
	m.PendingBusinessProjections = m.BusinessProjectionCounts[ProjectionPending] + m.BusinessProjectionCounts[ProjectionProcessing] +
		m.PendingBindingFailures
	return m, nil
}

// countGroups counts table's rows of the caller's tenant by status, with extra (an aggregate
// expression and its arguments) as each group's sum.
func (s queries) countGroups(ctx context.Context, cl caller, tenant, table, extra string, args ...any) ([]statusCount, error) {
	var rows []statusCount
	q := s.db.NewSelect().TableExpr(table).ColumnExpr("status").ColumnExpr("COUNT(*) AS n").
		ColumnExpr(extra+" AS extra", args...)
	if err := cl.tenantFilter(q, "tenant_id", tenant).Group("status").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("approval: metrics of %s: %w", table, err)
	}
	return rows, nil
}

// countsOf maps groups to counts keyed by every status of statuses, calling each for every group.
func countsOf(statuses []string, groups []statusCount, each func(statusCount)) map[string]int64 {
	out := make(map[string]int64, len(statuses))
	for _, st := range statuses {
		out[st] = 0
	}
	for _, g := range groups {
		out[g.Status] = g.N
		each(g)
	}
	return out
}

// listTenant is the tenant the caller's metrics cover: its own, or for a super-admin the
// one it asks for ("" for every tenant).
func (c caller) listTenant(asked string) string {
	if c.Super {
		return asked
	}
	return c.Tenant
}

// Stats are the module's open work at one moment, across every tenant and node: what the
// operations metrics report (svc_approval_tasks, svc_approval_instances,
// svc_approval_business_projections; docs/operations.md).
// Only open statuses are counted, so the queries stay on the live rows (the partial live-task
// index, the status indexes) however much history the tables hold.
type Stats struct {
	// Tasks counts the live tasks by status: pending (awaiting a decision) and waiting (not
	// yet activated: sequential turns, suspended add-assignee parents). Both keys are present.
	Tasks map[string]int64
	// Instances counts the open instances by status: running and returned (back with the
	// applicant). Both keys are present.
	Instances map[string]int64
	// Projections counts the business projections not applied yet by status: pending,
	// processing and failed (a write that failed — the worker retries it; a terminate's failed
	// write shows here until the host repairs the record). Every key is present.
	Projections map[string]int64
}

// UnappliedProjectionStatuses are the statuses of a business projection whose desired state is
// not in the host's record yet (Stats.Projections).
var UnappliedProjectionStatuses = []string{ProjectionPending, ProjectionProcessing, ProjectionFailed}

// Stats counts the open tasks and instances and the unapplied business projections (three
// grouped queries on the primary database, each on a status index).
func (s *Service) Stats(ctx context.Context) (Stats, error) { return queries{s}.stats(ctx) }

func (s queries) stats(ctx context.Context) (Stats, error) {
	tasks, err := s.countByStatus(ctx, "apv_task", LiveTaskStatuses)
	if err != nil {
		return Stats{}, err
	}
	instances, err := s.countByStatus(ctx, "apv_instance", OpenInstanceStatuses)
	if err != nil {
		return Stats{}, err
	}
	projections, err := s.countByStatus(ctx, "apv_business_projection", UnappliedProjectionStatuses)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Tasks: tasks, Instances: instances, Projections: projections}, nil
}

// countByStatus counts table's rows whose status is one of statuses, every status a key.
func (s queries) countByStatus(ctx context.Context, table string, statuses []string) (map[string]int64, error) {
	var rows []struct {
		Status string `bun:"status"`
		N      int64  `bun:"n"`
	}
	err := s.db.NewSelect().TableExpr(table).ColumnExpr("status").ColumnExpr("COUNT(*) AS n").
		Where("status IN (?)", bun.List(statuses)).Group("status").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("approval: counting %s: %w", table, err)
	}
	out := make(map[string]int64, len(statuses))
	for _, st := range statuses {
		out[st] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
