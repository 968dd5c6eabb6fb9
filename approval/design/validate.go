package design

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseFlow decodes a flow definition (deploy's flowDefinition), applies the designer
// defaults and checks every deploy rule of wire-approval §5 against the version's top-level
// form fields. It returns the first broken rule as a *RuleError; use Problems for all of them.
func ParseFlow(raw []byte, fields []FormField) (*Flow, error) {
	f, problems := parse(raw, fields)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	return f, nil
}

// Problems lists every broken deploy rule of a flow definition, in the order the checks run
// (nodes, edges, degrees, topology); nil when the definition deploys.
func Problems(raw []byte, fields []FormField) []*RuleError {
	_, problems := parse(raw, fields)
	return problems
}

type validator struct {
	problems []*RuleError
	fields   map[string]*FormField
}

func (v *validator) fail(rule Rule, nodeID, format string, args ...any) *RuleError {
	e := &RuleError{Rule: rule, NodeID: nodeID, Message: fmt.Sprintf(format, args...), Args: argStrings(args)}
	v.problems = append(v.problems, e)
	return e
}

// argStrings are a message's values as its catalogue parameters carry them.
func argStrings(args []any) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprint(a)
	}
	return out
}

func parse(raw []byte, fields []FormField) (*Flow, []*RuleError) {
	v := &validator{fields: make(map[string]*FormField, len(fields))}
	for i := range fields {
		v.fields[fields[i].Key] = &fields[i]
	}
	var w flowWire
	if err := json.Unmarshal(raw, &w); err != nil {
		v.fail(RuleInvalidJSON, "", "the flow definition is not a {nodes, edges} JSON object: %v", err)
		return nil, v.problems
	}
	if len(w.Nodes) == 0 {
		v.fail(RuleNoNodes, "", "the flow needs at least one node")
		return nil, v.problems
	}
	f := &Flow{byID: map[string]*Node{}, out: map[string][]*Edge{}, in: map[string][]*Edge{}}
	v.nodes(f, w.Nodes)
	v.edges(f, w.Edges)
	v.degrees(f)
	v.topology(f)
	if len(v.problems) > 0 {
		return nil, v.problems
	}
	return f, nil
}

// nodes decodes every node and checks the node-local rules.
func (v *validator) nodes(f *Flow, in []nodeWire) {
	starts, ends := 0, 0
	for _, nw := range in {
		if nw.ID == "" {
			v.fail(RuleEmptyNodeID, "", "a node has an empty id")
			continue
		}
		if _, dup := f.byID[nw.ID]; dup {
			v.fail(RuleDuplicateNodeID, nw.ID, "node id %q is used twice", nw.ID)
			continue
		}
		if !nw.Kind.Valid() {
			v.fail(RuleInvalidNodeKind, nw.ID, "unknown node kind %q", nw.Kind)
			continue
		}
		n := &Node{ID: nw.ID, Kind: nw.Kind, Position: nw.Position, RawData: nw.Data}
		if err := decodeNodeData(n); err != nil {
			v.fail(RuleNodeDataInvalid, nw.ID, "the %s node's data does not decode: %v", nw.Kind, err)
			continue
		}
		f.Nodes = append(f.Nodes, n)
		f.byID[n.ID] = n
		switch n.Kind {
		case NodeStart:
			starts++
		case NodeEnd:
			ends++
		case NodeApproval:
			v.task(n)
			v.approval(n)
		case NodeHandle:
			v.task(n)
			v.handle(n)
		case NodeCC:
			v.ccs(n.ID, n.CC.CCs)
			v.permissions(n.ID, n.CC.FieldPermissions, true)
		case NodeCondition:
			v.branches(n)
		}
	}
	if starts != 1 {
		v.fail(RuleStartNodeCount, "", "the flow needs exactly one start node, found %d", starts)
	}
	if ends < 1 {
		v.fail(RuleEndNodeCount, "", "the flow needs at least one end node")
	}
	v.rollbackTargets(f)
}

func (v *validator) task(n *Node) {
	t := n.Task
	v.enums(n.ID,
		enumField{RuleInvalidExecutionType, "executionType", t.ExecutionType},
		enumField{RuleInvalidEmptyAssigneeAction, "emptyAssigneeAction", t.EmptyAssigneeAction},
		enumField{RuleInvalidTimeoutAction, "timeoutAction", t.TimeoutAction})
	if t.TimeoutHours < 0 || t.TimeoutNotifyBeforeHours < 0 {
		v.fail(RuleNegativeDuration, n.ID, "timeoutHours and timeoutNotifyBeforeHours must not be negative")
	}
	for _, a := range t.Assignees {
		if !a.Kind.Valid() {
			v.fail(RuleInvalidAssigneeKind, n.ID, "unknown assignee kind %q", a.Kind)
			continue
		}
		if a.Kind == AssigneeFormField && strings.TrimSpace(a.FormField) == "" {
			v.fail(RuleAssigneeFormFieldRequired, n.ID, "a form_field assignee must name its form field")
		}
		if needsIDs(string(a.Kind)) && len(a.IDs) == 0 {
			v.fail(RuleAssigneeIDsRequired, n.ID, "a %s assignee must list ids", a.Kind)
		}
	}
	if t.EmptyAssigneeAction == EmptyTransferSpecified && len(t.FallbackUserIDs) == 0 {
		v.fail(RuleFallbackUsersRequired, n.ID, "emptyAssigneeAction transfer_specified needs fallbackUserIds")
	}
	if t.EmptyAssigneeAction == EmptyTransferAdmin && len(t.AdminUserIDs) == 0 {
		v.fail(RuleAdminUsersRequired, n.ID, "emptyAssigneeAction transfer_admin needs adminUserIds")
	}
	v.ccs(n.ID, t.CCs)
	v.permissions(n.ID, t.FieldPermissions, false)
	if t.TimeoutAction == TimeoutAutoPass {
		for key, p := range t.FieldPermissions {
			if p == PermRequired {
				v.fail(RuleFieldPermissionRequiredAutoPass, n.ID,
					"field %q is required at this node, but timeoutAction auto_pass would pass it unfilled", key)
				break
			}
		}
	}
}

func (v *validator) approval(n *Node) {
	t := n.Task
	v.enums(n.ID,
		enumField{RuleInvalidApprovalMethod, "approvalMethod", t.ApprovalMethod},
		enumField{RuleInvalidPassRule, "passRule", t.PassRule},
		enumField{RuleInvalidSameApplicantAction, "sameApplicantAction", t.SameApplicantAction},
		enumField{RuleInvalidConsecutiveApproverAction, "consecutiveApproverAction", t.ConsecutiveApproverAction},
		enumField{RuleInvalidRollbackType, "rollbackType", t.RollbackType},
		enumField{RuleInvalidRollbackDataStrategy, "rollbackDataStrategy", t.RollbackDataStrategy})
	if t.PassRule == PassRatio && (t.PassRatio <= 0 || t.PassRatio > 100) {
		v.fail(RulePassRatioRange, n.ID, "passRule ratio needs a passRatio percentage in (0, 100], got %v", t.PassRatio)
	}
	if t.RollbackType == RollbackSpecified && len(t.RollbackTargetKeys) == 0 {
		v.fail(RuleRollbackTargetsRequired, n.ID, "rollbackType specified needs at least one rollbackTargetKeys entry")
	}
	for _, at := range t.AddAssigneeTypes {
		if !at.Valid() {
			v.fail(RuleInvalidAddAssigneeType, n.ID, "unknown addAssigneeTypes entry %q", at)
		}
		if at == AddParallel && t.ApprovalMethod == MethodSequential {
			v.fail(RuleSequentialParallelAddAssignee, n.ID, "a sequential node cannot offer the parallel add-assignee type")
		}
	}
}

// enumField is one enumerated setting of a node: the rule it breaks when out of vocabulary,
// its wire name and its value.
type enumField struct {
	rule  Rule
	name  string
	value interface{ Valid() bool }
}

func (v *validator) enums(nodeID string, fields ...enumField) {
	for _, f := range fields {
		if !f.value.Valid() {
			v.fail(f.rule, nodeID, "unknown %s %q", f.name, f.value)
		}
	}
}

func (v *validator) handle(n *Node) {
	if n.Task.ExecutionType == ExecutionAutoReject {
		v.fail(RuleHandleExecutionAutoReject, n.ID, "a handle node cannot use executionType auto_reject")
	}
	if n.Task.TimeoutAction == TimeoutAutoReject {
		v.fail(RuleHandleTimeoutAutoReject, n.ID, "a handle node cannot use timeoutAction auto_reject")
	}
}

func (v *validator) ccs(nodeID string, ccs []CC) {
	for _, c := range ccs {
		if !c.Kind.Valid() {
			v.fail(RuleInvalidCCKind, nodeID, "unknown cc kind %q", c.Kind)
			continue
		}
		if c.Kind == CCFormField && strings.TrimSpace(c.FormField) == "" {
			v.fail(RuleCCFormFieldRequired, nodeID, "a form_field cc must name its form field")
		}
		if needsIDs(string(c.Kind)) && len(c.IDs) == 0 {
			v.fail(RuleCCIDsRequired, nodeID, "a %s cc must list ids", c.Kind)
		}
		if !c.Timing.Valid() {
			v.fail(RuleInvalidCCTiming, nodeID, "unknown cc timing %q", c.Timing)
		}
	}
}

// needsIDs reports whether an assignee or cc kind selects principals by id (user, role,
// department): without ids it resolves to nobody.
func needsIDs(kind string) bool { return kind == "user" || kind == "role" || kind == "department" }

// permissions checks a fieldPermissions map: known values, keys naming top-level form fields,
// and (cc nodes, which only observe the form) visible/hidden only.
func (v *validator) permissions(nodeID string, perms map[string]Permission, cc bool) {
	for _, key := range sortedKeys(perms) {
		p := perms[key]
		if !p.Valid() {
			v.fail(RuleInvalidFieldPermission, nodeID, "field %q has unknown permission %q", key, p)
		} else if cc && p != PermVisible && p != PermHidden {
			v.fail(RuleCCFieldPermissionNotAllowed, nodeID, "a cc node only allows visible or hidden, field %q has %q", key, p)
		}
		if _, ok := v.fields[key]; !ok {
			v.fail(RuleFieldPermissionKeyUnknown, nodeID, "fieldPermissions names %q, which is not a top-level form field", key)
		}
	}
}

// rollbackTargets checks rollbackTargetKeys: required for type specified, and every key must
// name another approval or handle node. Keys are checked whenever present, as the original's
// designer does, so a stale list cannot linger unnoticed.
func (v *validator) rollbackTargets(f *Flow) {
	for _, n := range f.Nodes {
		if n.Kind != NodeApproval {
			continue
		}
		for _, key := range n.Task.RollbackTargetKeys {
			target, ok := f.byID[key]
			switch {
			case key == n.ID:
				v.fail(RuleRollbackTargetSelf, n.ID, "rollbackTargetKeys must not contain the node itself")
			case !ok || !target.Kind.IsTask():
				v.fail(RuleRollbackTargetUnknown, n.ID, "rollback target %q is not an approval or handle node of this flow", key)
			}
		}
	}
}

// branches checks a condition node's branch list and every condition.
func (v *validator) branches(n *Node) {
	branches := n.Condition.Branches
	if len(branches) < 2 {
		v.fail(RuleConditionMinBranches, n.ID, "a condition node needs at least 2 branches, found %d", len(branches))
	}
	ids := map[string]bool{}
	priorities := map[int]string{}
	defaults := 0
	for _, b := range branches {
		if b.ID == "" {
			v.fail(RuleConditionEmptyBranchID, n.ID, "a branch has an empty id")
			continue
		}
		if ids[b.ID] {
			v.fail(RuleConditionDuplicateBranchID, n.ID, "branch id %q is used twice", b.ID).BranchID = b.ID
			continue
		}
		ids[b.ID] = true
		if b.IsDefault {
			defaults++
			continue
		}
		if other, dup := priorities[b.Priority]; dup {
			v.fail(RuleDuplicateBranchPriority, n.ID, "branches %q and %q share priority %d", other, b.ID, b.Priority).BranchID = b.ID
		} else {
			priorities[b.Priority] = b.ID
		}
		if len(b.ConditionGroups) == 0 {
			v.fail(RuleBranchConditionsRequired, n.ID, "branch %q needs at least one condition group (only the default branch may have none)", b.ID).BranchID = b.ID
		}
	}
	if defaults != 1 {
		v.fail(RuleConditionDefaultCount, n.ID, "a condition node needs exactly one default branch, found %d", defaults)
	}
	for _, b := range branches {
		for _, g := range b.ConditionGroups {
			if len(g.Conditions) == 0 {
				v.fail(RuleConditionGroupEmpty, n.ID, "branch %q has an empty condition group", b.ID).BranchID = b.ID
				continue
			}
			for i := range g.Conditions {
				if e := v.condition(&g.Conditions[i]); e != nil {
					e.NodeID, e.BranchID = n.ID, b.ID
				}
			}
		}
	}
}

// condition checks one condition; it returns the problem it recorded, if any.
func (v *validator) condition(c *Condition) *RuleError {
	switch c.Kind {
	case ConditionField:
		if strings.TrimSpace(c.Subject) == "" {
			return v.fail(RuleConditionSubjectRequired, "", "a field condition must name its subject")
		}
		if !c.Operator.Valid() {
			return v.fail(RuleInvalidConditionOperator, "", "condition on %q has unknown operator %q", c.Subject, c.Operator)
		}
		if c.Aggregate == "" {
			if c.Column != "" {
				return v.fail(RuleColumnWithoutAggregate, "", "condition on %q names column %q without an aggregate", c.Subject, c.Column)
			}
			return nil
		}
		return v.aggregate(c)
	case ConditionExpression:
		if c.Aggregate != "" {
			return v.fail(RuleAggregateOnExpression, "", "an expression condition cannot carry an aggregate")
		}
		if strings.TrimSpace(c.Expression) == "" {
			return v.fail(RuleConditionExpressionRequired, "", "an expression condition needs an expression")
		}
		program, err := compileExpression(c.Expression)
		if err != nil {
			return v.fail(RuleConditionExpressionInvalid, "", "expression %q does not compile to a boolean: %v", c.Expression, firstLine(err.Error()))
		}
		c.program = program
		return nil
	}
	return v.fail(RuleInvalidConditionKind, "", "unknown condition kind %q", c.Kind)
}

// aggregate checks an aggregate condition: a table subject, a numeric operator, and a column
// for sum/avg (a column of that table) but none for count.
func (v *validator) aggregate(c *Condition) *RuleError {
	if !c.Aggregate.Valid() {
		return v.fail(RuleInvalidAggregate, "", "unknown aggregate %q", c.Aggregate)
	}
	table, ok := v.fields[c.Subject]
	if !ok || table.Kind != FieldTable {
		return v.fail(RuleAggregateSubjectNotTable, "", "aggregate %s needs a table field as subject, %q is not one", c.Aggregate, c.Subject)
	}
	if !c.Operator.Numeric() {
		return v.fail(RuleAggregateOperator, "", "aggregate conditions only allow eq, ne, gt, gte, lt, lte, not %q", c.Operator)
	}
	if c.Aggregate == AggregateCount {
		if c.Column != "" {
			return v.fail(RuleAggregateColumnForbidden, "", "count folds rows and takes no column")
		}
		return nil
	}
	if c.Column == "" {
		return v.fail(RuleAggregateColumnRequired, "", "aggregate %s needs a column of %q", c.Aggregate, c.Subject)
	}
	col := table.Column(c.Column)
	if col == nil {
		return v.fail(RuleAggregateColumnUnknown, "", "table %q has no column %q", c.Subject, c.Column)
	}
	if col.Kind != FieldNumber {
		return v.fail(RuleAggregateColumnNotNumeric, "", "aggregate %s needs a number column, %q of %q is %s", c.Aggregate, c.Column, c.Subject, col.Kind)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
