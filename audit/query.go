package audit

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Search filters find_page and stats: every field equal, the time range [fromUnixMs, toUnixMs]
// inclusive, result "ok" or "failed". User and each of Users match a record's user id or user
// name (a call records the principal's id and display name, a failed login the identifier as
// typed), so {"users": [id, username]} finds everything about one account.
type Search struct {
	User       string   `json:"user,omitempty"`
	Users      []string `json:"users,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Resource   string   `json:"resource,omitempty"`
	Action     string   `json:"action,omitempty"`
	Result     string   `json:"result,omitempty"`
	Code       *int     `json:"code,omitempty"`
	NodeID     string   `json:"nodeId,omitempty"`
	RequestID  string   `json:"requestId,omitempty"`
	FromUnixMs *int64   `json:"fromUnixMs,omitempty"`
	ToUnixMs   *int64   `json:"toUnixMs,omitempty"`
}

// Results of Search.Result.
const (
	ResultOK     = "ok"
	ResultFailed = "failed"
)

// apply adds p's conditions to q.
func (p *Search) apply(q *bun.SelectQuery) (*bun.SelectQuery, error) {
	users := p.Users
	if p.User != "" {
		users = append(users[:len(users):len(users)], p.User)
	}
	if len(users) > 0 {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("user_id IN (?)", bun.List(users)).WhereOr("user_name IN (?)", bun.List(users))
		})
	}
	for col, v := range map[string]string{"kind": p.Kind, "resource": p.Resource, "action": p.Action,
		"node_id": p.NodeID, "request_id": p.RequestID} {
		if v != "" {
			q = q.Where("? = ?", bun.Ident(col), v)
		}
	}
	switch p.Result {
	case "":
	case ResultOK:
		q = q.Where("ok = ?", true)
	case ResultFailed:
		q = q.Where("ok = ?", false)
	default:
		return nil, rpc.ErrBadRequest.WithMessage(`result must be "ok" or "failed"`)
	}
	if p.Code != nil {
		q = q.Where("code = ?", *p.Code)
	}
	if p.FromUnixMs != nil {
		q = q.Where("at_unix_ms >= ?", *p.FromUnixMs)
	}
	if p.ToUnixMs != nil {
		q = q.Where("at_unix_ms <= ?", *p.ToUnixMs)
	}
	return q, nil
}

// findPage pages the trail, newest first (meta {page, size}, wire-core §9).
func (s *Service) findPage(ctx context.Context, c rpc.Call, p Search) (*crud.Page[Record], error) {
	m := crud.ReadMeta(c.Meta)
	var rows []row
	q, err := p.apply(s.db.NewSelect().Model(&rows))
	if err != nil {
		return nil, err
	}
	total, err := q.OrderExpr("at_unix_ms DESC, id DESC").Limit(int64(m.Size)).Offset(int64((m.Page - 1) * m.Size)).ScanAndCount(ctx)
	if err != nil {
		return nil, err
	}
	out := &crud.Page[Record]{Page: m.Page, Size: m.Size, Total: int64(total), Items: make([]Record, len(rows))}
	for i := range rows {
		out.Items[i] = rows[i].record()
	}
	return out, nil
}

// IDParams names one record.
type IDParams struct {
	ID string `json:"id" validate:"required"`
}

// get answers one record; an unknown id is 2001 (record not found).
func (s *Service) get(ctx context.Context, _ rpc.Call, p IDParams) (*Record, error) {
	var r row
	err := s.db.NewSelect().Model(&r).Where("id = ?", p.ID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rpc.ErrRecordNotFound
	}
	if err != nil {
		return nil, err
	}
	rec := r.record()
	return &rec, nil
}

// Bounds of stats.
const (
	defaultStatsWindow = 24 * time.Hour
	maxStatsBuckets    = 500
)

// StatsParams are stats' filters (Search, whose time range defaults to the last 24 hours) and
// the bucket width in milliseconds (default: the range cut in 48; at least a second, and at most
// 500 buckets).
type StatsParams struct {
	Search
	BucketMs int64 `json:"bucketMs,omitempty"`
}

// Bucket is the calls and failures of one time bucket, starting at StartUnixMs.
type Bucket struct {
	StartUnixMs int64 `json:"startUnixMs"`
	Calls       int64 `json:"calls"`
	Failures    int64 `json:"failures"`
}

// Stats is stats' answer: the range and bucket width used, and the buckets that hold records,
// in time order (a bucket without records is absent).
type Stats struct {
	FromUnixMs int64    `json:"fromUnixMs"`
	ToUnixMs   int64    `json:"toUnixMs"`
	BucketMs   int64    `json:"bucketMs"`
	Buckets    []Bucket `json:"buckets"`
}

// stats counts calls and failures per time bucket for the console's chart. The bucket start is
// at_unix_ms - at_unix_ms % width, one expression every dialect computes the same way.
func (s *Service) stats(ctx context.Context, _ rpc.Call, p StatsParams) (*Stats, error) {
	to := s.clock().UnixMilli()
	if p.ToUnixMs != nil {
		to = *p.ToUnixMs
	}
	from := to - defaultStatsWindow.Milliseconds()
	if p.FromUnixMs != nil {
		from = *p.FromUnixMs
	}
	if from > to {
		return nil, rpc.ErrBadRequest.WithMessage("fromUnixMs is after toUnixMs")
	}
	width := p.BucketMs
	if width <= 0 {
		width = (to - from) / 48
	}
	width = max(width, 1000, (to-from)/maxStatsBuckets+1)
	p.FromUnixMs, p.ToUnixMs = &from, &to
	q, err := p.apply(s.db.NewSelect().Model((*row)(nil)))
	if err != nil {
		return nil, err
	}
	out := &Stats{FromUnixMs: from, ToUnixMs: to, BucketMs: width, Buckets: []Bucket{}}
	err = q.ColumnExpr("at_unix_ms - at_unix_ms % ? AS start_unix_ms", width).
		ColumnExpr("COUNT(*) AS calls").
		ColumnExpr("SUM(CASE WHEN ok THEN 0 ELSE 1 END) AS failures").
		GroupExpr("at_unix_ms - at_unix_ms % ?", width).OrderExpr("start_unix_ms").Scan(ctx, &out.Buckets)
	return out, err
}

// Sweep is the audit-sweep worker: it deletes the records older than svc.audit.retention.
func (s *Service) Sweep(ctx context.Context) error {
	cutoff := s.clock().Add(-s.cfg.Retention).UnixMilli()
	_, err := s.db.NewDelete().Model((*row)(nil)).Where("at_unix_ms < ?", cutoff).Exec(ctx)
	return err
}

// Permission tokens of sys/audit.
const (
	// PermQuery reads the trail: find_page, get and stats.
	PermQuery = "sys.audit.query"
)

// ResourceName is the trail's /api resource.
const ResourceName = "sys/audit"

// resource is sys/audit: read-only, permission sys.audit.query, without operations while the
// trail is off. Its operations are not audited: reading the trail changes nothing, and an
// audited read would write a record per page the console shows.
func (s *Service) resource() rpc.Resource {
	if !s.Enabled() {
		return rpc.Resource{Name: ResourceName}
	}
	q := rpc.RequiredPermission(PermQuery)
	return rpc.Resource{Name: ResourceName, Ops: []rpc.Op{
		rpc.Handle("find_page", s.findPage, q),
		rpc.Handle("get", s.get, q),
		rpc.Handle("stats", s.stats, q),
	}}
}
