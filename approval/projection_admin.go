package approval

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// FindProjectionsParams are find_business_projections' params (wire-approval §6.6): a tenant (a
// super-admin's filter only), a projection status and the page.
type FindProjectionsParams struct {
	TenantID string `json:"tenantId"`
	Status   string `json:"status"`
	PageParams
}

// ProjectionIDParams address a projection (retry_business_projection).
type ProjectionIDParams struct {
	ProjectionID string `json:"projectionId"`
}

// Validate: projectionId is required.
func (p *ProjectionIDParams) Validate() error {
	var c rpc.Check
	c.Required("projectionId", p.ProjectionID != "")
	return c.Err()
}

// BusinessProjection is admin.BusinessProjection (wire-approval §6.6): a projection row as the
// administration pages show it.
type BusinessProjection struct {
	ProjectionID           string            `json:"projectionId"`
	TenantID               string            `json:"tenantId"`
	FlowID                 string            `json:"flowId"`
	FlowVersionID          string            `json:"flowVersionId"`
	OwnerInstanceID        string            `json:"ownerInstanceId"`
	AppliedOwnerInstanceID *string           `json:"appliedOwnerInstanceId,omitempty"`
	BusinessTable          string            `json:"businessTable"`
	RecordKey              map[string]string `json:"recordKey"`
	Consistency            string            `json:"consistency"`
	DesiredStatus          string            `json:"desiredStatus"`
	DesiredStartedAt       crud.Time         `json:"desiredStartedAt"`
	DesiredFinishedAt      *crud.Time        `json:"desiredFinishedAt,omitempty"`
	DesiredRevision        int64             `json:"desiredRevision"`
	AppliedRevision        int64             `json:"appliedRevision"`
	Status                 string            `json:"status"`
	AttemptCount           int               `json:"attemptCount"`
	NextAttemptAt          *crud.Time        `json:"nextAttemptAt,omitempty"`
	LeaseUntil             *crud.Time        `json:"leaseUntil,omitempty"`
	LastError              *string           `json:"lastError,omitempty"`
	AppliedAt              *crud.Time        `json:"appliedAt,omitempty"`
	UpdatedAt              crud.Time         `json:"updatedAt"`
}

// dto is p as admin.BusinessProjection.
func (p *Projection) dto() BusinessProjection {
	table := ""
	if p.Binding != nil {
		table = p.Binding.TableName
	}
	return BusinessProjection{ProjectionID: p.ID, TenantID: p.TenantID, FlowID: p.FlowID, FlowVersionID: p.FlowVersionID,
		OwnerInstanceID: p.OwnerInstanceID, AppliedOwnerInstanceID: p.AppliedOwnerInstanceID, BusinessTable: table,
		RecordKey: p.RecordKey, Consistency: p.Consistency, DesiredStatus: p.DesiredStatus, DesiredStartedAt: p.DesiredStartedAt,
		DesiredFinishedAt: optionalTime(p.DesiredFinishedAt), DesiredRevision: p.DesiredRevision, AppliedRevision: p.AppliedRevision,
		Status: p.Status, AttemptCount: p.AttemptCount, NextAttemptAt: optionalTime(p.NextAttemptAt), LeaseUntil: optionalTime(p.LeaseUntil),
		LastError: p.LastError, AppliedAt: optionalTime(p.AppliedAt), UpdatedAt: p.UpdatedAt}
}

// projectionOps are the business-projection operations of approval/admin (wire-approval §6.6):
// find_business_projections (approval.binding.query) and retry_business_projection
// (approval.binding.retry, audited).
func (s *Service) projectionOps() []rpc.Op {
	return []rpc.Op{
		rpc.Handle("find_business_projections", s.findProjections, rpc.RequiredPermission("approval.binding.query")),
		rpc.Handle("retry_business_projection", s.retryProjection, rpc.RequiredPermission("approval.binding.retry"), rpc.Audit()),
	}
}

// findProjections answers a page of projections, most recently changed first, in the caller's
// tenant (a super-admin: every tenant, or the one it asks for), optionally of one status.
func (s *Service) findProjections(ctx context.Context, c rpc.Call, p FindProjectionsParams) (*crud.Page[BusinessProjection], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	page, size := p.bounds()
	var rows []Projection
	q := cl.tenantFilter(s.db.NewSelect().Model(&rows), "tenant_id", p.TenantID)
	if p.Status != "" {
		q = q.Where("status = ?", p.Status)
	}
	total, err := q.OrderExpr("updated_at DESC, id DESC").Limit(int64(size)).Offset(int64((page - 1) * size)).ScanAndCount(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]BusinessProjection, len(rows))
	for i := range rows {
		items[i] = rows[i].dto()
	}
	return &crud.Page[BusinessProjection]{Page: page, Size: size, Total: int64(total), Items: items}, nil
}

// retryProjection makes a projection due now (status pending, next attempt now, lease released);
// the eventual worker applies it at its next scan. Another tenant's projection is not found
// (40110).
func (s *Service) retryProjection(ctx context.Context, c rpc.Call, p ProjectionIDParams) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		row, err := s.lockProjection(ctx, tx, p.ProjectionID)
		if err != nil {
			return err
		}
		if !cl.sees(row.TenantID) {
			return ErrBindingProjectionNotFound
		}
		now := crud.NewTime(s.clock())
		row.Status, row.NextAttemptAt, row.LeaseUntil, row.UpdatedAt, row.UpdatedBy = ProjectionPending, now, crud.Time{}, now, cl.ID
		_, err = tx.NewUpdate().Model(row).Column("status", "next_attempt_at", "lease_until", "updated_at", "updated_by").WherePK().Exec(ctx)
		return err
	})
}
