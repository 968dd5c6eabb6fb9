package design

import (
	"encoding/json"

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
