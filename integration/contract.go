package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/svc-framework/svc/config"
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

// labelFilter keeps contracts whose labels hold every searched pair, with each dialect's JSON
// functions. A key outside the labels rule can match nothing (and never reaches a JSON path).
func (s *Service) labelFilter(q *bun.SelectQuery, c *ContractSearch) *bun.SelectQuery {
	for k, v := range c.Labels {
		if len(k) > 63 || !labelKey.MatchString(k) {
			return q.Where("1 = 0")
		}
		path := `$."` + k + `"`
		switch s.db.Kind {
		case config.Postgres:
			q = q.Where("labels ->> ? = ?", k, v)
		case config.MySQL:
			q = q.Where("JSON_UNQUOTE(JSON_EXTRACT(labels, ?)) = ?", path, v)
		default:
			q = q.Where("json_extract(labels, ?) = ?", path, v)
		}
	}
	return q
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

// compileSchema compiles a JSON Schema (draft 2020-12 unless it names another) and returns it
// compacted; null or empty is no schema. Failure is 2615.
func compileSchema(name string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err = c.AddResource("mem:///"+name+".json", doc); err == nil {
			_, err = c.Compile("mem:///" + name + ".json")
		}
	}
	if err != nil {
		return nil, detail(ErrInvalidSchema, fmt.Sprintf("%s: %v", name, err))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, detail(ErrInvalidSchema, name+": "+err.Error())
	}
	return b.Bytes(), nil
}

// labelKey is the labels rule of wire-integration §4 (shared with approval): alphanumeric at
// both ends, '_' and '-' inside, at most 63 characters; values at most 256 characters.
var labelKey = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`)

func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		switch {
		case len(k) > 63 || !labelKey.MatchString(k):
			return detail(ErrInvalidLabel, fmt.Sprintf("key %q", k))
		case utf8.RuneCountInString(v) > 256:
			return detail(ErrInvalidLabel, fmt.Sprintf("value of %q exceeds 256 characters", k))
		}
	}
	return nil
}
