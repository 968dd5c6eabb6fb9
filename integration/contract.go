package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// ContractSearch filters contracts: code and name contain, isEnabled equal, every label pair
// equal (an unlabeled contract never matches a label filter).
type ContractSearch struct {
	Code      string            `json:"code"`
	Name      string            `json:"name"`
	IsEnabled *bool             `json:"isEnabled"`
	Labels    map[string]string `json:"labels"`
}

// ContractParams are create and update's params (wire-integration §5.1).
type ContractParams struct {
	ID           string            `json:"id"`
	Code         string            `json:"code"`
	Name         string            `json:"name"`
	Description  *string           `json:"description"`
	Labels       map[string]string `json:"labels"`
	InputSchema  json.RawMessage   `json:"inputSchema"`
	OutputSchema json.RawMessage   `json:"outputSchema"`
	IsEnabled    *bool             `json:"isEnabled"`
}

// Validate: code and name are required (400/1400).
func (p *ContractParams) Validate() error { return required("code", p.Code, "name", p.Name) }

func (s *Service) contractResource() rpc.Resource {
	r := &crud.Resource[Contract, *Contract, ContractSearch, ContractParams]{
		Query: crud.Query[Contract, ContractSearch]{Name: "integration/contract", Permission: "integration.contract", DB: s.db,
			Search: crud.NewSearch(
				crud.Contains("code", func(q *ContractSearch) string { return q.Code }),
				crud.Contains("name", func(q *ContractSearch) string { return q.Name }),
				crud.EqPtr("is_enabled", func(q *ContractSearch) *bool { return q.IsEnabled }),
				crud.Where(func(q *ContractSearch) bool { return len(q.Labels) > 0 }, s.labelFilter),
			).Sortable("code", "name")},
		Clock: s.clock, ID: func(p *ContractParams) string { return p.ID },
		Build: func(_ context.Context, _ bun.IDB, p *ContractParams, _ *Contract) (*Contract, error) {
			return buildContract(p)
		},
		BeforeDelete: func(ctx context.Context, tx bun.IDB, c *Contract) error {
			n, err := tx.NewSelect().Model((*Route)(nil)).Where("contract_id = ?", c.ID).Count(ctx)
			if err == nil && n > 0 {
				return rpc.ErrForeignKeyViolation // routes have no foreign key: the resource checks (§3)
			}
			return err
		},
	}
	return r.Resource()
}

// labelFilter keeps contracts whose labels hold every searched pair (crud.LabelFilter).
func (s *Service) labelFilter(q *bun.SelectQuery, c *ContractSearch) *bun.SelectQuery {
	return crud.LabelFilter(s.db, q, "labels", c.Labels)
}

func buildContract(p *ContractParams) (*Contract, error) {
	if err := checkLabels(p.Labels); err != nil {
		return nil, err
	}
	in, err := compileSchema("inputSchema", p.InputSchema)
	if err != nil {
		return nil, err
	}
	out, err := compileSchema("outputSchema", p.OutputSchema)
	if err != nil {
		return nil, err
	}
	return &Contract{Code: p.Code, Name: p.Name, Description: p.Description, Labels: p.Labels,
		InputSchema: in, OutputSchema: out, IsEnabled: enabled(p.IsEnabled)}, nil
}

// compileSchema compiles a JSON Schema (compileJSONSchema: draft 2020-12 unless it names
// another, no external reference) and returns it compacted; null or empty is no schema.
// Failure is 2615.
func compileSchema(name string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if _, err := compileJSONSchema(raw); err != nil {
		return nil, detail(ErrInvalidSchema, fmt.Sprintf("%s: %v", name, err))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, detail(ErrInvalidSchema, name+": "+err.Error())
	}
	return b.Bytes(), nil
}

// checkLabels applies the shared labels rule (crud.LabelProblem) with this module's code, 2626.
func checkLabels(labels map[string]string) error {
	if p := crud.LabelProblem(labels); p != "" {
		return detail(ErrInvalidLabel, p)
	}
	return nil
}
