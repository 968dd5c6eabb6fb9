package approval

import (
	"context"
	"database/sql"
	"errors"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Paging of the command-style lists (wire-approval §6): params.page (1-based) and
// params.pageSize (default 20, at most 1000).
const (
	defaultPageSize = 20
	maxPageSize     = 1000
)

// PageParams are the paging fields the original's client folds into params (toPagedParams).
type PageParams struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
}

// bounds returns the page (≥1) and size (default 20, ≤1000).
func (p PageParams) bounds() (page, size int) {
	page, size = max(p.Page, 1), p.PageSize
	if size <= 0 {
		size = defaultPageSize
	}
	return page, min(size, maxPageSize)
}

// FindFlowsParams are find_flows' params: filters and paging in params.
type FindFlowsParams struct {
	TenantID   string            `json:"tenantId"`
	CategoryID string            `json:"categoryId"`
	Keyword    string            `json:"keyword"`
	IsActive   *bool             `json:"isActive"`
	Labels     map[string]string `json:"labels"`
	PageParams
}

// GraphParams are get_graph's params: the flow and, optionally, one of its versions.
type GraphParams struct {
	FlowIDParams
	VersionID string `json:"versionId"`
}

// Graph is get_graph's answer: the flow, the version (the one asked for, else the published
// one; null when there is none) and the version's materialised nodes and edges.
type Graph struct {
	Flow    *Flow    `json:"flow"`
	Version *Version `json:"version"`
	Nodes   []Node   `json:"nodes"`
	Edges   []Edge   `json:"edges"`
}

// findFlows answers a page of flows ordered by name: keyword in the name, category, active flag
// and every label pair; the caller's tenant (a super-admin: every tenant, or the one asked).
func (s *Service) findFlows(ctx context.Context, c rpc.Call, p FindFlowsParams) (*crud.Page[Flow], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	q := cl.tenantFilter(s.db.NewSelect().Model((*Flow)(nil)), "tenant_id", p.TenantID)
	if p.CategoryID != "" {
		q = q.Where("category_id = ?", p.CategoryID)
	}
	if p.Keyword != "" {
		q = q.Where("name LIKE ? ESCAPE '!'", containsLike(p.Keyword))
	}
	if p.IsActive != nil {
		q = q.Where("is_active = ?", *p.IsActive)
	}
	q = crud.LabelFilter(s.db, q, "labels", p.Labels)
	return scanPage[Flow](ctx, q, p.PageParams, func(q *bun.SelectQuery) *bun.SelectQuery { return q.OrderExpr("name ASC, id ASC") })
}

// findVersions answers the flow's versions without payloads, newest first.
func (s *Service) findVersions(ctx context.Context, c rpc.Call, p FlowIDParams) ([]VersionSummary, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	if _, err := s.flowFor(ctx, s.db, cl, p.FlowID, p.TenantID); err != nil {
		return nil, err
	}
	var rows []Version
	err = s.db.NewSelect().Model(&rows).ExcludeColumn("flow_schema", "form_schema", "form_fields", "business_binding").
		Where("flow_id = ?", p.FlowID).Order("version DESC").Scan(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]VersionSummary, len(rows))
	for i, v := range rows {
		out[i] = VersionSummary{ID: v.ID, FlowID: v.FlowID, Version: v.Version, Status: v.Status, Description: v.Description,
			StorageMode: v.StorageMode, PublishedAt: v.PublishedAt, PublishedBy: v.PublishedBy, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}
	}
	return out, nil
}

// findInitiators answers the flow's initiator rules.
func (s *Service) findInitiators(ctx context.Context, c rpc.Call, p FlowIDParams) ([]Initiator, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	if _, err := s.flowFor(ctx, s.db, cl, p.FlowID, p.TenantID); err != nil {
		return nil, err
	}
	rows := []Initiator{}
	err = s.db.NewSelect().Model(&rows).Where("flow_id = ?", p.FlowID).Order("kind", "id").Scan(ctx)
	return rows, err
}

// getGraph answers the flow with a version and its nodes and edges: versionId when given (it
// must belong to the flow, else ErrVersionNotFound), else the published version.
func (s *Service) getGraph(ctx context.Context, c rpc.Call, p GraphParams) (*Graph, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	f, err := s.flowFor(ctx, s.db, cl, p.FlowID, p.TenantID)
	if err != nil {
		return nil, err
	}
	g := &Graph{Flow: f, Nodes: []Node{}, Edges: []Edge{}}
	v := new(Version)
	q := s.db.NewSelect().Model(v).Where("flow_id = ?", f.ID)
	if p.VersionID != "" {
		q = q.Where("id = ?", p.VersionID)
	} else {
		q = q.Where("status = ?", VersionPublished)
	}
	switch err := q.Limit(1).Scan(ctx); {
	case errors.Is(err, sql.ErrNoRows) && p.VersionID != "":
		return nil, ErrVersionNotFound
	case errors.Is(err, sql.ErrNoRows):
		return g, nil
	case err != nil:
		return nil, err
	}
	g.Version = v
	if err := s.db.NewSelect().Model(&g.Nodes).Where("flow_version_id = ?", v.ID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, err
	}
	if err := s.db.NewSelect().Model(&g.Edges).Where("flow_version_id = ?", v.ID).Order("id").Scan(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// Validate: versionId is required.
func (p *VersionParams) Validate() error {
	var c rpc.Check
	c.Required("versionId", p.VersionID != "")
	return c.Err()
}
