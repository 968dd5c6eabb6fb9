package design

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// Flow is a parsed, validated flow definition (wire-approval §5): the designer's React-Flow
// graph with every node's data decoded by kind and designer defaults applied. Build one with
// ParseFlow; a Flow is read-only afterwards and safe for concurrent readers.
type Flow struct {
	Nodes []*Node // in the order sent
	Edges []*Edge // in the order sent

	byID map[string]*Node
	out  map[string][]*Edge
	in   map[string][]*Edge
}

// Position is a node's place on the designer canvas.
type Position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Node is one node of a flow. Exactly one of Task (approval, handle), CC (cc) and Condition
// (condition) is set for those kinds; start and end nodes carry only the base fields.
type Node struct {
	ID          string
	Kind        NodeKind
	Position    Position
	Name        string
	Description string
	// RawData is the node's data object exactly as sent (nil when absent).
	RawData json.RawMessage

	Task      *TaskData
	CC        *CCData
	Condition *ConditionData
}

// Edge is one edge of a flow. SourceHandle names the condition branch the edge leaves by; it
// is empty for edges out of every other kind of node.
type Edge struct {
	ID           string          `json:"id"`
	Source       string          `json:"source"`
	Target       string          `json:"target"`
	SourceHandle string          `json:"sourceHandle,omitempty"`
	Data         json.RawMessage `json:"data,omitempty"`
}

// Assignee is one entry of a task node's assignee list.
type Assignee struct {
	Kind      AssigneeKind `json:"kind"`
	IDs       []string     `json:"ids,omitempty"`
	FormField string       `json:"formField,omitempty"`
	SortOrder int          `json:"sortOrder"`
}

// CC is one carbon-copy entry of a task or cc node. Timing defaults to always.
type CC struct {
	Kind      CCKind   `json:"kind"`
	IDs       []string `json:"ids,omitempty"`
	FormField string   `json:"formField,omitempty"`
	Timing    CCTiming `json:"timing"`
}

// TaskData is the resolved configuration of an approval or handle node: every omitted field
// holds its designer default (wire-approval §5 "Designer defaults"). Handle nodes have no
// approval-only settings on the wire; they resolve to sequential / any, no rollback, no
// assignee additions or removals and no manual CC.
type TaskData struct {
	Assignees                []Assignee            `json:"assignees"`
	ExecutionType            ExecutionType         `json:"executionType"`
	EmptyAssigneeAction      EmptyAssigneeAction   `json:"emptyAssigneeAction"`
	FallbackUserIDs          []string              `json:"fallbackUserIds"`
	AdminUserIDs             []string              `json:"adminUserIds"`
	IsTransferAllowed        bool                  `json:"isTransferAllowed"`
	IsOpinionRequired        bool                  `json:"isOpinionRequired"`
	TimeoutHours             int                   `json:"timeoutHours"`
	TimeoutAction            TimeoutAction         `json:"timeoutAction"`
	TimeoutNotifyBeforeHours int                   `json:"timeoutNotifyBeforeHours"`
	UrgeCooldownMinutes      int                   `json:"urgeCooldownMinutes"`
	CCs                      []CC                  `json:"ccs"`
	FieldPermissions         map[string]Permission `json:"fieldPermissions"`

	ApprovalMethod            ApprovalMethod            `json:"approvalMethod"`
	PassRule                  PassRule                  `json:"passRule"`
	PassRatio                 float64                   `json:"passRatio"` // percent in (0, 100] for ratio
	SameApplicantAction       SameApplicantAction       `json:"sameApplicantAction"`
	ConsecutiveApproverAction ConsecutiveApproverAction `json:"consecutiveApproverAction"`
	RollbackType              RollbackType              `json:"rollbackType"`
	RollbackDataStrategy      RollbackDataStrategy      `json:"rollbackDataStrategy"`
	RollbackTargetKeys        []string                  `json:"rollbackTargetKeys"`
	IsRollbackAllowed         bool                      `json:"isRollbackAllowed"`
	IsAddAssigneeAllowed      bool                      `json:"isAddAssigneeAllowed"`
	AddAssigneeTypes          []AddAssigneeType         `json:"addAssigneeTypes"`
	IsRemoveAssigneeAllowed   bool                      `json:"isRemoveAssigneeAllowed"`
	IsManualCCAllowed         bool                      `json:"isManualCcAllowed"`
}

// CCData is the resolved configuration of a cc node.
type CCData struct {
	CCs                   []CC                  `json:"ccs"`
	IsReadConfirmRequired bool                  `json:"isReadConfirmRequired"`
	FieldPermissions      map[string]Permission `json:"fieldPermissions"`
}

// ConditionData is the configuration of a condition node.
type ConditionData struct {
	Branches []Branch `json:"branches"`
}

// Branch is one way out of a condition node. Its groups are OR'ed, the conditions inside a
// group AND'ed; the default branch is taken when no other branch matches.
type Branch struct {
	ID              string           `json:"id"`
	Label           string           `json:"label"`
	ConditionGroups []ConditionGroup `json:"conditionGroups,omitempty"`
	IsDefault       bool             `json:"isDefault,omitempty"`
	Priority        int              `json:"priority"`
}

// ConditionGroup is a conjunction of conditions.
type ConditionGroup struct {
	Conditions []Condition `json:"conditions"`
}

// Condition is one test of a branch: a field comparison (Subject, optional Aggregate and
// Column, Operator, Value) or an expr-lang Expression.
type Condition struct {
	Kind       ConditionKind `json:"kind"`
	Subject    string        `json:"subject"`
	Aggregate  AggregateKind `json:"aggregate,omitempty"`
	Column     string        `json:"column,omitempty"`
	Operator   Operator      `json:"operator"`
	Value      any           `json:"value"`
	Expression string        `json:"expression"`

	program *vm.Program // Expression compiled by ParseFlow; nil until then
}

// DefaultUrgeCooldownMinutes replaces a non-positive urgeCooldownMinutes (wire-approval §4).
const DefaultUrgeCooldownMinutes = 30

// Node looks a node up by its designer id.
func (f *Flow) Node(id string) (*Node, bool) {
	n, ok := f.byID[id]
	return n, ok
}

// Outgoing returns the edges leaving node id, in the order sent.
func (f *Flow) Outgoing(id string) []*Edge { return f.out[id] }

// Incoming returns the edges entering node id, in the order sent.
func (f *Flow) Incoming(id string) []*Edge { return f.in[id] }

// Start returns the start node.
func (f *Flow) Start() *Node {
	for _, n := range f.Nodes {
		if n.Kind == NodeStart {
			return n
		}
	}
	return nil
}

// Next returns the single successor of a non-condition node (nil for end nodes).
func (f *Flow) Next(id string) *Node {
	out := f.out[id]
	if len(out) != 1 {
		return nil
	}
	return f.byID[out[0].Target]
}

// BranchTarget returns the node a condition node's branch leads to.
func (f *Flow) BranchTarget(conditionID, branchID string) (*Node, bool) {
	for _, e := range f.out[conditionID] {
		if e.SourceHandle == branchID {
			n, ok := f.byID[e.Target]
			return n, ok
		}
	}
	return nil, false
}

// Predecessors returns the ids of the nodes with an edge into id, in edge order.
func (f *Flow) Predecessors(id string) []string {
	ids := make([]string, 0, len(f.in[id]))
	for _, e := range f.in[id] {
		ids = append(ids, e.Source)
	}
	return ids
}

// MarshalJSON writes the node in the wire shape {id, kind, position, data} with the resolved
// data (defaults applied), so json.Marshal of a Flow's nodes yields a normalized definition.
func (n *Node) MarshalJSON() ([]byte, error) {
	type base struct {
		Name        string `json:"name,omitempty"`
		Description string `json:"description,omitempty"`
	}
	var data any = base{n.Name, n.Description}
	switch {
	case n.Task != nil:
		data = struct {
			base
			*TaskData
		}{base{n.Name, n.Description}, n.Task}
	case n.CC != nil:
		data = struct {
			base
			*CCData
		}{base{n.Name, n.Description}, n.CC}
	case n.Condition != nil:
		data = struct {
			base
			*ConditionData
		}{base{n.Name, n.Description}, n.Condition}
	}
	return json.Marshal(struct {
		ID       string   `json:"id"`
		Kind     NodeKind `json:"kind"`
		Position Position `json:"position"`
		Data     any      `json:"data"`
	}{n.ID, n.Kind, n.Position, data})
}

// MarshalJSON writes the flow as {nodes, edges} with resolved node data.
func (f *Flow) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Nodes []*Node `json:"nodes"`
		Edges []*Edge `json:"edges"`
	}{f.Nodes, f.Edges})
}

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

type ccWire struct {
	Kind      CCKind   `json:"kind"`
	IDs       []string `json:"ids"`
	FormField string   `json:"formField"`
	Timing    CCTiming `json:"timing"`
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
	CCs                      []ccWire              `json:"ccs"`
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
	CCs                   []ccWire              `json:"ccs"`
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

func resolveCCs(in []ccWire) []CC {
	out := make([]CC, 0, len(in))
	for _, c := range in {
		out = append(out, CC{Kind: c.Kind, IDs: c.IDs, FormField: c.FormField, Timing: orDefault(c.Timing, CCAlways)})
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
