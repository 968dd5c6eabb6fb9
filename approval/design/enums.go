package design

// The enumerations of wire-approval §4 as typed strings. Each type has a Valid method that
// reports whether a value belongs to its closed vocabulary; the empty string is never valid
// (omitted values are resolved to designer defaults before validation).

// NodeKind is the kind of a flow node.
type NodeKind string

// Node kinds (wire-approval §1: there is no sub-process node).
const (
	NodeStart     NodeKind = "start"
	NodeApproval  NodeKind = "approval"
	NodeHandle    NodeKind = "handle"
	NodeCondition NodeKind = "condition"
	NodeCC        NodeKind = "cc"
	NodeEnd       NodeKind = "end"
)

// Valid reports whether k is a known node kind.
func (k NodeKind) Valid() bool {
	return oneOf(k, NodeStart, NodeApproval, NodeHandle, NodeCondition, NodeCC, NodeEnd)
}

// IsTask reports whether nodes of kind k create tasks (approval and handle).
func (k NodeKind) IsTask() bool { return k == NodeApproval || k == NodeHandle }

// ExecutionType says whether a task node waits for people or decides on entry.
type ExecutionType string

// Execution types.
const (
	ExecutionManual     ExecutionType = "manual"
	ExecutionAutoPass   ExecutionType = "auto_pass"
	ExecutionAutoReject ExecutionType = "auto_reject"
)

// Valid reports whether e is a known execution type.
func (e ExecutionType) Valid() bool {
	return oneOf(e, ExecutionManual, ExecutionAutoPass, ExecutionAutoReject)
}

// ApprovalMethod orders the tasks of a node.
type ApprovalMethod string

// Approval methods.
const (
	MethodSequential ApprovalMethod = "sequential"
	MethodParallel   ApprovalMethod = "parallel"
)

// Valid reports whether m is a known approval method.
func (m ApprovalMethod) Valid() bool { return oneOf(m, MethodSequential, MethodParallel) }

// PassRule decides when a node passes.
type PassRule string

// Pass rules (C28's any_reject is gone from the wire vocabulary).
const (
	PassAll   PassRule = "all"
	PassAny   PassRule = "any"
	PassRatio PassRule = "ratio"
)

// Valid reports whether r is a known pass rule.
func (r PassRule) Valid() bool { return oneOf(r, PassAll, PassAny, PassRatio) }

// AssigneeKind says how an assignee entry resolves to users.
type AssigneeKind string

// Assignee kinds.
const (
	AssigneeUser             AssigneeKind = "user"
	AssigneeRole             AssigneeKind = "role"
	AssigneeDepartment       AssigneeKind = "department"
	AssigneeSelf             AssigneeKind = "self"
	AssigneeSuperior         AssigneeKind = "superior"
	AssigneeDepartmentLeader AssigneeKind = "department_leader"
	AssigneeFormField        AssigneeKind = "form_field"
)

// Valid reports whether k is a known assignee kind.
func (k AssigneeKind) Valid() bool {
	return oneOf(k, AssigneeUser, AssigneeRole, AssigneeDepartment, AssigneeSelf, AssigneeSuperior,
		AssigneeDepartmentLeader, AssigneeFormField)
}

// EmptyAssigneeAction is what a task node does when nobody resolves.
type EmptyAssigneeAction string

// Empty-assignee actions.
const (
	EmptyAutoPass          EmptyAssigneeAction = "auto_pass"
	EmptyTransferAdmin     EmptyAssigneeAction = "transfer_admin"
	EmptyTransferSuperior  EmptyAssigneeAction = "transfer_superior"
	EmptyTransferApplicant EmptyAssigneeAction = "transfer_applicant"
	EmptyTransferSpecified EmptyAssigneeAction = "transfer_specified"
)

// Valid reports whether a is a known empty-assignee action.
func (a EmptyAssigneeAction) Valid() bool {
	return oneOf(a, EmptyAutoPass, EmptyTransferAdmin, EmptyTransferSuperior, EmptyTransferApplicant,
		EmptyTransferSpecified)
}

// SameApplicantAction is what happens to the applicant's own seat among a node's assignees.
type SameApplicantAction string

// Same-applicant actions (exclude is the client's addition; wire-approval §15 says implement it).
const (
	SameApplicantSelfApprove      SameApplicantAction = "self_approve"
	SameApplicantAutoPass         SameApplicantAction = "auto_pass"
	SameApplicantTransferSuperior SameApplicantAction = "transfer_superior"
	SameApplicantExclude          SameApplicantAction = "exclude"
)

// Valid reports whether a is a known same-applicant action.
func (a SameApplicantAction) Valid() bool {
	return oneOf(a, SameApplicantSelfApprove, SameApplicantAutoPass, SameApplicantTransferSuperior,
		SameApplicantExclude)
}

// ConsecutiveApproverAction is what happens when the previous node's approver is assigned again.
type ConsecutiveApproverAction string

// Consecutive-approver actions.
const (
	ConsecutiveNone     ConsecutiveApproverAction = "none"
	ConsecutiveAutoPass ConsecutiveApproverAction = "auto_pass"
)

// Valid reports whether a is a known consecutive-approver action.
func (a ConsecutiveApproverAction) Valid() bool {
	return oneOf(a, ConsecutiveNone, ConsecutiveAutoPass)
}

// RollbackType says where a task may be rolled back to.
type RollbackType string

// Rollback types.
const (
	RollbackNone      RollbackType = "none"
	RollbackPrevious  RollbackType = "previous"
	RollbackStart     RollbackType = "start"
	RollbackAny       RollbackType = "any"
	RollbackSpecified RollbackType = "specified"
)

// Valid reports whether t is a known rollback type.
func (t RollbackType) Valid() bool {
	return oneOf(t, RollbackNone, RollbackPrevious, RollbackStart, RollbackAny, RollbackSpecified)
}

// RollbackDataStrategy says what happens to form data on rollback.
type RollbackDataStrategy string

// Rollback data strategies.
const (
	RollbackDataClear RollbackDataStrategy = "clear"
	RollbackDataKeep  RollbackDataStrategy = "keep"
)

// Valid reports whether s is a known rollback data strategy.
func (s RollbackDataStrategy) Valid() bool { return oneOf(s, RollbackDataClear, RollbackDataKeep) }

// AddAssigneeType is where an added assignee goes relative to the adder.
type AddAssigneeType string

// Add-assignee types.
const (
	AddBefore   AddAssigneeType = "before"
	AddAfter    AddAssigneeType = "after"
	AddParallel AddAssigneeType = "parallel"
)

// Valid reports whether t is a known add-assignee type.
func (t AddAssigneeType) Valid() bool { return oneOf(t, AddBefore, AddAfter, AddParallel) }

// TimeoutAction is what the timeout scanner does with an overdue task.
type TimeoutAction string

// Timeout actions.
const (
	TimeoutNone          TimeoutAction = "none"
	TimeoutAutoPass      TimeoutAction = "auto_pass"
	TimeoutAutoReject    TimeoutAction = "auto_reject"
	TimeoutNotify        TimeoutAction = "notify"
	TimeoutTransferAdmin TimeoutAction = "transfer_admin"
)

// Valid reports whether a is a known timeout action.
func (a TimeoutAction) Valid() bool {
	return oneOf(a, TimeoutNone, TimeoutAutoPass, TimeoutAutoReject, TimeoutNotify, TimeoutTransferAdmin)
}

// CCKind says how a carbon-copy entry resolves to users.
type CCKind string

// CC kinds.
const (
	CCUser       CCKind = "user"
	CCRole       CCKind = "role"
	CCDepartment CCKind = "department"
	CCFormField  CCKind = "form_field"
)

// Valid reports whether k is a known CC kind.
func (k CCKind) Valid() bool { return oneOf(k, CCUser, CCRole, CCDepartment, CCFormField) }

// CCTiming says when a task node's carbon copies fire.
type CCTiming string

// CC timings.
const (
	CCAlways    CCTiming = "always"
	CCOnApprove CCTiming = "on_approve"
	CCOnReject  CCTiming = "on_reject"
)

// Valid reports whether t is a known CC timing.
func (t CCTiming) Valid() bool { return oneOf(t, CCAlways, CCOnApprove, CCOnReject) }

// ConditionKind distinguishes field comparisons from expr-lang expressions.
type ConditionKind string

// Condition kinds.
const (
	ConditionField      ConditionKind = "field"
	ConditionExpression ConditionKind = "expression"
)

// Valid reports whether k is a known condition kind.
func (k ConditionKind) Valid() bool { return oneOf(k, ConditionField, ConditionExpression) }

// Operator is a field-condition comparison.
type Operator string

// Condition operators.
const (
	OpEq          Operator = "eq"
	OpNe          Operator = "ne"
	OpGt          Operator = "gt"
	OpGte         Operator = "gte"
	OpLt          Operator = "lt"
	OpLte         Operator = "lte"
	OpIn          Operator = "in"
	OpNotIn       Operator = "not_in"
	OpContains    Operator = "contains"
	OpNotContains Operator = "not_contains"
	OpStartsWith  Operator = "starts_with"
	OpEndsWith    Operator = "ends_with"
	OpIsEmpty     Operator = "is_empty"
	OpIsNotEmpty  Operator = "is_not_empty"
)

// Valid reports whether o is a known operator.
func (o Operator) Valid() bool {
	return oneOf(o, OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNotIn, OpContains, OpNotContains,
		OpStartsWith, OpEndsWith, OpIsEmpty, OpIsNotEmpty)
}

// Numeric reports whether o is one of the six comparisons an aggregate may use.
func (o Operator) Numeric() bool { return oneOf(o, OpEq, OpNe, OpGt, OpGte, OpLt, OpLte) }

// AggregateKind folds a table field into one number.
type AggregateKind string

// Aggregate kinds.
const (
	AggregateSum   AggregateKind = "sum"
	AggregateCount AggregateKind = "count"
	AggregateAvg   AggregateKind = "avg"
)

// Valid reports whether k is a known aggregate kind.
func (k AggregateKind) Valid() bool { return oneOf(k, AggregateSum, AggregateCount, AggregateAvg) }

// FieldKind is the kind of a form field.
type FieldKind string

// Field kinds.
const (
	FieldInput    FieldKind = "input"
	FieldTextarea FieldKind = "textarea"
	FieldSelect   FieldKind = "select"
	FieldNumber   FieldKind = "number"
	FieldDate     FieldKind = "date"
	FieldUpload   FieldKind = "upload"
	FieldTable    FieldKind = "table"
)

// Valid reports whether k is a known field kind.
func (k FieldKind) Valid() bool {
	return oneOf(k, FieldInput, FieldTextarea, FieldSelect, FieldNumber, FieldDate, FieldUpload, FieldTable)
}

// ColumnType is the storage column type of a form field (table storage mode).
type ColumnType string

// Column types.
const (
	ColumnString   ColumnType = "string"
	ColumnText     ColumnType = "text"
	ColumnInteger  ColumnType = "integer"
	ColumnDecimal  ColumnType = "decimal"
	ColumnBoolean  ColumnType = "boolean"
	ColumnDate     ColumnType = "date"
	ColumnDatetime ColumnType = "datetime"
	ColumnJSON     ColumnType = "json"
)

// Valid reports whether t is a known column type.
func (t ColumnType) Valid() bool {
	return oneOf(t, ColumnString, ColumnText, ColumnInteger, ColumnDecimal, ColumnBoolean, ColumnDate,
		ColumnDatetime, ColumnJSON)
}

// Permission is a node's access to one form field. The lattice is
// hidden < visible < editable < required.
type Permission string

// Field permissions.
const (
	PermVisible  Permission = "visible"
	PermEditable Permission = "editable"
	PermHidden   Permission = "hidden"
	PermRequired Permission = "required"
)

// Valid reports whether p is a known permission.
func (p Permission) Valid() bool {
	return oneOf(p, PermVisible, PermEditable, PermHidden, PermRequired)
}

// Rank orders permissions on the lattice hidden(0) < visible(1) < editable(2) < required(3);
// an unknown permission ranks -1.
func (p Permission) Rank() int {
	switch p {
	case PermHidden:
		return 0
	case PermVisible:
		return 1
	case PermEditable:
		return 2
	case PermRequired:
		return 3
	}
	return -1
}

// Writable reports whether p lets the node's assignee write the field (editable or required).
func (p Permission) Writable() bool { return p == PermEditable || p == PermRequired }

func oneOf[T ~string](v T, set ...T) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}
