package approval

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Stats are the module's open work at one moment, across every tenant and node: what the
// operations metrics report (svc_approval_tasks, svc_approval_instances; docs/operations.md).
// Only open statuses are counted, so the queries stay on the live rows (the partial live-task
// index, the status indexes) however much history the tables hold.
type Stats struct {
	// Tasks counts the live tasks by status: pending (awaiting a decision) and waiting (not
	// yet activated: sequential turns, suspended add-assignee parents). Both keys are present.
	Tasks map[string]int64
	// Instances counts the open instances by status: running and returned (back with the
	// applicant). Both keys are present.
	Instances map[string]int64
}

// LiveTaskStatuses and OpenInstanceStatuses are the statuses Stats counts.
var (
	LiveTaskStatuses     = []string{TaskPending, TaskWaiting}
	OpenInstanceStatuses = []string{InstanceRunning, InstanceReturned}
)

// Stats counts the open tasks and instances (two grouped queries on the primary database).
func (s *Service) Stats(ctx context.Context) (Stats, error) {
	tasks, err := s.countByStatus(ctx, "apv_task", LiveTaskStatuses)
	if err != nil {
		return Stats{}, err
	}
	instances, err := s.countByStatus(ctx, "apv_instance", OpenInstanceStatuses)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Tasks: tasks, Instances: instances}, nil
}

// countByStatus counts table's rows whose status is one of statuses, every status a key.
func (s *Service) countByStatus(ctx context.Context, table string, statuses []string) (map[string]int64, error) {
	var rows []struct {
		Status string `bun:"status"`
		N      int64  `bun:"n"`
	}
	err := s.db.NewSelect().TableExpr(table).ColumnExpr("status").ColumnExpr("COUNT(*) AS n").
		Where("status IN (?)", bun.In(statuses)).Group("status").Scan(ctx, &rows)
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
