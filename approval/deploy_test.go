package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/svctest"
)

// formDoc is a form-editor document as the original's designer saves it: a pc layout with a
// section, tabs and a table subform, and a mobile layout repeating a field (deduplicated).
const formDoc = `{"version":2,"presentations":{
 "pc":{"children":[
  {"id":"S1","type":"section","children":[{"id":"F1","type":"number","key":"amount","label":"Amount","precision":2,"validate":{"required":true}}]},
  {"id":"T1","type":"tabs","tabs":[{"key":"t1","label":"One","children":[{"id":"F2","type":"textfield","key":"reason","label":"Reason","validate":{"maxLength":50}}]}]},
  {"id":"Sub","type":"subform","variant":"table","key":"items","label":"Items","template":[
   {"id":"C1","type":"textfield","key":"desc","label":"Desc"},{"id":"C2","type":"number","key":"price","label":"Price","precision":2}]}]},
 "mobile":{"children":[{"id":"M1","type":"number","key":"amount","label":"Amount","precision":2}]}}}`

// baseFlow is a valid definition using every node kind: start → approval → condition
// (big → handle → end, default → cc → end).
func baseFlow() map[string]any {
	var m map[string]any
	err := json.Unmarshal([]byte(`{"nodes":[
 {"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":100},"data":{"name":"Manager","assignees":[{"kind":"superior","sortOrder":0},{"kind":"user","ids":["u1"],"sortOrder":1}],
   "ccs":[{"kind":"user","ids":["u2"]}],"fieldPermissions":{"amount":"editable"},"passRule":"ratio","passRatio":"66.67","rollbackType":"start"}},
 {"id":"c","kind":"condition","position":{"x":0,"y":200},"data":{"name":"Amount?","branches":[
   {"id":"big","label":"Big","priority":1,"conditionGroups":[{"conditions":[{"kind":"field","subject":"amount","operator":"gt","value":1000}]}]},
   {"id":"dflt","label":"Other","isDefault":true,"priority":2}]}},
 {"id":"h","kind":"handle","position":{"x":-100,"y":300},"data":{"name":"Pay","assignees":[{"kind":"role","ids":["finance"],"sortOrder":0}]}},
 {"id":"cc","kind":"cc","position":{"x":100,"y":300},"data":{"name":"Notify","ccs":[{"kind":"role","ids":["hr"],"timing":"always"}],"fieldPermissions":{"amount":"visible"}}},
 {"id":"e","kind":"end","position":{"x":0,"y":400},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"c"},
  {"id":"e3","source":"c","target":"h","sourceHandle":"big"},{"id":"e4","source":"c","target":"cc","sourceHandle":"dflt"},
  {"id":"e5","source":"h","target":"e"},{"id":"e6","source":"cc","target":"e"}]}`), &m)
	if err != nil {
		panic(err)
	}
	return m
}

func nodeOf(def map[string]any, id string) map[string]any {
	for _, n := range def["nodes"].([]any) {
		if n.(map[string]any)["id"] == id {
			return n.(map[string]any)
		}
	}
	panic("no node " + id)
}

func dataOf(def map[string]any, id string) map[string]any {
	return nodeOf(def, id)["data"].(map[string]any)
}

func edgeOf(def map[string]any, id string) map[string]any {
	for _, e := range def["edges"].([]any) {
		if e.(map[string]any)["id"] == id {
			return e.(map[string]any)
		}
	}
	panic("no edge " + id)
}

func addNode(def map[string]any, n string) {
	var v any
	json.Unmarshal([]byte(n), &v)
	def["nodes"] = append(def["nodes"].([]any), v)
}

func addEdge(def map[string]any, id, source, target string) {
	def["edges"] = append(def["edges"].([]any), map[string]any{"id": id, "source": source, "target": target})
}

func branch(def map[string]any, i int) map[string]any {
	return dataOf(def, "c")["branches"].([]any)[i].(map[string]any)
}

func cond(def map[string]any, c string) {
	var v any
	json.Unmarshal([]byte(c), &v)
	branch(def, 0)["conditionGroups"] = []any{map[string]any{"conditions": []any{v}}}
}

// ruleCases break baseFlow in one way each: one case per deploy rule of wire-approval §5 (and
// the finer rules of package design that the original's designer names). Two rules of package
// design have no case here: invalid_json (the envelope already is JSON) and
// node_cannot_reach_end (every graph breaking it through /api breaks an earlier rule first);
// design's own tests cover both.
var ruleCases = []struct {
	rule   string
	mutate func(def map[string]any)
}{
	{"no_nodes", func(d map[string]any) { d["nodes"], d["edges"] = []any{}, []any{} }},
	{"empty_node_id", func(d map[string]any) { addNode(d, `{"id":"","kind":"end","position":{"x":0,"y":0}}`) }},
	{"duplicate_node_id", func(d map[string]any) { addNode(d, `{"id":"e","kind":"end","position":{"x":0,"y":0}}`) }},
	{"invalid_node_kind", func(d map[string]any) { nodeOf(d, "h")["kind"] = "subprocess" }},
	{"node_data_invalid", func(d map[string]any) { dataOf(d, "a")["assignees"] = "everyone" }},
	{"start_node_count", func(d map[string]any) { addNode(d, `{"id":"s2","kind":"start","position":{"x":0,"y":0}}`) }},
	{"end_node_count", func(d map[string]any) { nodeOf(d, "e")["kind"] = "handle" }},
	{"empty_edge_id", func(d map[string]any) { edgeOf(d, "e6")["id"] = "" }},
	{"duplicate_edge_id", func(d map[string]any) { edgeOf(d, "e6")["id"] = "e5" }},
	{"unknown_source_node", func(d map[string]any) { edgeOf(d, "e6")["source"] = "zz" }},
	{"unknown_target_node", func(d map[string]any) { edgeOf(d, "e6")["target"] = "zz" }},
	{"start_incoming", func(d map[string]any) { edgeOf(d, "e6")["target"] = "s" }},
	{"start_outgoing", func(d map[string]any) { addEdge(d, "e7", "s", "e") }},
	{"end_outgoing", func(d map[string]any) { addEdge(d, "e7", "e", "h") }},
	{"end_incoming", func(d map[string]any) { addNode(d, `{"id":"e2","kind":"end","position":{"x":0,"y":0}}`) }},
	{"node_outgoing_count", func(d map[string]any) { addEdge(d, "e7", "a", "e") }},
	{"node_source_handle", func(d map[string]any) { edgeOf(d, "e1")["sourceHandle"] = "big" }},
	{"graph_cycle", func(d map[string]any) { edgeOf(d, "e5")["target"] = "a" }},
	{"node_unreachable", func(d map[string]any) {
		addNode(d, `{"id":"x","kind":"handle","position":{"x":0,"y":0},"data":{"name":"X"}}`)
		addEdge(d, "e7", "x", "e")
	}},
	{"condition_min_branches", func(d map[string]any) {
		dataOf(d, "c")["branches"] = []any{branch(d, 1)}
		edgeOf(d, "e3")["sourceHandle"] = "dflt"
	}},
	{"condition_empty_branch_id", func(d map[string]any) { branch(d, 0)["id"] = "" }},
	{"condition_duplicate_branch_id", func(d map[string]any) { branch(d, 1)["id"] = "big" }},
	{"condition_default_count", func(d map[string]any) {
		branch(d, 1)["isDefault"], branch(d, 1)["conditionGroups"] = false, branch(d, 0)["conditionGroups"]
	}},
	{"condition_missing_handle", func(d map[string]any) { delete(edgeOf(d, "e3"), "sourceHandle") }},
	{"condition_unknown_handle", func(d map[string]any) { edgeOf(d, "e3")["sourceHandle"] = "zzz" }},
	{"condition_duplicate_handle", func(d map[string]any) { edgeOf(d, "e4")["sourceHandle"] = "big" }},
	{"condition_branch_no_edge", func(d map[string]any) {
		dataOf(d, "c")["branches"] = append(dataOf(d, "c")["branches"].([]any), map[string]any{"id": "mid", "label": "Mid", "priority": 3,
			"conditionGroups": []any{map[string]any{"conditions": []any{map[string]any{"kind": "field", "subject": "amount", "operator": "gt", "value": 10}}}}})
	}},
	{"branch_conditions_required", func(d map[string]any) { branch(d, 0)["conditionGroups"] = []any{} }},
	{"condition_group_empty", func(d map[string]any) {
		branch(d, 0)["conditionGroups"] = []any{map[string]any{"conditions": []any{}}}
	}},
	{"invalid_condition_kind", func(d map[string]any) { cond(d, `{"kind":"sql","subject":"amount","operator":"gt","value":1}`) }},
	{"condition_subject_required", func(d map[string]any) { cond(d, `{"kind":"field","subject":"","operator":"gt","value":1}`) }},
	{"invalid_condition_operator", func(d map[string]any) { cond(d, `{"kind":"field","subject":"amount","operator":"between","value":1}`) }},
	{"condition_expression_required", func(d map[string]any) { cond(d, `{"kind":"expression","expression":""}`) }},
	{"condition_expression_invalid", func(d map[string]any) { cond(d, `{"kind":"expression","expression":"formData.amount >"}`) }},
	{"aggregate_subject_not_table", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"amount","aggregate":"sum","column":"price","operator":"gt","value":1}`)
	}},
	{"aggregate_operator", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"sum","column":"price","operator":"contains","value":1}`)
	}},
	{"aggregate_column_required", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"sum","operator":"gt","value":1}`)
	}},
	{"aggregate_column_forbidden", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"count","column":"price","operator":"gt","value":1}`)
	}},
	{"aggregate_column_unknown", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"sum","column":"nope","operator":"gt","value":1}`)
	}},
	{"aggregate_on_expression", func(d map[string]any) {
		cond(d, `{"kind":"expression","expression":"formData.amount > 1","aggregate":"sum"}`)
	}},
	{"invalid_aggregate", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"max","column":"price","operator":"gt","value":1}`)
	}},
	{"aggregate_column_not_numeric", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","aggregate":"sum","column":"desc","operator":"gt","value":1}`)
	}},
	{"column_without_aggregate", func(d map[string]any) {
		cond(d, `{"kind":"field","subject":"items","column":"price","operator":"gt","value":1}`)
	}},
	{"duplicate_branch_priority", func(d map[string]any) { // two conditional branches at priority 1
		dataOf(d, "c")["branches"] = append(dataOf(d, "c")["branches"].([]any), map[string]any{"id": "mid", "label": "Mid", "priority": 1,
			"conditionGroups": []any{map[string]any{"conditions": []any{map[string]any{"kind": "field", "subject": "amount", "operator": "gt", "value": 10}}}}})
		d["edges"] = append(d["edges"].([]any), map[string]any{"id": "e7", "source": "c", "target": "h", "sourceHandle": "mid"})
	}},
	{"assignee_ids_required", func(d map[string]any) {
		dataOf(d, "h")["assignees"] = []any{map[string]any{"kind": "role", "sortOrder": 0}}
	}},
	{"cc_ids_required", func(d map[string]any) {
		dataOf(d, "cc")["ccs"] = []any{map[string]any{"kind": "department", "ids": []any{}}}
	}},
	{"cc_form_field_required", func(d map[string]any) { dataOf(d, "a")["ccs"] = []any{map[string]any{"kind": "form_field"}} }},
	{"invalid_empty_assignee_action", func(d map[string]any) { dataOf(d, "a")["emptyAssigneeAction"] = "panic" }},
	{"invalid_timeout_action", func(d map[string]any) { dataOf(d, "h")["timeoutAction"] = "escalate" }},
	{"handle_timeout_auto_reject", func(d map[string]any) { dataOf(d, "h")["timeoutAction"] = "auto_reject" }},
	{"invalid_same_applicant_action", func(d map[string]any) { dataOf(d, "a")["sameApplicantAction"] = "skip" }},
	{"invalid_consecutive_approver_action", func(d map[string]any) { dataOf(d, "a")["consecutiveApproverAction"] = "merge" }},
	{"invalid_rollback_type", func(d map[string]any) { dataOf(d, "a")["rollbackType"] = "home" }},
	{"invalid_rollback_data_strategy", func(d map[string]any) { dataOf(d, "a")["rollbackDataStrategy"] = "merge" }},
	{"invalid_add_assignee_type", func(d map[string]any) { dataOf(d, "a")["addAssigneeTypes"] = []any{"around"} }},
	{"sequential_parallel_add_assignee", func(d map[string]any) {
		a := dataOf(d, "a")
		a["approvalMethod"], a["addAssigneeTypes"] = "sequential", []any{"before", "parallel"}
	}},
	{"invalid_assignee_kind", func(d map[string]any) {
		dataOf(d, "a")["assignees"] = []any{map[string]any{"kind": "boss", "sortOrder": 0}}
	}},
	{"assignee_form_field_required", func(d map[string]any) {
		dataOf(d, "a")["assignees"] = []any{map[string]any{"kind": "form_field", "sortOrder": 0}}
	}},
	{"invalid_cc_kind", func(d map[string]any) {
		dataOf(d, "cc")["ccs"] = []any{map[string]any{"kind": "team", "ids": []any{"x"}}}
	}},
	{"invalid_cc_timing", func(d map[string]any) {
		dataOf(d, "a")["ccs"] = []any{map[string]any{"kind": "user", "ids": []any{"x"}, "timing": "never"}}
	}},
	{"invalid_execution_type", func(d map[string]any) { dataOf(d, "a")["executionType"] = "robot" }},
	{"invalid_pass_rule", func(d map[string]any) { dataOf(d, "a")["passRule"] = "most" }},
	{"invalid_approval_method", func(d map[string]any) { dataOf(d, "a")["approvalMethod"] = "random" }},
	{"handle_execution_auto_reject", func(d map[string]any) { dataOf(d, "h")["executionType"] = "auto_reject" }},
	{"fallback_users_required", func(d map[string]any) { dataOf(d, "a")["emptyAssigneeAction"] = "transfer_specified" }},
	{"admin_users_required", func(d map[string]any) { dataOf(d, "a")["emptyAssigneeAction"] = "transfer_admin" }},
	{"pass_ratio_range", func(d map[string]any) { dataOf(d, "a")["passRatio"] = 150 }},
	{"negative_duration", func(d map[string]any) { dataOf(d, "a")["timeoutHours"] = -1 }},
	{"rollback_targets_required", func(d map[string]any) { dataOf(d, "a")["rollbackType"] = "specified" }},
	{"rollback_target_unknown", func(d map[string]any) {
		dataOf(d, "a")["rollbackType"], dataOf(d, "a")["rollbackTargetKeys"] = "specified", []any{"zz"}
	}},
	{"rollback_target_self", func(d map[string]any) {
		dataOf(d, "a")["rollbackType"], dataOf(d, "a")["rollbackTargetKeys"] = "specified", []any{"a"}
	}},
	{"invalid_field_permission", func(d map[string]any) { dataOf(d, "a")["fieldPermissions"] = map[string]any{"amount": "write"} }},
	{"field_permission_key_unknown", func(d map[string]any) { dataOf(d, "a")["fieldPermissions"] = map[string]any{"nope": "visible"} }},
	{"cc_field_permission_not_allowed", func(d map[string]any) { dataOf(d, "cc")["fieldPermissions"] = map[string]any{"amount": "editable"} }},
	{"field_permission_required_auto_pass", func(d map[string]any) {
		a := dataOf(d, "a")
		a["timeoutHours"], a["timeoutAction"], a["fieldPermissions"] = 4, "auto_pass", map[string]any{"amount": "required"}
	}},
}

// TestDeploy deploys on the real server on the three databases: the valid graph with a
// form-editor document (formFields derived, flowSchema stored as sent, nodes, rules and edges
// materialised with their defaults), every broken variant of ruleCases (40005 naming the rule),
// form documents that abort (40010), storage modes, tenancy, publishing and the events.
func TestDeploy(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		rec := &recorder{}
		srv := newFlowServer(t, kind, rec)
		ids := map[string]string{}
		run(t, srv, []step{
			{name: "cat", resource: catR, action: "create", params: `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`},
			{name: "flow", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"exp","name":"Expense","categoryId":"$cat$","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`},
		}, ids)
		def, _ := json.Marshal(baseFlow())
		bare := baseFlow()
		delete(dataOf(bare, "a"), "fieldPermissions")
		delete(dataOf(bare, "cc"), "fieldPermissions")
		noForm, _ := json.Marshal(bare)
		deploy := func(def, form string) string {
			return `{"flowId":"` + ids["flow"] + `","description":"v","flowDefinition":` + def + `,"formSchema":` + form + `}`
		}
		en := i18n.MustNew(i18n.English, approval.Messages())
		for _, rc := range ruleCases {
			d := baseFlow()
			rc.mutate(d)
			b, _ := json.Marshal(d)
			var p any
			json.Unmarshal([]byte(deploy(string(b), formDoc)), &p)
			r := srv.Call(t, flowR, "deploy", p, svctest.As(alice))
			// the rule's catalogue text, up to its first value, and no English rule code
			text, _, _ := strings.Cut(en.T("approval_design_flow_"+rc.rule, nil), "{{")
			if r.Code != approval.ErrCodeInvalidFlowDesign || !strings.Contains(r.Message, text) || strings.Contains(r.Message, "["+rc.rule+"]") {
				t.Errorf("rule %s: code %d, message %q; want 40005 with the rule's text %q", rc.rule, r.Code, r.Message, text)
			}
		}
		steps := []step{
			{name: "abort: switch widget", resource: flowR, action: "deploy",
				params:   deploy(string(def), `{"version":2,"presentations":{"pc":{"children":[{"id":"X","type":"switch","key":"ok","label":"OK"}]}}}`),
				wantCode: approval.ErrCodeInvalidFormDesign},
			{name: "abort: kind conflict across devices", resource: flowR, action: "deploy",
				params:   deploy(string(def), `{"version":2,"presentations":{"pc":{"children":[{"id":"A","type":"number","key":"amount","label":"A"}]},"mobile":{"children":[{"id":"B","type":"textfield","key":"amount","label":"A"}]}}}`),
				wantCode: approval.ErrCodeInvalidFormDesign},
			{name: "unknown field in a permission without a form", resource: flowR, action: "deploy", params: deploy(string(def), `null`), wantCode: approval.ErrCodeInvalidFlowDesign},
			{name: "table storage without a form", resource: flowR, action: "deploy", params: strings.Replace(deploy(string(def), `null`), `"description"`, `"storageMode":"table","description"`, 1), wantCode: approval.ErrCodeInvalidStorageMode},
			{name: "bad storage", resource: flowR, action: "deploy", params: strings.Replace(deploy(string(def), formDoc), `"description"`, `"storageMode":"xml","description"`, 1), wantCode: approval.ErrCodeInvalidStorageMode},
			{name: "cross-tenant deploy", as: bob, resource: flowR, action: "deploy", params: deploy(string(def), formDoc), wantCode: approval.ErrCodeFlowNotFound},
			{name: "v1", resource: flowR, action: "deploy", params: deploy(string(def), formDoc), check: all(
				want("version", 1, "status", "draft", "storageMode", "json", "description", "v", "flowId", "$flow", "publishedAt", nil,
					"flowSchema.nodes.1.data.passRatio", "66.67", "formSchema.version", 2,
					"formFields.0.key", "amount", "formFields.0.kind", "number", "formFields.0.isRequired", true,
					"formFields.1.key", "reason", "formFields.2.kind", "table", "formFields.2.columns.1.key", "price"),
				length("formFields", 3))},
			{name: "graph of the draft", resource: flowR, action: "get_graph", params: `{"flowId":"$flow$","versionId":"$v1$"}`, check: all(
				length("nodes", 6), length("edges", 6),
				want("version.status", "draft", "nodes.1.key", "a", "nodes.1.kind", "approval", "nodes.1.passRule", "ratio", "nodes.1.passRatio", "66.67",
					"nodes.1.fieldPermissions", map[string]string{"amount": "editable"}, "nodes.1.rollbackType", "start", "nodes.1.rollbackDataStrategy", "keep",
					"nodes.1.urgeCooldownMinutes", 30, "nodes.1.addAssigneeTypes", []string{"before", "after", "parallel"},
					"nodes.3.kind", "handle", "nodes.3.approvalMethod", "sequential", "nodes.3.passRule", "any",
					"nodes.4.kind", "cc", "nodes.0.passRatio", "100", "nodes.2.branches.1.isDefault", true,
					"edges.2.sourceNodeKey", "c", "edges.2.targetNodeKey", "h", "edges.2.sourceHandle", "big", "edges.2.key", "e3", "edges.0.sourceHandle", nil))},
			{name: "no published graph yet", resource: flowR, action: "get_graph", params: `{"flowId":"$flow$"}`, check: want("version", nil)},
			{name: "v2 without form", resource: flowR, action: "deploy", params: deploy(string(noForm), `null`),
				check: want("version", 2, "formFields", nil, "formSchema", nil)},
			{name: "versions", resource: flowR, action: "find_versions", params: `{"flowId":"$flow$"}`, check: all(length("", 2),
				want("0.version", 2, "1.version", 1, "1.status", "draft", "0.createdBy", "alice", "0.flowSchema", nil))},
			{name: "publish v1", resource: flowR, action: "publish_version", params: `{"versionId":"$v1$"}`},
			{name: "republish v1", resource: flowR, action: "publish_version", params: `{"versionId":"$v1$"}`, wantCode: approval.ErrCodeVersionNotDraft},
			{name: "publish cross-tenant", as: bob, resource: flowR, action: "publish_version", params: `{"versionId":"$v2 without form$"}`, wantCode: approval.ErrCodeVersionNotFound},
			{name: "current 1", resource: flowR, action: "get_graph", params: `{"flowId":"$flow$"}`, check: all(want("flow.currentVersion", 1, "version.version", 1, "version.status", "published", "version.publishedBy", "alice"), length("nodes", 6))},
			{name: "publish v2", resource: flowR, action: "publish_version", params: `{"versionId":"$v2 without form$"}`},
			{name: "after v2", resource: flowR, action: "find_versions", params: `{"flowId":"$flow$"}`, check: want("0.status", "published", "1.status", "archived")},
			{name: "current 2", resource: flowR, action: "get_graph", params: `{"flowId":"$flow$"}`, check: want("flow.currentVersion", 2, "version.version", 2)},
			{name: "super-admin reads the graph", as: root, resource: flowR, action: "get_graph", params: `{"flowId":"$flow$","tenantId":"t1"}`, check: want("version.version", 2)},
		}
		run(t, srv, withIDNames(steps, ids), ids)
		ctx := context.Background()
		for table, n := range map[string]int64{"apv_flow_node": 12, "apv_flow_edge": 12, "apv_flow_node_assignee": 6, "apv_flow_node_cc": 4} {
			got, err := srv.DB().NewSelect().Table(table).Count(ctx)
			if err != nil || got != n {
				t.Errorf("%s rows = %d %v, want %d", table, got, err, n)
			}
		}
		var events []string
		for _, e := range rec.snapshot() {
			events = append(events, e[:strings.IndexByte(e, ' ')])
		}
		wantEvents := "approval.flow.created approval.flow.deployed approval.flow.deployed approval.flow.published approval.flow.published"
		if got := strings.Join(events, " "); got != wantEvents {
			t.Errorf("events = %s, want %s", got, wantEvents)
		}
	})
}
