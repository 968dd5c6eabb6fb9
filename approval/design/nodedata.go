package design

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Percent is a pass ratio as the wire carries it: a JSON number or a decimal string.
type Percent float64

// UnmarshalJSON accepts 60, 60.5, "60" and "60.5"; null and "" leave zero.
func (p *Percent) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			return nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("passRatio %q is not a number", s)
	}
	*p = Percent(v)
	return nil
}

// Wire shapes: every field optional, so omitted values can be told apart from false/zero.

type flowWire struct {
	Nodes []nodeWire `json:"nodes"`
	Edges []edgeWire `json:"edges"`
}

type nodeWire struct {
	ID       string          `json:"id"`
	Kind     NodeKind        `json:"kind"`
	Position Position        `json:"position"`
	Data     json.RawMessage `json:"data"`
}

type edgeWire struct {
	ID           string          `json:"id"`
	Source       string          `json:"source"`
	Target       string          `json:"target"`
	SourceHandle *string         `json:"sourceHandle"`
	Data         json.RawMessage `json:"data"`
}

type baseWire struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type taskWire struct {
	baseWire
	Assignees                []Assignee            `json:"assignees"`
	ExecutionType            ExecutionType         `json:"executionType"`
	EmptyAssigneeAction      EmptyAssigneeAction   `json:"emptyAssigneeAction"`
	FallbackUserIDs          []string              `json:"fallbackUserIds"`
	AdminUserIDs             []string              `json:"adminUserIds"`
	IsTransferAllowed        *bool                 `json:"isTransferAllowed"`
	IsOpinionRequired        *bool                 `json:"isOpinionRequired"`
	TimeoutHours             int                   `json:"timeoutHours"`
	TimeoutAction            TimeoutAction         `json:"timeoutAction"`
	TimeoutNotifyBeforeHours int                   `json:"timeoutNotifyBeforeHours"`
	UrgeCooldownMinutes      int                   `json:"urgeCooldownMinutes"`
	CCs                      []CC                  `json:"ccs"`
	FieldPermissions         map[string]Permission `json:"fieldPermissions"`
}

type approvalWire struct {
	taskWire
	ApprovalMethod            ApprovalMethod            `json:"approvalMethod"`
	PassRule                  PassRule                  `json:"passRule"`
	PassRatio                 Percent                   `json:"passRatio"`
	SameApplicantAction       SameApplicantAction       `json:"sameApplicantAction"`
	ConsecutiveApproverAction ConsecutiveApproverAction `json:"consecutiveApproverAction"`
	RollbackType              RollbackType              `json:"rollbackType"`
	RollbackDataStrategy      RollbackDataStrategy      `json:"rollbackDataStrategy"`
	RollbackTargetKeys        []string                  `json:"rollbackTargetKeys"`
	IsRollbackAllowed         *bool                     `json:"isRollbackAllowed"`
	IsAddAssigneeAllowed      *bool                     `json:"isAddAssigneeAllowed"`
	AddAssigneeTypes          []AddAssigneeType         `json:"addAssigneeTypes"`
	IsRemoveAssigneeAllowed   *bool                     `json:"isRemoveAssigneeAllowed"`
	IsManualCCAllowed         *bool                     `json:"isManualCcAllowed"`
}

type ccNodeWire struct {
	baseWire
	CCs                   []CC                  `json:"ccs"`
	IsReadConfirmRequired bool                  `json:"isReadConfirmRequired"`
	FieldPermissions      map[string]Permission `json:"fieldPermissions"`
}

type conditionWire struct {
	baseWire
	Branches []Branch `json:"branches"`
}

// decodeNodeData decodes n.RawData by kind into n and applies the designer defaults.
func decodeNodeData(n *Node) error {
	raw := n.RawData
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	switch n.Kind {
	case NodeStart, NodeEnd:
		var w baseWire
		if err := json.Unmarshal(raw, &w); err != nil {
			return err
		}
		n.Name, n.Description = w.Name, w.Description
	case NodeApproval, NodeHandle:
		var w approvalWire
		if err := json.Unmarshal(raw, &w); err != nil {
			return err
		}
		n.Name, n.Description = w.Name, w.Description
		n.Task = resolveTask(n.Kind, &w)
	case NodeCC:
		var w ccNodeWire
		if err := json.Unmarshal(raw, &w); err != nil {
			return err
		}
		n.Name, n.Description = w.Name, w.Description
		n.CC = &CCData{CCs: resolveCCs(w.CCs), IsReadConfirmRequired: w.IsReadConfirmRequired,
			FieldPermissions: w.FieldPermissions}
	case NodeCondition:
		var w conditionWire
		if err := json.Unmarshal(raw, &w); err != nil {
			return err
		}
		n.Name, n.Description = w.Name, w.Description
		n.Condition = &ConditionData{Branches: w.Branches}
	}
	return nil
}

// resolveTask applies the designer defaults of wire-approval §5 to an approval or handle node.
func resolveTask(kind NodeKind, w *approvalWire) *TaskData {
	t := &TaskData{
		Assignees:                w.Assignees,
		ExecutionType:            orDefault(w.ExecutionType, ExecutionManual),
		EmptyAssigneeAction:      orDefault(w.EmptyAssigneeAction, EmptyAutoPass),
		FallbackUserIDs:          w.FallbackUserIDs,
		AdminUserIDs:             w.AdminUserIDs,
		IsTransferAllowed:        boolOr(w.IsTransferAllowed, true),
		IsOpinionRequired:        boolOr(w.IsOpinionRequired, false),
		TimeoutHours:             w.TimeoutHours,
		TimeoutAction:            orDefault(w.TimeoutAction, TimeoutNone),
		TimeoutNotifyBeforeHours: w.TimeoutNotifyBeforeHours,
		UrgeCooldownMinutes:      w.UrgeCooldownMinutes,
		CCs:                      resolveCCs(w.CCs),
		FieldPermissions:         w.FieldPermissions,
	}
	if t.UrgeCooldownMinutes <= 0 {
		t.UrgeCooldownMinutes = DefaultUrgeCooldownMinutes
	}
	if kind == NodeHandle {
		// A handle node is work, not a decision: one handler finishes it.
		t.ApprovalMethod, t.PassRule = MethodSequential, PassAny
		t.SameApplicantAction, t.ConsecutiveApproverAction = SameApplicantSelfApprove, ConsecutiveNone
		t.RollbackType, t.RollbackDataStrategy = RollbackNone, RollbackDataKeep
		t.AddAssigneeTypes = []AddAssigneeType{}
		return t
	}
	t.ApprovalMethod = orDefault(w.ApprovalMethod, MethodParallel)
	t.PassRule = orDefault(w.PassRule, PassAll)
	t.PassRatio = float64(w.PassRatio)
	t.SameApplicantAction = orDefault(w.SameApplicantAction, SameApplicantSelfApprove)
	t.ConsecutiveApproverAction = orDefault(w.ConsecutiveApproverAction, ConsecutiveNone)
	t.RollbackType = orDefault(w.RollbackType, RollbackPrevious)
	t.RollbackDataStrategy = orDefault(w.RollbackDataStrategy, RollbackDataKeep)
	t.RollbackTargetKeys = w.RollbackTargetKeys
	t.IsRollbackAllowed = boolOr(w.IsRollbackAllowed, true)
	t.IsAddAssigneeAllowed = boolOr(w.IsAddAssigneeAllowed, true)
	t.IsRemoveAssigneeAllowed = boolOr(w.IsRemoveAssigneeAllowed, true)
	t.IsManualCCAllowed = boolOr(w.IsManualCCAllowed, true)
	t.AddAssigneeTypes = w.AddAssigneeTypes
	if t.AddAssigneeTypes == nil {
		// The designer's default: all three, but a sequential queue has no parallel lane.
		t.AddAssigneeTypes = []AddAssigneeType{AddBefore, AddAfter}
		if t.ApprovalMethod != MethodSequential {
			t.AddAssigneeTypes = append(t.AddAssigneeTypes, AddParallel)
		}
	}
	return t
}

// resolveCCs copies a cc list with the default timing (always) filled in.
func resolveCCs(in []CC) []CC {
	out := make([]CC, 0, len(in))
	for _, c := range in {
		c.Timing = orDefault(c.Timing, CCAlways)
		out = append(out, c)
	}
	return out
}

func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
