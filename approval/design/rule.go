package design

import "fmt"

// Rule names one deploy-validation rule of wire-approval §5. The names are the stable codes the
// original's flow designer uses for the same checks (its client-side validator mirrors the
// server), so a designer can match a server rejection to its own marker.
type Rule string

// Graph structure rules.
const (
	RuleInvalidJSON        Rule = "invalid_json"
	RuleNoNodes            Rule = "no_nodes"
	RuleEmptyNodeID        Rule = "empty_node_id"
	RuleDuplicateNodeID    Rule = "duplicate_node_id"
	RuleInvalidNodeKind    Rule = "invalid_node_kind"
	RuleNodeDataInvalid    Rule = "node_data_invalid"
	RuleStartNodeCount     Rule = "start_node_count"
	RuleEndNodeCount       Rule = "end_node_count"
	RuleEmptyEdgeID        Rule = "empty_edge_id"
	RuleDuplicateEdgeID    Rule = "duplicate_edge_id"
	RuleUnknownSourceNode  Rule = "unknown_source_node"
	RuleUnknownTargetNode  Rule = "unknown_target_node"
	RuleStartIncoming      Rule = "start_incoming"
	RuleStartOutgoing      Rule = "start_outgoing"
	RuleEndOutgoing        Rule = "end_outgoing"
	RuleEndIncoming        Rule = "end_incoming"
	RuleNodeOutgoingCount  Rule = "node_outgoing_count"
	RuleNodeSourceHandle   Rule = "node_source_handle"
	RuleGraphCycle         Rule = "graph_cycle"
	RuleNodeUnreachable    Rule = "node_unreachable"
	RuleNodeCannotReachEnd Rule = "node_cannot_reach_end"
)

// Condition node rules.
const (
	RuleConditionMinBranches        Rule = "condition_min_branches"
	RuleConditionEmptyBranchID      Rule = "condition_empty_branch_id"
	RuleConditionDuplicateBranchID  Rule = "condition_duplicate_branch_id"
	RuleConditionDefaultCount       Rule = "condition_default_count"
	RuleConditionMissingHandle      Rule = "condition_missing_handle"
	RuleConditionUnknownHandle      Rule = "condition_unknown_handle"
	RuleConditionDuplicateHandle    Rule = "condition_duplicate_handle"
	RuleConditionBranchNoEdge       Rule = "condition_branch_no_edge"
	RuleDuplicateBranchPriority     Rule = "duplicate_branch_priority"
	RuleBranchConditionsRequired    Rule = "branch_conditions_required"
	RuleConditionGroupEmpty         Rule = "condition_group_empty"
	RuleInvalidConditionKind        Rule = "invalid_condition_kind"
	RuleConditionSubjectRequired    Rule = "condition_subject_required"
	RuleInvalidConditionOperator    Rule = "invalid_condition_operator"
	RuleConditionExpressionRequired Rule = "condition_expression_required"
	RuleConditionExpressionInvalid  Rule = "condition_expression_invalid"
	RuleInvalidAggregate            Rule = "invalid_aggregate"
	RuleAggregateOnExpression       Rule = "aggregate_on_expression"
	RuleAggregateSubjectNotTable    Rule = "aggregate_subject_not_table"
	RuleAggregateOperator           Rule = "aggregate_operator"
	RuleAggregateColumnRequired     Rule = "aggregate_column_required"
	RuleAggregateColumnForbidden    Rule = "aggregate_column_forbidden"
	RuleAggregateColumnUnknown      Rule = "aggregate_column_unknown"
	RuleAggregateColumnNotNumeric   Rule = "aggregate_column_not_numeric"
	RuleColumnWithoutAggregate      Rule = "column_without_aggregate"
)

// Task and cc node configuration rules.
const (
	RuleInvalidAssigneeKind              Rule = "invalid_assignee_kind"
	RuleAssigneeFormFieldRequired        Rule = "assignee_form_field_required"
	RuleAssigneeIDsRequired              Rule = "assignee_ids_required"
	RuleCCIDsRequired                    Rule = "cc_ids_required"
	RuleInvalidCCKind                    Rule = "invalid_cc_kind"
	RuleInvalidCCTiming                  Rule = "invalid_cc_timing"
	RuleCCFormFieldRequired              Rule = "cc_form_field_required"
	RuleInvalidExecutionType             Rule = "invalid_execution_type"
	RuleInvalidEmptyAssigneeAction       Rule = "invalid_empty_assignee_action"
	RuleInvalidTimeoutAction             Rule = "invalid_timeout_action"
	RuleInvalidApprovalMethod            Rule = "invalid_approval_method"
	RuleInvalidPassRule                  Rule = "invalid_pass_rule"
	RuleInvalidSameApplicantAction       Rule = "invalid_same_applicant_action"
	RuleInvalidConsecutiveApproverAction Rule = "invalid_consecutive_approver_action"
	RuleInvalidRollbackType              Rule = "invalid_rollback_type"
	RuleInvalidRollbackDataStrategy      Rule = "invalid_rollback_data_strategy"
	RuleInvalidAddAssigneeType           Rule = "invalid_add_assignee_type"
	RuleHandleExecutionAutoReject        Rule = "handle_execution_auto_reject"
	RuleHandleTimeoutAutoReject          Rule = "handle_timeout_auto_reject"
	RuleFallbackUsersRequired            Rule = "fallback_users_required"
	RuleAdminUsersRequired               Rule = "admin_users_required"
	RulePassRatioRange                   Rule = "pass_ratio_range"
	RuleNegativeDuration                 Rule = "negative_duration"
	RuleRollbackTargetsRequired          Rule = "rollback_targets_required"
	RuleRollbackTargetUnknown            Rule = "rollback_target_unknown"
	RuleRollbackTargetSelf               Rule = "rollback_target_self"
	RuleSequentialParallelAddAssignee    Rule = "sequential_parallel_add_assignee"
	RuleInvalidFieldPermission           Rule = "invalid_field_permission"
	RuleFieldPermissionKeyUnknown        Rule = "field_permission_key_unknown"
	RuleCCFieldPermissionNotAllowed      Rule = "cc_field_permission_not_allowed"
	RuleFieldPermissionRequiredAutoPass  Rule = "field_permission_required_auto_pass"
)

// RuleError is a deploy-validation failure: the broken Rule, the node (and edge or branch)
// concerned when the rule is local, and an English message naming both (Error: logs, library
// users). Args are the values the message names, in the order of the rule's parameters
// (Params); the approval module answers it as 40005 (InvalidFlowDesign) with the rule's
// catalogue text (MessageKey, messages/<lang>/approval_design.json) in the process language.
type RuleError struct {
	Rule     Rule
	NodeID   string
	EdgeID   string
	BranchID string
	Message  string
	Args     []string
}

// MessageKey is the catalogue key of the rule's text: approval_design_flow_<rule>.
func (e *RuleError) MessageKey() string { return "approval_design_flow_" + string(e.Rule) }

// Params names Args by the rule's parameters (the {{name}} placeholders of its text).
func (e *RuleError) Params() map[string]string { return zipParams(ruleParams[e.Rule], e.Args) }

// zipParams pairs names with values (extra values are dropped, missing ones left out).
func zipParams(names, values []string) map[string]string {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if i < len(values) {
			m[n] = values[i]
		}
	}
	return m
}

// enumParams are the parameters of the rules enumField checks (the setting's wire name, the
// value given).
var enumParams = []string{"setting", "value"}

// ruleParams names, per rule, the values its check passes (RuleError.Args) as they appear in
// the rule's catalogue text. Every Rule has an entry (TestRuleMessages).
var ruleParams = map[Rule][]string{
	RuleInvalidJSON: {"error"}, RuleNoNodes: nil, RuleEmptyNodeID: nil, RuleDuplicateNodeID: {"node"},
	RuleInvalidNodeKind: {"kind"}, RuleNodeDataInvalid: {"kind", "error"}, RuleStartNodeCount: {"count"},
	RuleEndNodeCount: nil, RuleEmptyEdgeID: nil, RuleDuplicateEdgeID: {"edge"},
	RuleUnknownSourceNode: {"edge", "node"}, RuleUnknownTargetNode: {"edge", "node"}, RuleStartIncoming: nil,
	RuleStartOutgoing: {"count"}, RuleEndOutgoing: nil, RuleEndIncoming: nil, RuleNodeOutgoingCount: {"kind", "count"},
	RuleNodeSourceHandle: {"edge", "kind"}, RuleGraphCycle: {"node"}, RuleNodeUnreachable: {"node"},
	RuleNodeCannotReachEnd: {"node"},

	RuleConditionMinBranches: {"count"}, RuleConditionEmptyBranchID: nil, RuleConditionDuplicateBranchID: {"branch"},
	RuleConditionDefaultCount: {"count"}, RuleConditionMissingHandle: {"edge"},
	RuleConditionUnknownHandle: {"edge", "branch"}, RuleConditionDuplicateHandle: {"branch"},
	RuleConditionBranchNoEdge: {"branch"}, RuleDuplicateBranchPriority: {"other", "branch", "priority"},
	RuleBranchConditionsRequired: {"branch"}, RuleConditionGroupEmpty: {"branch"}, RuleInvalidConditionKind: {"kind"},
	RuleConditionSubjectRequired: nil, RuleInvalidConditionOperator: {"subject", "operator"},
	RuleConditionExpressionRequired: nil, RuleConditionExpressionInvalid: {"expression", "error"},
	RuleInvalidAggregate: {"aggregate"}, RuleAggregateOnExpression: nil, RuleAggregateSubjectNotTable: {"aggregate", "subject"},
	RuleAggregateOperator: {"operator"}, RuleAggregateColumnRequired: {"aggregate", "subject"},
	RuleAggregateColumnForbidden: nil, RuleAggregateColumnUnknown: {"subject", "column"},
	RuleAggregateColumnNotNumeric: {"aggregate", "column", "subject", "kind"}, RuleColumnWithoutAggregate: {"subject", "column"},

	RuleInvalidAssigneeKind: {"kind"}, RuleAssigneeFormFieldRequired: nil, RuleAssigneeIDsRequired: {"kind"},
	RuleCCIDsRequired: {"kind"}, RuleInvalidCCKind: {"kind"}, RuleInvalidCCTiming: {"timing"}, RuleCCFormFieldRequired: nil,
	RuleInvalidExecutionType: enumParams, RuleInvalidEmptyAssigneeAction: enumParams, RuleInvalidTimeoutAction: enumParams,
	RuleInvalidApprovalMethod: enumParams, RuleInvalidPassRule: enumParams, RuleInvalidSameApplicantAction: enumParams,
	RuleInvalidConsecutiveApproverAction: enumParams, RuleInvalidRollbackType: enumParams,
	RuleInvalidRollbackDataStrategy: enumParams, RuleInvalidAddAssigneeType: {"value"},
	RuleHandleExecutionAutoReject: nil, RuleHandleTimeoutAutoReject: nil, RuleFallbackUsersRequired: nil,
	RuleAdminUsersRequired: nil, RulePassRatioRange: {"ratio"}, RuleNegativeDuration: nil, RuleRollbackTargetsRequired: nil,
	RuleRollbackTargetUnknown: {"target"}, RuleRollbackTargetSelf: nil, RuleSequentialParallelAddAssignee: nil,
	RuleInvalidFieldPermission: {"field", "permission"}, RuleFieldPermissionKeyUnknown: {"field"},
	RuleCCFieldPermissionNotAllowed: {"field", "permission"}, RuleFieldPermissionRequiredAutoPass: {"field"},
}

// Error renders "invalid flow design [rule] (node n): message".
func (e *RuleError) Error() string {
	where := ""
	switch {
	case e.NodeID != "" && e.BranchID != "":
		where = fmt.Sprintf(" (node %s, branch %s)", e.NodeID, e.BranchID)
	case e.NodeID != "":
		where = fmt.Sprintf(" (node %s)", e.NodeID)
	case e.EdgeID != "":
		where = fmt.Sprintf(" (edge %s)", e.EdgeID)
	}
	return fmt.Sprintf("invalid flow design [%s]%s: %s", e.Rule, where, e.Message)
}
