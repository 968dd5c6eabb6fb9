package approval

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/rpc"
)

// ValidateDesignParams are validate_design's params: what deploy would receive, without the
// flow (nothing is stored, so no flow is needed).
type ValidateDesignParams struct {
	StorageMode    string          `json:"storageMode"`
	FlowDefinition json.RawMessage `json:"flowDefinition"`
	FormSchema     json.RawMessage `json:"formSchema"`
}

// Validate: flowDefinition is required (400/1400).
func (p *ValidateDesignParams) Validate() error {
	var c rpc.Check
	c.Required("flowDefinition", !isNull(p.FlowDefinition))
	return c.Err()
}

// DesignProblem is one broken deploy rule: the rule's code (design.Rule, or the form rule for
// a form-document problem), where it applies (designer node, edge, branch ids; the form path)
// and its text in the server's language, as deploy's 40005/40010 detail words it.
type DesignProblem struct {
	Rule     string `json:"rule"`
	NodeID   string `json:"nodeId,omitempty"`
	EdgeID   string `json:"edgeId,omitempty"`
	BranchID string `json:"branchId,omitempty"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
}

// DesignReport is validate_design's answer: every broken rule at once (empty when deploy would
// accept the same params), and the form fields the form document projects to (what
// fieldPermissions, form_field assignees and conditions may name).
type DesignReport struct {
	Problems   []DesignProblem    `json:"problems"`
	FormFields []design.FormField `json:"formFields"`
}

// validateDesign is svc's own approval/flow action validate_design (the original's client has
// none): it runs deploy's checks — storage mode, the form projection, the table-storage rules
// and every flow deploy rule (design.Problems) — and writes nothing, so a designer can mark the
// nodes a deploy would refuse before saving. It needs approval.flow.deploy, as deploy does.
func (s *Service) validateDesign(_ context.Context, _ rpc.Call, p ValidateDesignParams) (*DesignReport, error) {
	r := &DesignReport{Problems: []DesignProblem{}, FormFields: []design.FormField{}}
	switch p.StorageMode {
	case "", StorageJSON, StorageTable:
	default:
		return nil, ErrInvalidStorageMode
	}
	var fields []design.FormField
	if !isNull(p.FormSchema) {
		var err error
		if fields, err = design.ParseFormSchema(p.FormSchema); err != nil {
			var schema *design.SchemaError
			if !errors.As(err, &schema) {
				return nil, designError(ErrInvalidFormDesign, err, s.translate)
			}
			r.Problems = append(r.Problems, DesignProblem{Rule: schema.Rule, Field: schema.Path,
				Message: s.translate(schema.MessageKey(), schema.Params())})
			return r, nil
		}
		r.FormFields = fields
	}
	if p.StorageMode == StorageTable {
		if err := checkTableStorage(fields); err != nil {
			return nil, err
		}
	}
	for _, e := range design.Problems(p.FlowDefinition, fields) {
		r.Problems = append(r.Problems, DesignProblem{Rule: string(e.Rule), NodeID: e.NodeID, EdgeID: e.EdgeID,
			BranchID: e.BranchID, Message: s.translate(e.MessageKey(), e.Params())})
	}
	return r, nil
}
