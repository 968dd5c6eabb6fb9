package integration

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// RouteSearch filters routes: routeKey contains, the others equal.
type RouteSearch struct {
	RouteKey   string `json:"routeKey"`
	ContractID string `json:"contractId"`
	SystemID   string `json:"systemId"`
	IsEnabled  *bool  `json:"isEnabled"`
}

// RouteParams are create and update's params (wire-integration §5.4).
type RouteParams struct {
	ID         string `json:"id"`
	RouteKey   string `json:"routeKey"`
	ContractID string `json:"contractId"`
	SystemID   string `json:"systemId"`
	IsEnabled  *bool  `json:"isEnabled"`
}

// Validate: systemId is required (400/1400).
func (p *RouteParams) Validate() error { return required("systemId", p.SystemID) }

func (s *Service) routeResource() rpc.Resource {
	r := &crud.Resource[Route, *Route, RouteSearch, RouteParams]{
		Query: crud.Query[Route, RouteSearch]{Name: "integration/route", Permission: "integration.route", DB: s.db,
			Search: crud.NewSearch(
				crud.Contains("route_key", func(q *RouteSearch) string { return q.RouteKey }),
				crud.Eq("contract_id", func(q *RouteSearch) string { return q.ContractID }),
				crud.Eq("system_id", func(q *RouteSearch) string { return q.SystemID }),
				crud.EqPtr("is_enabled", func(q *RouteSearch) *bool { return q.IsEnabled }),
			).Sortable("routeKey")},
		Clock: s.clock, ID: func(p *RouteParams) string { return p.ID },
		Build: func(ctx context.Context, tx bun.IDB, p *RouteParams, _ *Route) (*Route, error) {
			if err := routeRefs(ctx, tx, p); err != nil {
				return nil, err
			}
			return &Route{RouteKey: p.RouteKey, ContractID: p.ContractID, SystemID: p.SystemID, IsEnabled: enabled(p.IsEnabled)}, nil
		},
	}
	return r.Resource()
}

// routeRefs: the system and a non-empty contract must exist (2618).
func routeRefs(ctx context.Context, tx bun.IDB, p *RouteParams) error {
	if ok, err := tx.NewSelect().Model((*System)(nil)).Where("id = ?", p.SystemID).Exists(ctx); err != nil || !ok {
		return refErr(err)
	}
	if p.ContractID == "" {
		return nil
	}
	ok, err := tx.NewSelect().Model((*Contract)(nil)).Where("id = ?", p.ContractID).Exists(ctx)
	if err != nil || !ok {
		return refErr(err)
	}
	return nil
}

func refErr(err error) error {
	if err != nil {
		return err
	}
	return ErrInvalidRouteRef
}
