package cron

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Paging of find_page (wire-runtime §1.4: meta {page, size}, page ≥ 1, size default 15, max 1000).
const (
	defaultPageSize = 15
	maxPageSize     = 1000
)

// Page is a find_page result.
type Page[T any] struct {
	Page  int   `json:"page"`
	Size  int   `json:"size"`
	Total int64 `json:"total"`
	Items []T   `json:"items"`
}

// pageOf reads {page, size} from the envelope meta; bad or missing values take the defaults.
func pageOf(meta json.RawMessage) (page, size int) {
	var m struct {
		Page int `json:"page"`
		Size int `json:"size"`
	}
	_ = json.Unmarshal(meta, &m) // meta is an object by the engine's check; odd fields fall back
	page, size = max(m.Page, 1), m.Size
	if size <= 0 {
		size = defaultPageSize
	}
	return page, min(size, maxPageSize)
}

// ScheduleSearch filters find_page of schedules: name contains, the others equal.
type ScheduleSearch struct {
	Name      string `json:"name,omitempty"`
	JobName   string `json:"jobName,omitempty"`
	Kind      Kind   `json:"kind,omitempty"`
	IsEnabled *bool  `json:"isEnabled,omitempty"`
}

func (s *Service) findSchedules(ctx context.Context, c rpc.Call, p ScheduleSearch) (*Page[ScheduleJSON], error) {
	page, size := pageOf(c.Meta)
	var rows []scheduleRow
	q := orderBy(s.db.NewSelect().Model(&rows), c.Meta, scheduleSortColumns, "name ASC").Limit(int64(size)).Offset(int64((page - 1) * size))
	if p.Name != "" {
		q = q.Where("name LIKE ? ESCAPE '!'", "%"+crud.EscapeLike(p.Name)+"%")
	}
	if p.JobName != "" {
		q = q.Where("job_name = ?", p.JobName)
	}
	if p.Kind != "" {
		q = q.Where("kind = ?", p.Kind)
	}
	if p.IsEnabled != nil {
		q = q.Where("is_enabled = ?", *p.IsEnabled)
	}
	total, err := q.ScanAndCount(ctx)
	if err != nil {
		return nil, err
	}
	out := &Page[ScheduleJSON]{Page: page, Size: size, Total: int64(total), Items: make([]ScheduleJSON, len(rows))}
	for i := range rows {
		out.Items[i] = s.wire.schedule(rows[i].schedule())
	}
	return out, nil
}

// RunSearch filters sys/cron/run: every field equal, the scheduled range inclusive, in either
// wire shape (*UnixMs wins); a scheduledAtTo date-time string includes its whole second.
type RunSearch struct {
	ID                    string `json:"id,omitempty"`
	ScheduleName          string `json:"scheduleName,omitempty"`
	JobName               string `json:"jobName,omitempty"`
	Status                Status `json:"status,omitempty"`
	NodeID                string `json:"nodeId,omitempty"`
	ScheduledAtFrom       string `json:"scheduledAtFrom,omitempty"`
	ScheduledAtTo         string `json:"scheduledAtTo,omitempty"`
	ScheduledAtFromUnixMs *int64 `json:"scheduledAtFromUnixMs,omitempty"`
	ScheduledAtToUnixMs   *int64 `json:"scheduledAtToUnixMs,omitempty"`
}

// RunResource is sys/cron/run: read-only, permission cron.run.query; no operations while the
// store is disabled.
func (s *Service) RunResource() rpc.Resource {
	if !s.cfg.Enabled {
		return rpc.Resource{Name: RunResource}
	}
	q := rpc.RequiredPermission(PermRunQuery)
	return rpc.Resource{Name: RunResource, Ops: []rpc.Op{
		rpc.Handle("find_page", s.findRuns, q),
		rpc.Handle("find_one", s.findRun, q),
	}}
}

// runQuery applies a RunSearch.
func (s *Service) runQuery(q *bun.SelectQuery, p RunSearch) (*bun.SelectQuery, error) {
	for col, v := range map[string]string{"id": p.ID, "schedule_name": p.ScheduleName, "job_name": p.JobName,
		"status": string(p.Status), "node_id": p.NodeID} {
		if v != "" {
			q = q.Where("? = ?", bun.Ident(col), v)
		}
	}
	from, err := s.wire.instant("scheduledAtFrom", p.ScheduledAtFrom, p.ScheduledAtFromUnixMs)
	if err != nil {
		return nil, rpc.ErrBadRequest.WithMessage(err.Error())
	}
	to, err := s.wire.instant("scheduledAtTo", p.ScheduledAtTo, p.ScheduledAtToUnixMs)
	if err != nil {
		return nil, rpc.ErrBadRequest.WithMessage(err.Error())
	}
	if !from.IsZero() {
		q = q.Where("scheduled_at_unix_ms >= ?", from.UnixMilli())
	}
	if !to.IsZero() && p.ScheduledAtToUnixMs == nil {
		to = to.Add(time.Second - time.Millisecond) // a date-time string names a whole second
	}
	if !to.IsZero() {
		q = q.Where("scheduled_at_unix_ms <= ?", to.UnixMilli())
	}
	return q, nil
}

// findRuns pages the journal, in meta.sort order, then newest claim first.
func (s *Service) findRuns(ctx context.Context, c rpc.Call, p RunSearch) (*Page[RunJSON], error) {
	page, size := pageOf(c.Meta)
	var rows []runRow
	q, err := s.runQuery(s.db.NewSelect().Model(&rows), p)
	if err != nil {
		return nil, err
	}
	q = orderBy(q, c.Meta, runSortColumns, "claimed_at_unix_ms DESC, id DESC")
	total, err := q.Limit(int64(size)).Offset(int64((page - 1) * size)).ScanAndCount(ctx)
	if err != nil {
		return nil, err
	}
	out := &Page[RunJSON]{Page: page, Size: size, Total: int64(total), Items: make([]RunJSON, len(rows))}
	for i := range rows {
		out.Items[i] = s.wire.run(rows[i].run())
	}
	return out, nil
}

// findRun answers one run; none is the record-not-found error (2001).
func (s *Service) findRun(ctx context.Context, _ rpc.Call, p RunSearch) (*RunJSON, error) {
	var row runRow
	q, err := s.runQuery(s.db.NewSelect().Model(&row), p)
	if err != nil {
		return nil, err
	}
	if err := q.OrderExpr("claimed_at_unix_ms DESC, id DESC").Limit(1).Scan(ctx); errors.Is(err, sql.ErrNoRows) {
		return nil, rpc.ErrRecordNotFound
	} else if err != nil {
		return nil, err
	}
	out := s.wire.run(row.run())
	return &out, nil
}
