package approval

import (
	"context"
	"encoding/json"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// myResource is approval/my (wire-approval §6.5): the caller's own queries, any authenticated
// principal, no permission. Every list is scoped to the caller (its tasks, its instances, its
// carbon copies) and to its tenant (a super-admin: every tenant, or the tenantId it asks for).
func (s queries) myResource() rpc.Resource {
	return rpc.Resource{Name: "approval/my", Ops: append(s.myQueryOps(), s.myDetailOp())}
}

// myQueryOps are the list and count queries of approval/my; the instance detail joins them on
// the same resource.
func (s queries) myQueryOps() []rpc.Op {
	return []rpc.Op{
		rpc.Handle("find_available_flows", s.findAvailableFlows),
		rpc.Handle("get_start_form", s.getStartForm),
		rpc.Handle("find_initiated", s.findInitiated),
		rpc.Handle("find_pending_tasks", s.findPendingTasks),
		rpc.Handle("find_completed_tasks", s.findCompletedTasks),
		rpc.Handle("find_cc_records", s.findCCRecords),
		rpc.Handle("get_pending_counts", s.getPendingCounts),
	}
}

// AvailableFlowsParams are find_available_flows' params.
type AvailableFlowsParams struct {
	TenantID string            `json:"tenantId"`
	Keyword  string            `json:"keyword"`
	Labels   map[string]string `json:"labels"`
	PageParams
}

// AvailableFlow is a flow the caller may start (my.AvailableFlow).
type AvailableFlow struct {
	FlowID       string            `bun:"flow_id" json:"flowId"`
	FlowCode     string            `bun:"flow_code" json:"flowCode"`
	FlowName     string            `bun:"flow_name" json:"flowName"`
	FlowIcon     *string           `bun:"flow_icon" json:"flowIcon,omitempty"`
	Description  *string           `bun:"description" json:"description,omitempty"`
	Labels       map[string]string `bun:"labels,type:json" json:"labels,omitempty"`
	CategoryID   string            `bun:"category_id" json:"categoryId"`
	CategoryName string            `bun:"category_name" json:"categoryName"`
}

// availableRow is a candidate flow as read: the DTO plus its initiation rule.
type availableRow struct {
	AvailableFlow `bun:",extend"`
	AllowAll      bool `bun:"is_all_initiation_allowed"`
}

// findAvailableFlows answers the flows the caller may start, ordered by name: active, with a
// published version, in the caller's tenant, name containing keyword, every label pair; kept
// when isAllInitiationAllowed or an initiator row matches (start's rule, initiatorAllows).
// Two statements at most: the candidate flows with their category, then the initiator rows of
// the restricted ones in one IN lookup; the rule is applied and the page cut in memory (a
// tenant's flow catalogue is small).
func (s queries) findAvailableFlows(ctx context.Context, c rpc.Call, p AvailableFlowsParams) (*crud.Page[AvailableFlow], error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	var rows []availableRow
	q := s.db.NewSelect().TableExpr("apv_flow AS f").Join("JOIN apv_flow_category AS c ON c.id = f.category_id").
		ColumnExpr("f.id AS flow_id, f.code AS flow_code, f.name AS flow_name, f.icon AS flow_icon").
		ColumnExpr("f.description, f.labels, f.category_id, c.name AS category_name, f.is_all_initiation_allowed").
		Where("f.is_active = ?", true).Where("f.current_version > 0")
	q = cl.tenantFilter(q, "f.tenant_id", p.TenantID)
	if p.Keyword != "" {
		q = q.Where("f.name LIKE ? ESCAPE '!'", containsLike(p.Keyword))
	}
	q = crud.LabelFilter(s.db, q, "f.labels", p.Labels)
	if err := q.OrderExpr("f.name ASC, f.id ASC").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	allowed, err := s.initiationFilter(ctx, c, cl, rows)
	if err != nil {
		return nil, err
	}
	page, size := p.bounds()
	from, to := min((page-1)*size, len(allowed)), min(page*size, len(allowed))
	return &crud.Page[AvailableFlow]{Page: page, Size: size, Total: int64(len(allowed)), Items: allowed[from:to]}, nil
}

// initiationFilter keeps the rows whose initiation rule admits the caller, reading the
// initiator rows of every restricted flow in one statement.
func (s queries) initiationFilter(ctx context.Context, c rpc.Call, cl caller, rows []availableRow) ([]AvailableFlow, error) {
	var restricted []string
	for _, r := range rows {
		if !r.AllowAll {
			restricted = append(restricted, r.FlowID)
		}
	}
	byFlow := map[string][]Initiator{}
	var op UserInfo
	if len(restricted) > 0 {
		var inits []Initiator
		if err := s.db.NewSelect().Model(&inits).Where("flow_id IN (?)", bun.List(restricted)).Scan(ctx); err != nil {
			return nil, err
		}
		for _, in := range inits {
			byFlow[in.FlowID] = append(byFlow[in.FlowID], in)
		}
		var err error
		if op, err = s.operator(ctx, cl); err != nil {
			return nil, err
		}
	}
	out := []AvailableFlow{}
	for _, r := range rows {
		if r.AllowAll || initiatorAllows(byFlow[r.FlowID], c.Principal, op) {
			out = append(out, r.AvailableFlow)
		}
	}
	return out, nil
}

// StartFormParams are get_start_form's params.
type StartFormParams struct {
	TenantID string `json:"tenantId"`
	FlowCode string `json:"flowCode"`
}

// Validate: flowCode is required; an empty tenantId is the caller's tenant (as for start).
func (p *StartFormParams) Validate() error {
	var c rpc.Check
	c.Required("flowCode", p.FlowCode != "")
	return c.Err()
}

// StartForm is what an applicant fills before start (my.StartForm): the flow's identity and
// the published version's form document as deployed.
type StartForm struct {
	FlowID      string          `json:"flowId"`
	FlowCode    string          `json:"flowCode"`
	FlowName    string          `json:"flowName"`
	FlowIcon    *string         `json:"flowIcon,omitempty"`
	Description *string         `json:"description,omitempty"`
	VersionID   string          `json:"versionId"`
	Version     int             `json:"version"`
	FormSchema  json.RawMessage `json:"formSchema,omitempty"`
}

// getStartForm answers the published version's form behind start's gates (initiable: 40001,
// 40002, 40003, 40103).
func (s queries) getStartForm(ctx context.Context, c rpc.Call, p StartFormParams) (*StartForm, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	f, _, err := s.initiable(ctx, c, cl, p.TenantID, p.FlowCode)
	if err != nil {
		return nil, err
	}
	id, err := s.publishedVersion(ctx, f)
	if err != nil {
		return nil, err
	}
	g, err := s.loadGraph(ctx, s.db, id) // both cached: versions never change once deployed
	if err != nil {
		return nil, err
	}
	v := g.version
	return &StartForm{FlowID: f.ID, FlowCode: f.Code, FlowName: f.Name, FlowIcon: f.Icon, Description: f.Description,
		VersionID: v.ID, Version: v.Version, FormSchema: v.FormSchema}, nil
}
