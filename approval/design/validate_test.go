package design

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flowDoc is a flow definition under construction in the designer's wire shape.
type flowDoc struct {
	Nodes []map[string]any `json:"nodes"`
	Edges []map[string]any `json:"edges"`
}

func (d *flowDoc) node(id string) map[string]any {
	for _, n := range d.Nodes {
		if n["id"] == id {
			return n
		}
	}
	panic("no node " + id)
}

func (d *flowDoc) data(id string) map[string]any {
	n := d.node(id)
	if n["data"] == nil {
		n["data"] = map[string]any{}
	}
	return n["data"].(map[string]any)
}

func (d *flowDoc) edge(id string) map[string]any {
	for _, e := range d.Edges {
		if e["id"] == id {
			return e
		}
	}
	panic("no edge " + id)
}

func (d *flowDoc) removeEdge(id string) {
	for i, e := range d.Edges {
		if e["id"] == id {
			d.Edges = append(d.Edges[:i], d.Edges[i+1:]...)
			return
		}
	}
	panic("no edge " + id)
}

func (d *flowDoc) addNode(id, kind string, data map[string]any) {
	n := map[string]any{"id": id, "kind": kind, "position": map[string]any{"x": 0, "y": 0}}
	if data != nil {
		n["data"] = data
	}
	d.Nodes = append(d.Nodes, n)
}

func (d *flowDoc) addEdge(id, source, target string, handle ...string) {
	e := map[string]any{"id": id, "source": source, "target": target}
	if len(handle) > 0 {
		e["sourceHandle"] = handle[0]
	}
	d.Edges = append(d.Edges, e)
}

func (d *flowDoc) json(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validFlow is start → a1 (approval) → c1 (condition) → [big: h1 (handle) → cc1 → end1,
// default: end1], with field permissions, assignees, ccs and both kinds of conditions.
func validFlow() *flowDoc {
	d := &flowDoc{}
	d.addNode("start", "start", map[string]any{"name": "Start"})
	d.addNode("a1", "approval", map[string]any{
		"name":               "Manager",
		"assignees":          []any{map[string]any{"kind": "superior", "sortOrder": 0}},
		"ccs":                []any{map[string]any{"kind": "user", "ids": []any{"u9"}, "timing": "on_approve"}},
		"fieldPermissions":   map[string]any{"amount": "visible", "reason": "required"},
		"rollbackType":       "specified",
		"rollbackTargetKeys": []any{"h1"},
	})
	d.addNode("c1", "condition", map[string]any{"branches": []any{
		map[string]any{"id": "big", "label": "Big", "priority": 1, "conditionGroups": []any{
			map[string]any{"conditions": []any{
				map[string]any{"kind": "field", "subject": "amount", "operator": "gt", "value": 1000},
				map[string]any{"kind": "field", "subject": "items", "aggregate": "sum", "column": "price", "operator": "gte", "value": 10},
			}},
			map[string]any{"conditions": []any{
				map[string]any{"kind": "expression", "expression": "formData.amount > 5000 && applicantId != ''"},
			}},
		}},
		map[string]any{"id": "small", "label": "Small", "priority": 2, "conditionGroups": []any{
			map[string]any{"conditions": []any{
				map[string]any{"kind": "field", "subject": "items", "aggregate": "count", "operator": "lt", "value": 3},
			}},
		}},
		map[string]any{"id": "other", "label": "Other", "isDefault": true, "priority": 99},
	}})
	d.addNode("h1", "handle", map[string]any{"assignees": []any{map[string]any{"kind": "role", "ids": []any{"finance"}, "sortOrder": 0}}})
	d.addNode("cc1", "cc", map[string]any{"ccs": []any{map[string]any{"kind": "form_field", "formField": "reason"}},
		"fieldPermissions": map[string]any{"amount": "hidden"}})
	d.addNode("end1", "end", nil)
	d.addEdge("e1", "start", "a1")
	d.addEdge("e2", "a1", "c1")
	d.addEdge("e3", "c1", "h1", "big")
	d.addEdge("e4", "c1", "end1", "small")
	d.addEdge("e5", "c1", "end1", "other")
	d.addEdge("e6", "h1", "cc1")
	d.addEdge("e7", "cc1", "end1")
	return d
}

func testFields() []FormField {
	return []FormField{
		{Key: "amount", Kind: FieldNumber, Label: "Amount", SortOrder: 0},
		{Key: "reason", Kind: FieldInput, Label: "Reason", SortOrder: 1},
		{Key: "items", Kind: FieldTable, Label: "Items", SortOrder: 2, Columns: []FormField{
			{Key: "name", Kind: FieldInput, Label: "Name"},
			{Key: "price", Kind: FieldNumber, Label: "Price", SortOrder: 1},
		}},
	}
}

func TestParseFlowValid(t *testing.T) {
	t.Parallel()
	f, err := ParseFlow(validFlow().json(t), testFields())
	if err != nil {
		t.Fatalf("ParseFlow: %v", err)
	}
	if got := len(f.Nodes); got != 6 {
		t.Errorf("nodes = %d, want 6", got)
	}
	if s := f.Start(); s == nil || s.ID != "start" {
		t.Errorf("Start = %v, want start", s)
	}
	if n := f.Next("start"); n == nil || n.ID != "a1" {
		t.Errorf("Next(start) = %v, want a1", n)
	}
	if n, ok := f.BranchTarget("c1", "big"); !ok || n.ID != "h1" {
		t.Errorf("BranchTarget(c1, big) = %v, %v; want h1", n, ok)
	}
	if got := f.Predecessors("end1"); strings.Join(got, ",") != "c1,c1,cc1" {
		t.Errorf("Predecessors(end1) = %v", got)
	}
	if got := len(f.Outgoing("c1")); got != 3 {
		t.Errorf("Outgoing(c1) = %d, want 3", got)
	}
	if got := len(f.Incoming("end1")); got != 3 {
		t.Errorf("Incoming(end1) = %d, want 3", got)
	}
	if Problems(validFlow().json(t), testFields()) != nil {
		t.Error("Problems of a valid flow is not nil")
	}
}

func TestParseFlowDefaults(t *testing.T) {
	t.Parallel()
	f, err := ParseFlow(validFlow().json(t), testFields())
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := f.Node("a1")
	a := a1.Task
	checks := []struct {
		name      string
		got, want any
	}{
		{"executionType", a.ExecutionType, ExecutionManual},
		{"emptyAssigneeAction", a.EmptyAssigneeAction, EmptyAutoPass},
		{"approvalMethod", a.ApprovalMethod, MethodParallel},
		{"passRule", a.PassRule, PassAll},
		{"sameApplicantAction", a.SameApplicantAction, SameApplicantSelfApprove},
		{"consecutiveApproverAction", a.ConsecutiveApproverAction, ConsecutiveNone},
		{"rollbackType", a.RollbackType, RollbackSpecified},
		{"rollbackDataStrategy", a.RollbackDataStrategy, RollbackDataKeep},
		{"timeoutAction", a.TimeoutAction, TimeoutNone},
		{"urgeCooldownMinutes", a.UrgeCooldownMinutes, 30},
		{"isTransferAllowed", a.IsTransferAllowed, true},
		{"isOpinionRequired", a.IsOpinionRequired, false},
		{"isRollbackAllowed", a.IsRollbackAllowed, true},
		{"isAddAssigneeAllowed", a.IsAddAssigneeAllowed, true},
		{"isRemoveAssigneeAllowed", a.IsRemoveAssigneeAllowed, true},
		{"isManualCcAllowed", a.IsManualCCAllowed, true},
		{"addAssigneeTypes", len(a.AddAssigneeTypes), 3},
		{"cc timing kept", a.CCs[0].Timing, CCOnApprove},
		{"name", a1.Name, "Manager"},
	}
	h1, _ := f.Node("h1")
	cc1, _ := f.Node("cc1")
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"handle approvalMethod", h1.Task.ApprovalMethod, MethodSequential},
		{"handle passRule", h1.Task.PassRule, PassAny},
		{"handle isRollbackAllowed", h1.Task.IsRollbackAllowed, false},
		{"handle isTransferAllowed", h1.Task.IsTransferAllowed, true},
		{"cc timing default", cc1.CC.CCs[0].Timing, CCAlways},
	}...)
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	// Explicit false toggles survive, a sequential node's default add-assignee types drop
	// parallel, and passRatio arrives as a decimal string.
	d := validFlow()
	data := d.data("a1")
	data["isTransferAllowed"] = false
	data["isRollbackAllowed"] = false
	data["approvalMethod"] = "sequential"
	data["passRule"] = "ratio"
	data["passRatio"] = "66.5"
	data["urgeCooldownMinutes"] = 5
	f, err = ParseFlow(d.json(t), testFields())
	if err != nil {
		t.Fatal(err)
	}
	a1, _ = f.Node("a1")
	if a1.Task.IsTransferAllowed || a1.Task.IsRollbackAllowed {
		t.Error("explicit false toggles were overwritten")
	}
	if got := a1.Task.AddAssigneeTypes; len(got) != 2 || got[0] != AddBefore || got[1] != AddAfter {
		t.Errorf("sequential addAssigneeTypes = %v, want [before after]", got)
	}
	if a1.Task.PassRatio != 66.5 || a1.Task.UrgeCooldownMinutes != 5 {
		t.Errorf("passRatio, urge = %v, %v; want 66.5, 5", a1.Task.PassRatio, a1.Task.UrgeCooldownMinutes)
	}

	// The normalized definition round-trips through ParseFlow unchanged.
	norm, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseFlow(norm, testFields())
	if err != nil {
		t.Fatalf("normalized definition does not parse: %v\n%s", err, norm)
	}
	b1, _ := g.Node("a1")
	if diff := cmp.Diff(a1.Task, b1.Task); diff != "" {
		t.Errorf("normalized task data differs (-first +round trip):\n%s", diff)
	}
}

// TestParseFlowRules breaks the valid flow one rule at a time: each variant must fail with
// that rule (and the node it concerns), and be the only problem reported.
func TestParseFlowRules(t *testing.T) {
	t.Parallel()
	for _, tt := range ruleCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := []byte(tt.raw)
			if tt.raw == "" {
				d := validFlow()
				tt.mutate(d)
				raw = d.json(t)
			}
			_, err := ParseFlow(raw, testFields())
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("ParseFlow error = %v, want a *RuleError", err)
			}
			problems := Problems(raw, testFields())
			found := false
			for _, p := range problems {
				if p.Rule == tt.rule && (tt.node == "" || p.NodeID == tt.node) {
					found = true
				}
			}
			if !found {
				t.Fatalf("problems = %v, want rule %s at node %q", problems, tt.rule, tt.node)
			}
			if !tt.multiple && (len(problems) != 1 || re.Rule != tt.rule) {
				t.Errorf("problems = %v, want only %s", problems, tt.rule)
			}
			if !strings.Contains(err.Error(), string(re.Rule)) {
				t.Errorf("message %q does not name the rule", err.Error())
			}
		})
	}
}

// TestEveryRuleHasACase: each Rule constant declared in rule.go is broken by some case above.
func TestEveryRuleHasACase(t *testing.T) {
	t.Parallel()
	file, err := parser.ParseFile(token.NewFileSet(), "rule.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tested := map[Rule]bool{}
	for _, c := range ruleCases() {
		tested[c.rule] = true
	}
	declared := 0
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Rule" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				name, _ := strconv.Unquote(lit.Value)
				declared++
				if !tested[Rule(name)] {
					t.Errorf("rule %s has no test case", name)
				}
			}
		}
	}
	if declared < 70 {
		t.Errorf("found %d Rule constants in rule.go, the parse is broken", declared)
	}
}

type ruleCase struct {
	name     string
	raw      string // used instead of the valid flow when set
	mutate   func(d *flowDoc)
	rule     Rule
	node     string
	multiple bool // the break necessarily violates further rules
}

// ruleCases break the valid flow one rule at a time.
func ruleCases() []ruleCase {
	return []ruleCase{
		{name: "not json", raw: `{"nodes": [`, rule: RuleInvalidJSON},
		{name: "no nodes", raw: `{"nodes": [], "edges": []}`, rule: RuleNoNodes},
		{name: "empty node id", mutate: func(d *flowDoc) { d.addNode("", "end", nil) }, rule: RuleEmptyNodeID},
		{name: "duplicate node id", mutate: func(d *flowDoc) { d.addNode("end1", "end", nil) }, rule: RuleDuplicateNodeID, node: "end1"},
		{name: "unknown kind", mutate: func(d *flowDoc) { d.node("h1")["kind"] = "subprocess" }, rule: RuleInvalidNodeKind, node: "h1", multiple: true},
		{name: "data does not decode", mutate: func(d *flowDoc) { d.data("a1")["timeoutHours"] = "soon" }, rule: RuleNodeDataInvalid, node: "a1", multiple: true},
		{name: "two starts", mutate: func(d *flowDoc) { d.addNode("start2", "start", nil); d.addEdge("x", "start2", "a1") }, rule: RuleStartNodeCount, multiple: true},
		{name: "no end", mutate: func(d *flowDoc) { d.node("end1")["kind"] = "cc" }, rule: RuleEndNodeCount, multiple: true},
		{name: "empty edge id", mutate: func(d *flowDoc) { d.edge("e7")["id"] = "" }, rule: RuleEmptyEdgeID, multiple: true},
		{name: "duplicate edge id", mutate: func(d *flowDoc) { d.edge("e7")["id"] = "e6" }, rule: RuleDuplicateEdgeID, multiple: true},
		{name: "unknown source", mutate: func(d *flowDoc) { d.addEdge("x", "ghost", "end1") }, rule: RuleUnknownSourceNode},
		{name: "unknown target", mutate: func(d *flowDoc) { d.addEdge("x", "cc1", "ghost") }, rule: RuleUnknownTargetNode},
		{name: "start incoming", mutate: func(d *flowDoc) { d.edge("e7")["target"] = "start" }, rule: RuleStartIncoming, node: "start", multiple: true},
		{name: "start two outgoing", mutate: func(d *flowDoc) { d.addEdge("x", "start", "end1") }, rule: RuleStartOutgoing, node: "start"},
		{name: "start handle", mutate: func(d *flowDoc) { d.edge("e1")["sourceHandle"] = "big" }, rule: RuleNodeSourceHandle, node: "start"},
		{name: "end outgoing", mutate: func(d *flowDoc) { d.addNode("end2", "end", nil); d.addEdge("x", "end1", "end2") }, rule: RuleEndOutgoing, node: "end1"},
		{name: "end without incoming", mutate: func(d *flowDoc) { d.addNode("end2", "end", nil) }, rule: RuleEndIncoming, node: "end2", multiple: true},
		{name: "task two outgoing", mutate: func(d *flowDoc) { d.addEdge("x", "h1", "end1") }, rule: RuleNodeOutgoingCount, node: "h1"},
		{name: "task no outgoing", mutate: func(d *flowDoc) { d.removeEdge("e7") }, rule: RuleNodeOutgoingCount, node: "cc1", multiple: true},
		{name: "task edge with handle", mutate: func(d *flowDoc) { d.edge("e6")["sourceHandle"] = "big" }, rule: RuleNodeSourceHandle, node: "h1"},
		{name: "cycle", mutate: func(d *flowDoc) { d.edge("e7")["target"] = "a1" }, rule: RuleGraphCycle, node: "a1", multiple: true},
		{name: "unreachable", mutate: func(d *flowDoc) {
			d.addNode("lost", "approval", nil)
			d.addEdge("x", "lost", "end1")
		}, rule: RuleNodeUnreachable, node: "lost"},
		{name: "cannot reach end", mutate: func(d *flowDoc) {
			d.addNode("sink", "end", nil)
			d.node("sink")["kind"] = "condition"
			d.data("sink")["branches"] = []any{map[string]any{"id": "only", "isDefault": true}, map[string]any{"id": "two", "priority": 1, "conditionGroups": []any{map[string]any{"conditions": []any{map[string]any{"kind": "field", "subject": "amount", "operator": "is_empty"}}}}}}
		}, rule: RuleNodeCannotReachEnd, multiple: true},

		{name: "one branch", mutate: func(d *flowDoc) {
			data := d.data("c1")
			data["branches"] = data["branches"].([]any)[2:]
			d.removeEdge("e3")
			d.removeEdge("e4")
		}, rule: RuleConditionMinBranches, node: "c1", multiple: true},
		{name: "empty branch id", mutate: func(d *flowDoc) { branch(d, 1)["id"] = "" }, rule: RuleConditionEmptyBranchID, node: "c1", multiple: true},
		{name: "duplicate branch id", mutate: func(d *flowDoc) { branch(d, 1)["id"] = "big" }, rule: RuleConditionDuplicateBranchID, node: "c1", multiple: true},
		{name: "two defaults", mutate: func(d *flowDoc) { branch(d, 1)["isDefault"] = true }, rule: RuleConditionDefaultCount, node: "c1"},
		{name: "no default", mutate: func(d *flowDoc) { delete(branch(d, 2), "isDefault") }, rule: RuleConditionDefaultCount, node: "c1", multiple: true},
		{name: "missing handle", mutate: func(d *flowDoc) { delete(d.edge("e4"), "sourceHandle") }, rule: RuleConditionMissingHandle, node: "c1", multiple: true},
		{name: "unknown handle", mutate: func(d *flowDoc) { d.edge("e4")["sourceHandle"] = "nope" }, rule: RuleConditionUnknownHandle, node: "c1", multiple: true},
		{name: "two edges for a branch", mutate: func(d *flowDoc) { d.addEdge("x", "c1", "h1", "other") }, rule: RuleConditionDuplicateHandle, node: "c1"},
		{name: "branch without edge", mutate: func(d *flowDoc) { d.removeEdge("e4") }, rule: RuleConditionBranchNoEdge, node: "c1"},
		{name: "duplicate priority", mutate: func(d *flowDoc) { branch(d, 1)["priority"] = 1 }, rule: RuleDuplicateBranchPriority, node: "c1"},
		{name: "branch without groups", mutate: func(d *flowDoc) { delete(branch(d, 1), "conditionGroups") }, rule: RuleBranchConditionsRequired, node: "c1"},
		{name: "empty group", mutate: func(d *flowDoc) {
			branch(d, 1)["conditionGroups"] = []any{map[string]any{"conditions": []any{}}}
		}, rule: RuleConditionGroupEmpty, node: "c1"},
		{name: "unknown condition kind", mutate: func(d *flowDoc) { cond(d, 0)["kind"] = "script" }, rule: RuleInvalidConditionKind, node: "c1"},
		{name: "no subject", mutate: func(d *flowDoc) { cond(d, 0)["subject"] = " " }, rule: RuleConditionSubjectRequired, node: "c1"},
		{name: "unknown operator", mutate: func(d *flowDoc) { cond(d, 0)["operator"] = "between" }, rule: RuleInvalidConditionOperator, node: "c1"},
		{name: "column without aggregate", mutate: func(d *flowDoc) { cond(d, 0)["column"] = "price" }, rule: RuleColumnWithoutAggregate, node: "c1"},
		{name: "empty expression", mutate: func(d *flowDoc) { exprCond(d)["expression"] = "" }, rule: RuleConditionExpressionRequired, node: "c1"},
		{name: "broken expression", mutate: func(d *flowDoc) { exprCond(d)["expression"] = "formData.amount >" }, rule: RuleConditionExpressionInvalid, node: "c1"},
		{name: "non-boolean expression", mutate: func(d *flowDoc) { exprCond(d)["expression"] = `"text"` }, rule: RuleConditionExpressionInvalid, node: "c1"},
		{name: "aggregate on expression", mutate: func(d *flowDoc) { exprCond(d)["aggregate"] = "sum" }, rule: RuleAggregateOnExpression, node: "c1"},
		{name: "unknown aggregate", mutate: func(d *flowDoc) { cond(d, 1)["aggregate"] = "max" }, rule: RuleInvalidAggregate, node: "c1"},
		{name: "aggregate over scalar", mutate: func(d *flowDoc) { cond(d, 1)["subject"] = "amount" }, rule: RuleAggregateSubjectNotTable, node: "c1"},
		{name: "aggregate string operator", mutate: func(d *flowDoc) { cond(d, 1)["operator"] = "contains" }, rule: RuleAggregateOperator, node: "c1"},
		{name: "sum without column", mutate: func(d *flowDoc) { delete(cond(d, 1), "column") }, rule: RuleAggregateColumnRequired, node: "c1"},
		{name: "sum unknown column", mutate: func(d *flowDoc) { cond(d, 1)["column"] = "weight" }, rule: RuleAggregateColumnUnknown, node: "c1"},
		{name: "sum over a text column", mutate: func(d *flowDoc) { cond(d, 1)["column"] = "name" }, rule: RuleAggregateColumnNotNumeric, node: "c1"},
		{name: "count with column", mutate: func(d *flowDoc) { countCond(d)["column"] = "price" }, rule: RuleAggregateColumnForbidden, node: "c1"},

		{name: "unknown assignee kind", mutate: func(d *flowDoc) { d.data("a1")["assignees"] = []any{map[string]any{"kind": "boss"}} }, rule: RuleInvalidAssigneeKind, node: "a1"},
		{name: "form_field assignee without field", mutate: func(d *flowDoc) { d.data("a1")["assignees"] = []any{map[string]any{"kind": "form_field"}} }, rule: RuleAssigneeFormFieldRequired, node: "a1"},
		{name: "role assignee without ids", mutate: func(d *flowDoc) { d.data("h1")["assignees"] = []any{map[string]any{"kind": "role"}} }, rule: RuleAssigneeIDsRequired, node: "h1"},
		{name: "department cc without ids", mutate: func(d *flowDoc) { d.data("cc1")["ccs"] = []any{map[string]any{"kind": "department", "ids": []any{}}} }, rule: RuleCCIDsRequired, node: "cc1"},
		{name: "unknown cc kind", mutate: func(d *flowDoc) { d.data("cc1")["ccs"] = []any{map[string]any{"kind": "self"}} }, rule: RuleInvalidCCKind, node: "cc1"},
		{name: "form_field cc without field", mutate: func(d *flowDoc) { d.data("a1")["ccs"] = []any{map[string]any{"kind": "form_field"}} }, rule: RuleCCFormFieldRequired, node: "a1"},
		{name: "unknown cc timing", mutate: func(d *flowDoc) {
			d.data("a1")["ccs"] = []any{map[string]any{"kind": "user", "ids": []any{"u"}, "timing": "later"}}
		}, rule: RuleInvalidCCTiming, node: "a1"},
		{name: "unknown execution type", mutate: func(d *flowDoc) { d.data("a1")["executionType"] = "robot" }, rule: RuleInvalidExecutionType, node: "a1"},
		{name: "unknown empty assignee action", mutate: func(d *flowDoc) { d.data("a1")["emptyAssigneeAction"] = "panic" }, rule: RuleInvalidEmptyAssigneeAction, node: "a1"},
		{name: "unknown timeout action", mutate: func(d *flowDoc) { d.data("h1")["timeoutAction"] = "escalate" }, rule: RuleInvalidTimeoutAction, node: "h1"},
		{name: "negative timeout", mutate: func(d *flowDoc) { d.data("h1")["timeoutHours"] = -1 }, rule: RuleNegativeDuration, node: "h1"},
		{name: "unknown approval method", mutate: func(d *flowDoc) { d.data("a1")["approvalMethod"] = "random" }, rule: RuleInvalidApprovalMethod, node: "a1"},
		{name: "unknown pass rule", mutate: func(d *flowDoc) { d.data("a1")["passRule"] = "any_reject" }, rule: RuleInvalidPassRule, node: "a1"},
		{name: "ratio without percentage", mutate: func(d *flowDoc) { d.data("a1")["passRule"] = "ratio" }, rule: RulePassRatioRange, node: "a1"},
		{name: "ratio over 100", mutate: func(d *flowDoc) { d.data("a1")["passRule"] = "ratio"; d.data("a1")["passRatio"] = 150 }, rule: RulePassRatioRange, node: "a1"},
		{name: "unknown same applicant action", mutate: func(d *flowDoc) { d.data("a1")["sameApplicantAction"] = "skip" }, rule: RuleInvalidSameApplicantAction, node: "a1"},
		{name: "unknown consecutive action", mutate: func(d *flowDoc) { d.data("a1")["consecutiveApproverAction"] = "merge" }, rule: RuleInvalidConsecutiveApproverAction, node: "a1"},
		{name: "unknown rollback type", mutate: func(d *flowDoc) { d.data("a1")["rollbackType"] = "home" }, rule: RuleInvalidRollbackType, node: "a1"},
		{name: "unknown rollback data strategy", mutate: func(d *flowDoc) { d.data("a1")["rollbackDataStrategy"] = "merge" }, rule: RuleInvalidRollbackDataStrategy, node: "a1"},
		{name: "unknown add assignee type", mutate: func(d *flowDoc) { d.data("a1")["addAssigneeTypes"] = []any{"around"} }, rule: RuleInvalidAddAssigneeType, node: "a1"},
		{name: "sequential with parallel add", mutate: func(d *flowDoc) {
			d.data("a1")["approvalMethod"] = "sequential"
			d.data("a1")["addAssigneeTypes"] = []any{"before", "parallel"}
		}, rule: RuleSequentialParallelAddAssignee, node: "a1"},
		{name: "handle auto_reject", mutate: func(d *flowDoc) { d.data("h1")["executionType"] = "auto_reject" }, rule: RuleHandleExecutionAutoReject, node: "h1"},
		{name: "handle timeout auto_reject", mutate: func(d *flowDoc) { d.data("h1")["timeoutAction"] = "auto_reject" }, rule: RuleHandleTimeoutAutoReject, node: "h1"},
		{name: "transfer_specified without users", mutate: func(d *flowDoc) { d.data("a1")["emptyAssigneeAction"] = "transfer_specified" }, rule: RuleFallbackUsersRequired, node: "a1"},
		{name: "transfer_admin without admins", mutate: func(d *flowDoc) { d.data("h1")["emptyAssigneeAction"] = "transfer_admin" }, rule: RuleAdminUsersRequired, node: "h1"},
		{name: "specified without targets", mutate: func(d *flowDoc) { delete(d.data("a1"), "rollbackTargetKeys") }, rule: RuleRollbackTargetsRequired, node: "a1"},
		{name: "rollback target unknown", mutate: func(d *flowDoc) { d.data("a1")["rollbackTargetKeys"] = []any{"ghost"} }, rule: RuleRollbackTargetUnknown, node: "a1"},
		{name: "rollback target not a task", mutate: func(d *flowDoc) { d.data("a1")["rollbackTargetKeys"] = []any{"cc1"} }, rule: RuleRollbackTargetUnknown, node: "a1"},
		{name: "rollback target self", mutate: func(d *flowDoc) { d.data("a1")["rollbackTargetKeys"] = []any{"a1"} }, rule: RuleRollbackTargetSelf, node: "a1"},
		{name: "unknown permission", mutate: func(d *flowDoc) { d.data("a1")["fieldPermissions"] = map[string]any{"amount": "writable"} }, rule: RuleInvalidFieldPermission, node: "a1"},
		{name: "permission for unknown field", mutate: func(d *flowDoc) { d.data("h1")["fieldPermissions"] = map[string]any{"price": "editable"} }, rule: RuleFieldPermissionKeyUnknown, node: "h1"},
		{name: "cc node editable", mutate: func(d *flowDoc) { d.data("cc1")["fieldPermissions"] = map[string]any{"amount": "editable"} }, rule: RuleCCFieldPermissionNotAllowed, node: "cc1"},
		{name: "required with timeout auto_pass", mutate: func(d *flowDoc) { d.data("a1")["timeoutAction"] = "auto_pass" }, rule: RuleFieldPermissionRequiredAutoPass, node: "a1"},
	}
}

func branch(d *flowDoc, i int) map[string]any {
	return d.data("c1")["branches"].([]any)[i].(map[string]any)
}

// cond returns condition i of the first group of the "big" branch.
func cond(d *flowDoc, i int) map[string]any {
	groups := branch(d, 0)["conditionGroups"].([]any)
	return groups[0].(map[string]any)["conditions"].([]any)[i].(map[string]any)
}

func exprCond(d *flowDoc) map[string]any {
	groups := branch(d, 0)["conditionGroups"].([]any)
	return groups[1].(map[string]any)["conditions"].([]any)[0].(map[string]any)
}

func countCond(d *flowDoc) map[string]any {
	groups := branch(d, 1)["conditionGroups"].([]any)
	return groups[0].(map[string]any)["conditions"].([]any)[0].(map[string]any)
}

func TestRuleErrorMessage(t *testing.T) {
	t.Parallel()
	e := &RuleError{Rule: RuleConditionBranchNoEdge, NodeID: "c1", BranchID: "b", Message: "branch \"b\" has no outgoing edge"}
	want := `invalid flow design [condition_branch_no_edge] (node c1, branch b): branch "b" has no outgoing edge`
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
