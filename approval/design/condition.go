package design

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// ErrNoBranchMatched: no branch of a condition node matched and it has no default branch
// (deploy validation makes that impossible for deployed flows).
var ErrNoBranchMatched = errors.New("approval: no condition branch matched and there is no default branch")

// ErrUnknownOperator: a field condition names an operator outside the vocabulary.
var ErrUnknownOperator = errors.New("approval: unknown condition operator")

// Env is what conditions are evaluated against: the instance's form data, the globals the host
// resolved at start, and the built-in applicant names.
type Env struct {
	FormData              map[string]any
	Globals               map[string]any
	ApplicantID           string
	ApplicantDepartmentID string
}

// EvalBranch picks the branch a condition node takes (wire-approval §5 "Condition
// evaluation"): non-default branches in ascending priority, the first that matches wins; a
// branch's groups are OR'ed and the conditions inside a group AND'ed, and a branch without
// groups matches; when none matches the default branch is taken, and without one the result
// is ErrNoBranchMatched.
func EvalBranch(branches []Branch, env Env) (*Branch, error) {
	order := make([]int, 0, len(branches))
	var def *Branch
	for i := range branches {
		if branches[i].IsDefault {
			if def == nil {
				def = &branches[i]
			}
			continue
		}
		order = append(order, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return branches[order[a]].Priority < branches[order[b]].Priority })
	for _, i := range order {
		ok, err := branches[i].Matches(env)
		if err != nil {
			return nil, fmt.Errorf("branch %q: %w", branches[i].ID, err)
		}
		if ok {
			return &branches[i], nil
		}
	}
	if def == nil {
		return nil, ErrNoBranchMatched
	}
	return def, nil
}

// Choose evaluates condition node id and returns the branch taken and the node it leads to.
func (f *Flow) Choose(id string, env Env) (*Branch, *Node, error) {
	n, ok := f.byID[id]
	if !ok || n.Condition == nil {
		return nil, nil, fmt.Errorf("approval: %q is not a condition node of this flow", id)
	}
	b, err := EvalBranch(n.Condition.Branches, env)
	if err != nil {
		return nil, nil, err
	}
	next, ok := f.BranchTarget(id, b.ID)
	if !ok {
		return nil, nil, fmt.Errorf("approval: branch %q of %q has no edge", b.ID, id)
	}
	return b, next, nil
}

// Matches reports whether any of the branch's groups has all its conditions true.
func (b *Branch) Matches(env Env) (bool, error) {
	if len(b.ConditionGroups) == 0 {
		return true, nil
	}
	for _, g := range b.ConditionGroups {
		all := true
		for i := range g.Conditions {
			ok, err := g.Conditions[i].Eval(env)
			if err != nil {
				return false, err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}

// Eval evaluates one condition.
func (c *Condition) Eval(env Env) (bool, error) {
	switch c.Kind {
	case ConditionExpression:
		return c.evalExpression(env)
	case ConditionField:
		subject := env.lookup(c.Subject)
		if c.Aggregate != "" {
			return evalAggregate(c, subject)
		}
		return compare(c.Operator, subject, c.Value)
	}
	return false, fmt.Errorf("approval: unknown condition kind %q", c.Kind)
}

// lookup resolves a field condition's subject: the built-in applicant names, then globals,
// then form data.
func (e Env) lookup(name string) any {
	switch name {
	case "applicantId":
		return e.ApplicantID
	case "applicantDepartmentId":
		return e.ApplicantDepartmentID
	}
	if v, ok := e.Globals[name]; ok {
		return v
	}
	return e.FormData[name]
}

// compileExpression compiles an expression condition once, without a typed environment:
// globals differ per instance, so every name is resolved at run time (unknown names are nil).
func compileExpression(src string) (*vm.Program, error) {
	return expr.Compile(src, expr.AllowUndefinedVariables(), expr.AsBool())
}

// evalExpression runs an expr-lang expression with formData, applicantId and
// applicantDepartmentId plus every global as a top-level name (the built-ins win). Conditions
// of a parsed Flow run their precompiled program.
func (c *Condition) evalExpression(env Env) (bool, error) {
	program := c.program
	if program == nil {
		var err error
		if program, err = compileExpression(c.Expression); err != nil {
			return false, fmt.Errorf("approval: expression %q: %s", c.Expression, firstLine(err.Error()))
		}
	}
	vars := make(map[string]any, len(env.Globals)+3)
	for k, v := range env.Globals {
		vars[k] = normalize(v)
	}
	formData := env.FormData
	if formData == nil {
		formData = map[string]any{}
	}
	vars["formData"] = normalize(formData) // json.Number (the /api decoder's numbers) → float64
	vars["applicantId"] = env.ApplicantID
	vars["applicantDepartmentId"] = env.ApplicantDepartmentID
	out, err := expr.Run(program, vars)
	if err != nil {
		return false, fmt.Errorf("approval: expression %q: %s", c.Expression, firstLine(err.Error()))
	}
	ok, _ := out.(bool)
	return ok, nil
}

// evalAggregate folds a table subject: count → rows, sum → total of the column's numeric
// cells (0 for no rows), avg → their mean (never matches without numeric cells).
func evalAggregate(c *Condition, subject any) (bool, error) {
	rows, _ := subject.([]any)
	var sum float64
	n := 0
	for _, r := range rows {
		row, _ := r.(map[string]any)
		if v, ok := toNumber(row[c.Column]); ok {
			sum += v
			n++
		}
	}
	var folded float64
	switch c.Aggregate {
	case AggregateCount:
		folded = float64(len(rows))
	case AggregateSum:
		folded = sum
	case AggregateAvg:
		if n == 0 {
			return false, nil
		}
		folded = sum / float64(n)
	default:
		return false, fmt.Errorf("approval: unknown aggregate %q", c.Aggregate)
	}
	if !c.Operator.Numeric() {
		return false, fmt.Errorf("%w %q for an aggregate", ErrUnknownOperator, c.Operator)
	}
	return compare(c.Operator, folded, c.Value)
}

// compare applies a field operator natively: numbers (and numeric strings) compare as numbers,
// strings lexically (ISO dates order correctly), arrays by membership.
func compare(op Operator, subject, value any) (bool, error) {
	switch op {
	case OpEq:
		return equal(subject, value), nil
	case OpNe:
		return !equal(subject, value), nil
	case OpGt, OpGte, OpLt, OpLte:
		c, ok := order(subject, value)
		if !ok {
			return false, nil
		}
		switch op {
		case OpGt:
			return c > 0, nil
		case OpGte:
			return c >= 0, nil
		case OpLt:
			return c < 0, nil
		}
		return c <= 0, nil
	case OpIn:
		return in(subject, value), nil
	case OpNotIn:
		return !in(subject, value), nil
	case OpContains:
		return contains(subject, value), nil
	case OpNotContains:
		return !contains(subject, value), nil
	case OpStartsWith, OpEndsWith:
		s, ok1 := subject.(string)
		v, ok2 := value.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		if op == OpStartsWith {
			return strings.HasPrefix(s, v), nil
		}
		return strings.HasSuffix(s, v), nil
	case OpIsEmpty:
		return isEmptyValue(subject), nil
	case OpIsNotEmpty:
		return !isEmptyValue(subject), nil
	}
	return false, fmt.Errorf("%w %q", ErrUnknownOperator, op)
}

func isEmptyValue(v any) bool {
	if m, ok := v.(map[string]any); ok {
		return len(m) == 0
	}
	return isBlank(v)
}

// toNumber reads numbers and numeric strings.
func toNumber(v any) (float64, bool) {
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil
	}
	return number(v)
}

func equal(a, b any) bool {
	if x, ok := toNumber(a); ok {
		if y, ok := toNumber(b); ok {
			_, aStr := a.(string)
			_, bStr := b.(string)
			if !(aStr && bStr) { // two strings compare as strings ("01" ≠ "1")
				return x == y
			}
		}
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// normalize turns Go numeric types into float64 (recursively) so JSON-decoded and Go-built
// values compare alike.
func normalize(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case string, bool, nil:
		return v
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	if f, ok := number(v); ok {
		return f
	}
	return v
}

func order(a, b any) (int, bool) {
	if x, ok := toNumber(a); ok {
		if y, ok := toNumber(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	s, ok1 := a.(string)
	t, ok2 := b.(string)
	if ok1 && ok2 {
		return strings.Compare(s, t), true
	}
	return 0, false
}

// in: a scalar subject is one of value's items; an array subject has an item among them.
func in(subject, value any) bool {
	list, ok := value.([]any)
	if !ok {
		return false
	}
	items := []any{subject}
	if arr, ok := subject.([]any); ok {
		items = arr
	}
	for _, s := range items {
		for _, v := range list {
			if equal(s, v) {
				return true
			}
		}
	}
	return false
}

// contains: substring of a string subject, or an item of an array subject.
func contains(subject, value any) bool {
	switch s := subject.(type) {
	case string:
		v, ok := value.(string)
		return ok && strings.Contains(s, v)
	case []any:
		for _, item := range s {
			if equal(item, value) {
				return true
			}
		}
	}
	return false
}
