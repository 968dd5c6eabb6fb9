// Package design is the pure design logic of the approval module (issue #22, spec §2.2,
// wire-approval §4, §5, §13, §15): flow definitions, form schemas and form-data validation.
// It has no database, no /api and no clock; the approval module calls it from
// approval/flow.deploy and wherever form data is written, and maps its errors to wire codes.
//
// The package adds no resources, routes, tables, workers or configuration keys: the approval
// module owns them and passes svc.approval.form_data_max_bytes in.
//
// # API
//
//   - ParseFlow(raw, fields) decodes deploy's flowDefinition ({nodes, edges}, React-Flow shape),
//     decodes every node's data by kind, applies the designer defaults and checks every deploy
//     rule against the version's top-level form fields. Problems lists all broken rules at
//     once. A broken rule is a *RuleError{Rule, NodeID, EdgeID, BranchID, Message}; the module
//     answers it as 40005 InvalidFlowDesign with Error() as the message, which names the rule.
//     The returned *Flow offers the topology part 2 needs: Node, Outgoing, Incoming, Start,
//     Next, BranchTarget, Predecessors; json.Marshal of a Flow is the normalized definition.
//   - ParseFormSchema(doc) projects the original's form-editor document onto formFields;
//     ValidateFields checks a field list from a host's own parser. Failures are *SchemaError
//     (the module answers 40010 InvalidFormDesign).
//   - ValidateFormData(fields, data, maxBytes) checks start and resubmit data. A task decision
//     runs ValidateWritable(fields, submitted, perms) (only editable/required keys count),
//     MergeWritable, ValidateGrowth(before, after, maxBytes) (only growth beyond the cap is
//     refused) and, for approve and handle, ValidateRequired. Failures are *FieldError carrying
//     an approval_form_field_* (or approval_form_data_too_large) key and its params; the module
//     answers FormDataCode (40401) with Args(catalog.T). Messages() is the catalog of the
//     approval_form_field_* keys (en, zh-CN).
//   - PermissionOf, MergeWritable, MaxPermission, Permission.ReadOnly and StripHidden are the
//     run-time field-permission rules of wire-approval §8 (an absent key is visible; only
//     editable/required fields take submitted values; the read lattice is hidden < visible <
//     editable < required).
//   - EvalBranch (and Flow.Choose) picks a condition node's branch: field conditions compared
//     natively, expr-lang expression conditions, table aggregates (see "Conditions").
//
// # Designer defaults (wire-approval §5)
//
// Omitted values resolve to: executionType manual, emptyAssigneeAction auto_pass,
// isTransferAllowed true, isOpinionRequired false, timeoutAction none, urgeCooldownMinutes ≤ 0
// → 30; approval nodes: approvalMethod parallel, passRule all, sameApplicantAction
// self_approve, consecutiveApproverAction none, rollbackType previous, rollbackDataStrategy
// keep, isRollbackAllowed / isAddAssigneeAllowed / isRemoveAssigneeAllowed / isManualCcAllowed
// true, addAssigneeTypes before+after+parallel (before+after on a sequential node); cc timing
// always. Handle nodes have none of the approval-only settings on the wire and resolve to
// sequential / any, rollbackType none with rollback, assignee additions and removals and manual
// CC off (the original leaves them at Go's zero values).
//
// # Deploy rules
//
// The Rule names are the codes of the original designer's client-side validator, which mirrors
// the server (plus a few the server alone checks):
//
//   - structure: no_nodes, empty/duplicate node ids, invalid_node_kind, node_data_invalid,
//     start_node_count (exactly one), end_node_count (at least one), empty/duplicate edge ids,
//     unknown source/target node;
//   - degrees: start_incoming, start_outgoing, end_outgoing, end_incoming,
//     node_outgoing_count (exactly one out of every other non-condition node), node_source_handle
//     (only condition edges carry one);
//   - condition nodes: ≥ 2 branches, non-empty unique ids, exactly one default, one edge per
//     branch named by its sourceHandle, unique priorities among non-default branches, a
//     non-empty group list on non-default branches, no empty group; field conditions need a
//     subject and a known operator, expression conditions a boolean expr-lang expression that
//     compiles; aggregates need a table subject, eq/ne/gt/gte/lt/lte, a number column of that
//     table for sum/avg and none for count;
//   - topology: graph_cycle, node_unreachable, node_cannot_reach_end;
//   - task nodes: every enumeration known; form_field assignees and ccs name their field,
//     user/role/department ones list ids; transfer_specified needs fallbackUserIds,
//     transfer_admin needs adminUserIds; ratio needs passRatio in (0, 100]; rollbackTargetKeys
//     (required for specified) name other approval/handle nodes; no parallel add-assignee on a
//     sequential node; handle nodes never auto_reject; no negative timeouts;
//   - field permissions: known values, keys that are top-level form fields, cc nodes
//     visible/hidden only, no required field where timeoutAction is auto_pass.
//
// Deviations and choices: rollbackTargetKeys are checked whenever present (as the designer
// does), not only for type specified; an expression condition must compile at deploy (the
// original finds a broken expression at run time); a field condition may not name a column
// without an aggregate; negative timeouts are refused. A flow whose version has no form fields
// accepts no fieldPermissions entry.
//
// # Form-editor projection (wire-approval §5 "Form schema")
//
// pc then mobile presentations; section, flex, grid and tabs are transparent; a keyed node
// becomes a field, a subform a table whose template's keyed leaves are its columns (first
// sighting of a column key wins, no nested subform, ≥ 1 column; minRows ≥ 1 → isRequired,
// minRows/maxRows → validation.minLength/maxLength). Widgets: textfield → input; textarea,
// code-editor → textarea; number → number; select, radio, checkbox-group → select; date,
// datetime → date; upload → upload; switch, daterange and unknown types abort. label ?? key;
// validate.required → isRequired, the other validate props → validation. Options: static
// (inline or a ref to dataSources[]) → options; remote (inline or by ref) → optionSource
// {kind, request, mapping} (the newest upstream contract; a remote source without
// request.resource/action aborts); a dangling ref → no options. Column types: override wins;
// number → decimal with scale = precision when precision > 0, else none; upload → json when
// maxCount > 1 else text; date → date; datetime → datetime; checkbox-group → json;
// textarea/code-editor → text; the rest string when validate.maxLength > 0 else text. A key on
// both devices is kept once; a different kind or table column set aborts. The projection was
// checked against the original's parity fixtures (identical output; the remote optionSource
// matches its newer Go side).
//
// # Form data (wire-approval §5 "Form data validation")
//
// Size: the JSON encoding must not exceed form_data_max_bytes, also for versions without
// fields. With fields: unknown keys → not_defined; an absent, null, blank-string or
// empty-array value is "no value": required fields answer required, optional ones skip every
// other check (as the original). input, textarea, date: strings (min_length, max_length in
// characters, pattern → pattern_mismatch whose literal message is validation.message when set;
// a pattern that does not compile → invalid_validation); number: a JSON number (min_value,
// max_value; columnType integer → must_be_integer); select: when options exist every value (or
// array item) must match one by its text, so "1" selects 1 (invalid_value); upload: a
// non-blank string or an array of non-blank strings (invalid_file_item, must_be_file; empty
// only for direct callers); table: an array (must_be_row_list) of objects (must_be_row_object)
// within min_rows/max_rows, each cell valid for its column and no unknown column, else
// table_cell with row, column and the cell's own error (rendered into its message param).
// Params: field (the label, else the key), min, max, value, index, row, column, message, size.
//
// # Conditions (wire-approval §5 "Condition evaluation")
//
// Non-default branches are tried in ascending priority, the first match wins, the default
// branch is the fallback and without one ErrNoBranchMatched is returned. Groups are OR'ed,
// conditions in a group AND'ed, a branch without groups matches. A field condition's subject
// is applicantId / applicantDepartmentId, else a global, else a form-data key; operators are
// native (an unknown one is ErrUnknownOperator, the §15 choice over the older
// "unknown is false"): numbers and numeric strings compare as numbers, other strings
// lexically (ISO dates order correctly), incomparable values are simply false; in / not_in
// test membership in the value list (any item of an array subject); contains tests a
// substring or an array item; is_empty is null, a blank string, an empty array or object.
// Aggregates fold a table subject: count the rows, sum the column's numeric cells (0 without
// rows), avg their mean (never matches without numeric cells). Expression conditions run in
// expr-lang with formData, applicantId, applicantDepartmentId and every global as top-level
// names (built-ins win over globals of the same name; unknown names are nil).
package design
