package approval

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// DeployParams are deploy's params (wire-approval §6.3): the flow, the designer's definition,
// the host's form document (optional) and the storage mode (json, the default; table also writes
// the form data into generated tables, and needs a form document).
type DeployParams struct {
	FlowID         string          `json:"flowId"`
	Description    *string         `json:"description"`
	StorageMode    string          `json:"storageMode"`
	FlowDefinition json.RawMessage `json:"flowDefinition"`
	FormSchema     json.RawMessage `json:"formSchema"`
}

// Validate: flowId and flowDefinition are required (400/1400).
func (p *DeployParams) Validate() error {
	var c rpc.Check
	c.Required("flowId", p.FlowID != "")
	c.Required("flowDefinition", !isNull(p.FlowDefinition))
	if p.Description != nil {
		c.MaxLen("description", *p.Description, 256)
	}
	return c.Err()
}

// deploy validates the definition and the form document with package design and stores a new
// draft version: flowSchema as sent, formSchema verbatim, formFields derived, the flow's business
// binding snapshotted, the nodes (with their assignee and cc rules) and edges materialised, and
// approval.flow.deployed published, in one transaction. A broken deploy rule answers 40005 with
// the rule's name in the message, a form document that does not project 40010.
func (s *Service) deploy(ctx context.Context, c rpc.Call, p DeployParams) (*Version, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	mode := p.StorageMode
	switch mode {
	case "":
		mode = StorageJSON
	case StorageJSON, StorageTable:
	default:
		return nil, ErrInvalidStorageMode
	}
	var fields []design.FormField
	if !isNull(p.FormSchema) {
		if fields, err = design.ParseFormSchema(p.FormSchema); err != nil {
			return nil, designError(ErrInvalidFormDesign, err, s.translate)
		}
	}
	if mode == StorageTable {
		if err := checkTableStorage(fields); err != nil {
			return nil, err
		}
	}
	graph, err := design.ParseFlow(p.FlowDefinition, fields)
	if err != nil {
		return nil, designError(ErrInvalidFlowDesign, err, s.translate)
	}
	v := &Version{Status: VersionDraft, Description: p.Description, StorageMode: mode,
		FlowSchema: compact(p.FlowDefinition), FormSchema: compact(p.FormSchema)}
	if fields != nil {
		if v.FormFields, err = json.Marshal(fields); err != nil {
			return nil, err
		}
	}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		f, err := s.flowFor(ctx, tx, cl, p.FlowID, "")
		if err != nil {
			return err
		}
		var last int
		if err := tx.NewSelect().Model((*Version)(nil)).ColumnExpr("COALESCE(MAX(version), 0)").Where("flow_id = ?", f.ID).Scan(ctx, &last); err != nil {
			return err
		}
		now := crud.NewTime(s.clock())
		v.ID, v.FlowID, v.Version, v.BusinessBinding = rpc.NewID(), f.ID, last+1, f.BusinessBinding
		v.CreatedAt, v.UpdatedAt, v.CreatedBy, v.UpdatedBy = now, now, cl.ID, cl.ID
		if _, err := tx.NewInsert().Model(v).Exec(ctx); err != nil {
			return err
		}
		if err := s.materialise(ctx, tx, v, graph, cl.ID); err != nil {
			return err
		}
		return s.publishFlow(ctx, tx, EventFlowDeployed, f, func(e *FlowEvent) { e.VersionID, e.Version = v.ID, v.Version })
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// designError answers a *design.RuleError (tmpl 40005) or *design.SchemaError (40010) in the
// catalogue's words: tmpl's detail is the rule's text (its MessageKey with its Params, rendered
// by t in the process language), followed by where it applies — node, edge, branch or field,
// as the designer names them (approval_design_at_*). The English error stays the cause, for the
// server log (Service.explain). Any other error is tmpl with the rule-less text as detail.
func designError(tmpl *rpc.Error, err error, t design.Translator) error {
	var rule *design.RuleError
	var schema *design.SchemaError
	switch {
	case errors.As(err, &rule):
		msg := t(rule.MessageKey(), rule.Params())
		switch {
		case rule.NodeID != "" && rule.BranchID != "":
			msg = t("approval_design_at_branch", map[string]string{"message": msg, "node": rule.NodeID, "branch": rule.BranchID})
		case rule.NodeID != "":
			msg = t("approval_design_at_node", map[string]string{"message": msg, "node": rule.NodeID})
		case rule.EdgeID != "":
			msg = t("approval_design_at_edge", map[string]string{"message": msg, "edge": rule.EdgeID})
		}
		return Detail(tmpl, msg).Wrap(err)
	case errors.As(err, &schema):
		msg := t(schema.MessageKey(), schema.Params())
		if schema.Path != "" {
			msg = t("approval_design_at_field", map[string]string{"message": msg, "field": schema.Path})
		}
		return Detail(tmpl, msg).Wrap(err)
	}
	return Detail(tmpl, err.Error())
}

// materialise writes the version's nodes, their assignee and cc rules, and its edges.
func (s *Service) materialise(ctx context.Context, tx bun.IDB, v *Version, g *design.Flow, by string) error {
	nodes := make([]Node, 0, len(g.Nodes))
	var assignees []NodeAssignee
	var ccs []NodeCC
	ids := make(map[string]string, len(g.Nodes))
	for _, n := range g.Nodes {
		row := nodeRow(n)
		row.ID, row.FlowVersionID = rpc.NewID(), v.ID
		row.CreatedAt, row.UpdatedAt, row.CreatedBy, row.UpdatedBy = v.CreatedAt, v.CreatedAt, by, by
		ids[n.ID] = row.ID
		var rules []design.CC
		switch {
		case n.Task != nil:
			for _, a := range n.Task.Assignees {
				assignees = append(assignees, NodeAssignee{ID: rpc.NewID(), NodeID: row.ID, Kind: a.Kind,
					IDs: nonNil(a.IDs), FormField: optional(a.FormField), SortOrder: a.SortOrder})
			}
			rules = n.Task.CCs
		case n.CC != nil:
			rules = n.CC.CCs
		}
		for _, r := range rules {
			ccs = append(ccs, NodeCC{ID: rpc.NewID(), NodeID: row.ID, Kind: r.Kind, IDs: nonNil(r.IDs),
				FormField: optional(r.FormField), Timing: r.Timing})
		}
		nodes = append(nodes, row)
	}
	edges := make([]Edge, len(g.Edges))
	for i, e := range g.Edges {
		edges[i] = Edge{ID: rpc.NewID(), FlowVersionID: v.ID, Key: optional(e.ID), SourceNodeID: ids[e.Source],
			SourceNodeKey: e.Source, TargetNodeID: ids[e.Target], TargetNodeKey: e.Target, SourceHandle: optional(e.SourceHandle)}
	}
	for _, rows := range []any{&nodes, &assignees, &ccs, &edges} {
		if isEmpty(rows) {
			continue
		}
		if _, err := tx.NewInsert().Model(rows).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// nodeRow is the apv_flow_node row of a parsed node: the node's resolved settings, and the
// table's defaults for the settings its kind does not have.
func nodeRow(n *design.Node) Node {
	row := Node{Key: n.ID, Kind: n.Kind, Name: n.Name, Description: optional(n.Description),
		ExecutionType: design.ExecutionManual, ApprovalMethod: design.MethodParallel, PassRule: design.PassAll,
		PassRatio: NewDecimal(100), EmptyAssigneeAction: design.EmptyAutoPass, FallbackUserIDs: []string{},
		AdminUserIDs: []string{}, SameApplicantAction: design.SameApplicantSelfApprove, IsRollbackAllowed: true,
		RollbackType: design.RollbackPrevious, IsAddAssigneeAllowed: true,
		AddAssigneeTypes:        []design.AddAssigneeType{design.AddBefore, design.AddAfter, design.AddParallel},
		IsRemoveAssigneeAllowed: true, FieldPermissions: map[string]design.Permission{}, IsManualCCAllowed: true,
		IsTransferAllowed: true, TimeoutAction: design.TimeoutNone, ConsecutiveApproverAction: design.ConsecutiveNone}
	if row.Name == "" {
		row.Name = n.ID
	}
	switch {
	case n.Task != nil:
		applyTask(&row, n.Task)
	case n.CC != nil:
		row.IsReadConfirmRequired, row.FieldPermissions = n.CC.IsReadConfirmRequired, nonNilMap(n.CC.FieldPermissions)
	case n.Condition != nil:
		row.Branches, _ = json.Marshal(n.Condition.Branches) // plain data always encodes
	}
	return row
}

func applyTask(row *Node, t *design.TaskData) {
	row.ExecutionType, row.ApprovalMethod, row.PassRule = t.ExecutionType, t.ApprovalMethod, t.PassRule
	if t.PassRatio > 0 {
		row.PassRatio = NewDecimal(t.PassRatio)
	}
	row.EmptyAssigneeAction, row.SameApplicantAction = t.EmptyAssigneeAction, t.SameApplicantAction
	row.FallbackUserIDs, row.AdminUserIDs = nonNil(t.FallbackUserIDs), nonNil(t.AdminUserIDs)
	row.IsRollbackAllowed, row.RollbackType = t.IsRollbackAllowed, t.RollbackType
	row.RollbackDataStrategy = optional(t.RollbackDataStrategy)
	row.RollbackTargetKeys = t.RollbackTargetKeys
	row.IsAddAssigneeAllowed, row.IsRemoveAssigneeAllowed = t.IsAddAssigneeAllowed, t.IsRemoveAssigneeAllowed
	row.AddAssigneeTypes = nonNil(t.AddAssigneeTypes)
	row.FieldPermissions = nonNilMap(t.FieldPermissions)
	row.IsManualCCAllowed, row.IsTransferAllowed, row.IsOpinionRequired = t.IsManualCCAllowed, t.IsTransferAllowed, t.IsOpinionRequired
	row.TimeoutHours, row.TimeoutAction, row.TimeoutNotifyBeforeHours = t.TimeoutHours, t.TimeoutAction, t.TimeoutNotifyBeforeHours
	row.UrgeCooldownMinutes, row.ConsecutiveApproverAction = t.UrgeCooldownMinutes, t.ConsecutiveApproverAction
}

// optional is nil for "", else a pointer to s.
func optional[T ~string](s T) *T {
	if s == "" {
		return nil
	}
	return &s
}

// isNull reports an absent or JSON-null raw value.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// compact returns raw without insignificant white space (nil for null); the value is otherwise
// stored as sent.
func compact(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func isEmpty(rows any) bool {
	switch r := rows.(type) {
	case *[]Node:
		return len(*r) == 0
	case *[]NodeAssignee:
		return len(*r) == 0
	case *[]NodeCC:
		return len(*r) == 0
	case *[]Edge:
		return len(*r) == 0
	}
	return true
}

// VersionParams address one version: {versionId}.
type VersionParams struct {
	VersionID string `json:"versionId"`
}

// publishVersion publishes a draft (ErrVersionNotDraft otherwise): the published version of the
// flow, if any, is archived, the flow's currentVersion becomes this version's number, and
// approval.flow.published is published, all in one transaction. A version of a flow the caller
// may not see is ErrVersionNotFound. A table-storage version's tables are created before the
// transaction (provisionFormTables) and recorded inside it.
func (s *Service) publishVersion(ctx context.Context, c rpc.Call, p VersionParams) (*struct{}, error) {
	cl, err := callerOf(c)
	if err != nil {
		return nil, err
	}
	tables, err := s.provisionFormTables(ctx, cl, p.VersionID)
	if err != nil {
		return nil, err
	}
	return nil, s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		v := new(Version)
		if err := tx.NewSelect().Model(v).ExcludeColumn("flow_schema", "form_schema", "form_fields").Where("id = ?", p.VersionID).Scan(ctx); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrVersionNotFound
			}
			return err
		}
		f, err := s.flowFor(ctx, tx, cl, v.FlowID, "")
		if errors.Is(err, ErrFlowNotFound) {
			return ErrVersionNotFound
		}
		if err != nil {
			return err
		}
		if v.Status != VersionDraft {
			return ErrVersionNotDraft
		}
		if err := s.recordFormTables(ctx, tx, f.ID, v.ID, cl.ID, tables); err != nil {
			return err
		}
		now := crud.NewTime(s.clock())
		if _, err := tx.NewUpdate().Model((*Version)(nil)).Set("status = ?", VersionArchived).Set("updated_at = ?", now).
			Set("updated_by = ?", cl.ID).Where("flow_id = ?", f.ID).Where("status = ?", VersionPublished).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*Version)(nil)).Set("status = ?", VersionPublished).Set("published_at = ?", now).
			Set("published_by = ?", cl.ID).Set("updated_at = ?", now).Set("updated_by = ?", cl.ID).
			Where("id = ?", v.ID).Exec(ctx); err != nil {
			return err
		}
		f.CurrentVersion, f.UpdatedAt, f.UpdatedBy = v.Version, now, cl.ID
		if _, err := tx.NewUpdate().Model(f).Column("current_version", "updated_at", "updated_by").WherePK().Exec(ctx); err != nil {
			return err
		}
		return s.publishFlow(ctx, tx, EventFlowPublished, f, func(e *FlowEvent) { e.VersionID = v.ID })
	})
}
