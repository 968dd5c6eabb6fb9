package approval

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"text/template"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// InitiatorParams is one initiator rule of create and update: {kind, ids}.
type InitiatorParams struct {
	Kind string   `json:"kind"`
	IDs  []string `json:"ids"`
}

// FlowParams are the fields create and update share (wire-approval §6.3).
type FlowParams struct {
	Name                   string            `json:"name"`
	Icon                   *string           `json:"icon"`
	Description            *string           `json:"description"`
	Labels                 map[string]string `json:"labels"`
	BindingMode            string            `json:"bindingMode"`
	BusinessBinding        *BusinessBinding  `json:"businessBinding"`
	AdminUserIDs           []string          `json:"adminUserIds"`
	IsAllInitiationAllowed *bool             `json:"isAllInitiationAllowed"`
	InstanceTitleTemplate  string            `json:"instanceTitleTemplate"`
	Initiators             []InitiatorParams `json:"initiators"`
}

// CreateFlowParams are create's params: the shared fields plus tenantId (empty: the caller's
// tenant, "default" for a super-admin), the immutable code and the category.
type CreateFlowParams struct {
	TenantID   string `json:"tenantId"`
	Code       string `json:"code"`
	CategoryID string `json:"categoryId"`
	FlowParams
}

// UpdateFlowParams are update's params: flowId and the shared fields (labels and initiators are
// replaced wholesale; omitted clears them). The code never changes.
type UpdateFlowParams struct {
	FlowID string `json:"flowId"`
	FlowParams
}

// Validate: code, name, categoryId and bindingMode are required (400/1400).
func (p *CreateFlowParams) Validate() error {
	var c rpc.Check
	c.Required("code", strings.TrimSpace(p.Code) != "")
	c.MaxLen("code", p.Code, 64)
	c.Required("categoryId", p.CategoryID != "")
	c.MaxLen("tenantId", p.TenantID, 64)
	p.FlowParams.check(&c)
	return c.Err()
}

// Validate: flowId, name and bindingMode are required (400/1400).
func (p *UpdateFlowParams) Validate() error {
	var c rpc.Check
	c.Required("flowId", p.FlowID != "")
	p.FlowParams.check(&c)
	return c.Err()
}

func (p *FlowParams) check(c *rpc.Check) {
	c.Required("name", strings.TrimSpace(p.Name) != "")
	c.MaxLen("name", p.Name, 128)
	c.Required("bindingMode", p.BindingMode != "")
	c.MaxLen("instanceTitleTemplate", p.InstanceTitleTemplate, 256)
	if p.Icon != nil {
		c.MaxLen("icon", *p.Icon, 128)
	}
	if p.Description != nil {
		c.MaxLen("description", *p.Description, 512)
	}
}

// FlowIDParams address one flow: {flowId, tenantId?} (tenantId is honoured for a super-admin
// only; everyone else reaches only the flows of their tenant).
type FlowIDParams struct {
	FlowID   string `json:"flowId"`
	TenantID string `json:"tenantId"`
}

// Validate: flowId is required.
func (p *FlowIDParams) Validate() error {
	var c rpc.Check
	c.Required("flowId", p.FlowID != "")
	return c.Err()
}

// ToggleParams are toggle_active's params.
type ToggleParams struct {
	FlowID   string `json:"flowId"`
	IsActive bool   `json:"isActive"`
}

// Validate: flowId is required.
func (p *ToggleParams) Validate() error {
	var c rpc.Check
	c.Required("flowId", p.FlowID != "")
	return c.Err()
}

// flowResource is approval/flow (§6.3): commands and queries with the permissions of §12;
// mutations are audited.
func (s *Service) flowResource() rpc.Resource {
	query, audit := rpc.RequiredPermission("approval.flow.query"), rpc.Audit()
	return rpc.Resource{Name: "approval/flow", Ops: []rpc.Op{
		rpc.Handle("create", s.createFlow, rpc.RequiredPermission("approval.flow.create"), audit),
		rpc.Handle("update", s.updateFlow, rpc.RequiredPermission("approval.flow.update"), audit),
		rpc.Handle("toggle_active", s.toggleActive, rpc.RequiredPermission("approval.flow.update"), audit),
		rpc.Handle("deploy", s.deploy, rpc.RequiredPermission("approval.flow.deploy"), audit),
		rpc.Handle("validate_design", s.validateDesign, rpc.RequiredPermission("approval.flow.deploy")),
		rpc.Handle("publish_version", s.publishVersion, rpc.RequiredPermission("approval.flow.publish"), audit),
		rpc.Handle("find_flows", s.findFlows, query),
		rpc.Handle("find_versions", s.findVersions, query),
		rpc.Handle("find_initiators", s.findInitiators, query),
		rpc.Handle("get_graph", s.getGraph, query),
	}}
}

func (s *Service) createFlow(ctx context.Context, c rpc.Call, p CreateFlowParams) (*Flow, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	if !cl.Super && p.TenantID != "" && p.TenantID != cl.Tenant {
		return nil, ErrAccessDenied
	}
	f := &Flow{TenantID: cl.writeTenant(p.TenantID), CategoryID: p.CategoryID, Code: strings.TrimSpace(p.Code)}
	now := crud.NewTime(s.clock())
	f.ID, f.CreatedAt, f.UpdatedAt, f.CreatedBy, f.UpdatedBy = rpc.NewID(), now, now, cl.ID, cl.ID
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.applyFlowParams(ctx, tx, f, &p.FlowParams); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model((*Category)(nil)).Where("id = ?", f.CategoryID).Where("tenant_id = ?", f.TenantID).Count(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrFlowCategoryNotFound
		}
		if _, err := tx.NewInsert().Model(f).Exec(ctx); err != nil {
			if db.IsUniqueViolation(err) {
				return ErrFlowCodeExists
			}
			return err
		}
		if err := s.replaceInitiators(ctx, tx, f.ID, p.Initiators); err != nil {
			return err
		}
		return s.publishFlow(ctx, tx, EventFlowCreated, f, func(e *FlowEvent) { e.CategoryID = f.CategoryID })
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s *Service) updateFlow(ctx context.Context, c rpc.Call, p UpdateFlowParams) (*Flow, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	var f *Flow
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if f, err = s.flowFor(ctx, tx, cl, p.FlowID, ""); err != nil {
			return err
		}
		if err := s.applyFlowParams(ctx, tx, f, &p.FlowParams); err != nil {
			return err
		}
		f.UpdatedAt, f.UpdatedBy = crud.NewTime(s.clock()), cl.ID
		if _, err := tx.NewUpdate().Model(f).WherePK().Exec(ctx); err != nil {
			return err
		}
		if err := s.replaceInitiators(ctx, tx, f.ID, p.Initiators); err != nil {
			return err
		}
		return s.publishFlow(ctx, tx, EventFlowUpdated, f, nil)
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// applyFlowParams validates the shared fields and writes them to f: labels (the shared labels
// rule), binding mode and business binding (checked against the live schema), title template
// (a Go text/template; empty takes the default), admins and the initiation flag.
func (s *Service) applyFlowParams(ctx context.Context, tx bun.IDB, f *Flow, p *FlowParams) error {
	if problem := crud.LabelProblem(p.Labels); problem != "" {
		return ErrInvalidLabels.Wrap(errors.New("invalid label: " + problem))
	}
	switch p.BindingMode {
	case BindingStandalone:
		if p.BusinessBinding != nil {
			return ErrBindingUnexpected
		}
	case BindingBusiness:
		if err := s.checkBinding(ctx, p.BusinessBinding); err != nil {
			return err
		}
	default:
		return ErrInvalidBindingMode
	}
	tmpl := strings.TrimSpace(p.InstanceTitleTemplate)
	if tmpl == "" {
		tmpl = DefaultTitleTemplate
	}
	if _, err := template.New("title").Option("missingkey=zero").Parse(tmpl); err != nil {
		return Detail(ErrInvalidTitleTemplate, err.Error())
	}
	for _, in := range p.Initiators {
		switch in.Kind {
		case InitiatorUser, InitiatorRole, InitiatorDepartment:
		default:
			return Detail(ErrInvalidInitiatorKind, in.Kind)
		}
		if len(in.IDs) == 0 {
			return rpc.ErrValidationRequired.WithArgs("field", "initiators.ids")
		}
	}
	f.Name, f.Icon, f.Description, f.Labels = strings.TrimSpace(p.Name), p.Icon, p.Description, p.Labels
	if len(f.Labels) == 0 {
		f.Labels = nil
	}
	f.BindingMode, f.BusinessBinding, f.InstanceTitleTemplate = p.BindingMode, p.BusinessBinding, tmpl
	f.AdminUserIDs = nonNil(p.AdminUserIDs)
	f.IsAllInitiationAllowed = p.IsAllInitiationAllowed == nil || *p.IsAllInitiationAllowed
	return nil
}

// replaceInitiators replaces the flow's initiator rows with rules.
func (s *Service) replaceInitiators(ctx context.Context, tx bun.IDB, flowID string, rules []InitiatorParams) error {
	if _, err := tx.NewDelete().Model((*Initiator)(nil)).Where("flow_id = ?", flowID).Exec(ctx); err != nil {
		return err
	}
	if len(rules) == 0 {
		return nil
	}
	rows := make([]Initiator, len(rules))
	for i, r := range rules {
		rows[i] = Initiator{ID: rpc.NewID(), FlowID: flowID, Kind: r.Kind, IDs: r.IDs}
	}
	_, err := tx.NewInsert().Model(&rows).Exec(ctx)
	return err
}

// flowFor reads the flow with id as the caller may see it (locked for update inside a write
// transaction on the dialects that lock); another tenant's flow is ErrFlowNotFound. asked is
// the tenantId param, honoured for a super-admin only.
func (s *Service) flowFor(ctx context.Context, idb bun.IDB, cl caller, id, asked string) (*Flow, error) {
	f := new(Flow)
	q := cl.tenantFilter(idb.NewSelect().Model(f).Where("id = ?", id), "tenant_id", asked)
	if _, ok := idb.(bun.Tx); ok {
		q = s.db.ForUpdate(q)
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrFlowNotFound
		}
		return nil, err
	}
	return f, nil
}

func (s *Service) toggleActive(ctx context.Context, c rpc.Call, p ToggleParams) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		f, err := s.flowFor(ctx, tx, cl, p.FlowID, "")
		if err != nil {
			return err
		}
		f.IsActive, f.UpdatedAt, f.UpdatedBy = p.IsActive, crud.NewTime(s.clock()), cl.ID
		if _, err := tx.NewUpdate().Model(f).Column("is_active", "updated_at", "updated_by").WherePK().Exec(ctx); err != nil {
			return err
		}
		active := p.IsActive
		return s.publishFlow(ctx, tx, EventFlowToggled, f, func(e *FlowEvent) { e.IsActive = &active })
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
