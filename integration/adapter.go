package integration

import (
	"context"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// AdapterSearch filters adapters, every field equal.
type AdapterSearch struct {
	SystemID   string `json:"systemId"`
	ContractID string `json:"contractId"`
	Direction  string `json:"direction"`
	IsEnabled  *bool  `json:"isEnabled"`
}

// AdapterParams are create and update's params (wire-integration §5.3).
type AdapterParams struct {
	ID         string `json:"id"`
	SystemID   string `json:"systemId"`
	ContractID string `json:"contractId"`
	Direction  string `json:"direction"`
	Script     string `json:"script"`
	TimeoutMs  int    `json:"timeoutMs"`
	IsEnabled  *bool  `json:"isEnabled"`
}

// Validate: systemId and contractId are required (400/1400).
func (p *AdapterParams) Validate() error {
	return required("systemId", p.SystemID, "contractId", p.ContractID)
}

func (s *Service) adapterResource() rpc.Resource {
	r := &crud.Resource[Adapter, *Adapter, AdapterSearch, AdapterParams]{
		Query: crud.Query[Adapter, AdapterSearch]{Name: "integration/adapter", Permission: "integration.adapter", DB: s.db,
			Search: crud.NewSearch(
				crud.Eq("system_id", func(q *AdapterSearch) string { return q.SystemID }),
				crud.Eq("contract_id", func(q *AdapterSearch) string { return q.ContractID }),
				crud.Eq("direction", func(q *AdapterSearch) string { return q.Direction }),
				crud.EqPtr("is_enabled", func(q *AdapterSearch) *bool { return q.IsEnabled }),
			)},
		Clock: s.clock, ID: func(p *AdapterParams) string { return p.ID },
		Build: func(_ context.Context, _ bun.IDB, p *AdapterParams, _ *Adapter) (*Adapter, error) {
			dir := p.Direction
			if dir == "" {
				dir = DirectionOutbound
			}
			if dir != DirectionOutbound && dir != DirectionInbound {
				return nil, ErrInvalidDirection
			}
			// The script must compile (2616); the compiled program stays in the engine's cache.
			if err := s.engine.CheckScript(p.Script); err != nil {
				return nil, err
			}
			return &Adapter{SystemID: p.SystemID, ContractID: p.ContractID, Direction: dir, Script: p.Script,
				TimeoutMs: p.TimeoutMs, IsEnabled: enabled(p.IsEnabled)}, nil
		},
	}
	return r.Resource()
}
