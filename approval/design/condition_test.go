package design

import (
	"errors"
	"testing"
)

func TestConditionOperators(t *testing.T) {
	t.Parallel()
	env := Env{
		FormData: map[string]any{
			"amount": 1200.0, "title": "Trip to Berlin", "day": "2026-11-24", "tags": []any{"a", "b"},
			"empty": "", "level": "2", "none": nil, "obj": map[string]any{},
		},
		Globals:     map[string]any{"region": "eu", "amount": 5.0},
		ApplicantID: "u1",
	}
	cases := []struct {
		subject string
		op      Operator
		value   any
		want    bool
	}{
		{"amount", OpEq, 5, true}, // globals shadow form data
		{"title", OpEq, "Trip to Berlin", true},
		{"title", OpNe, "x", true},
		{"level", OpEq, 2, true}, // a numeric string equals the number
		{"level", OpGt, 1.5, true},
		{"amount", OpGte, 5, true},
		{"amount", OpLt, 5, false},
		{"amount", OpLte, 5, true},
		{"day", OpGt, "2026-11-01", true}, // ISO dates order lexically
		{"title", OpGt, 3, false},         // incomparable is false, not an error
		{"region", OpIn, []any{"eu", "us"}, true},
		{"region", OpNotIn, []any{"eu"}, false},
		{"tags", OpIn, []any{"b", "z"}, true}, // any selected item
		{"title", OpContains, "Berlin", true},
		{"tags", OpContains, "a", true},
		{"tags", OpNotContains, "z", true},
		{"title", OpStartsWith, "Trip", true},
		{"title", OpEndsWith, "Paris", false},
		{"empty", OpIsEmpty, nil, true},
		{"none", OpIsEmpty, nil, true},
		{"missing", OpIsEmpty, nil, true},
		{"obj", OpIsEmpty, nil, true},
		{"tags", OpIsNotEmpty, nil, true},
		{"applicantId", OpEq, "u1", true},
		{"applicantDepartmentId", OpIsEmpty, nil, true},
	}
	for _, tt := range cases {
		c := Condition{Kind: ConditionField, Subject: tt.subject, Operator: tt.op, Value: tt.value}
		got, err := c.Eval(env)
		if err != nil || got != tt.want {
			t.Errorf("%s %s %v = %v, %v; want %v", tt.subject, tt.op, tt.value, got, err, tt.want)
		}
	}
	c := Condition{Kind: ConditionField, Subject: "amount", Operator: "between"}
	if _, err := c.Eval(env); !errors.Is(err, ErrUnknownOperator) {
		t.Errorf("unknown operator error = %v, want ErrUnknownOperator", err)
	}
}

func TestConditionAggregates(t *testing.T) {
	t.Parallel()
	env := Env{FormData: map[string]any{
		"items": []any{
			map[string]any{"price": 10.0}, map[string]any{"price": "20"}, map[string]any{"price": nil}, "junk",
		},
		"none": []any{},
	}}
	cases := []struct {
		subject string
		agg     AggregateKind
		column  string
		op      Operator
		value   any
		want    bool
	}{
		{"items", AggregateCount, "", OpEq, 4, true},
		{"items", AggregateSum, "price", OpEq, 30, true},
		{"items", AggregateAvg, "price", OpEq, 15, true},
		{"none", AggregateSum, "price", OpEq, 0, true},  // sum over no rows is 0
		{"none", AggregateAvg, "price", OpLt, 1, false}, // avg over no rows never matches
		{"none", AggregateAvg, "price", OpGte, 0, false},
		{"none", AggregateCount, "", OpEq, 0, true},
		{"missing", AggregateCount, "", OpEq, 0, true},
	}
	for _, tt := range cases {
		c := Condition{Kind: ConditionField, Subject: tt.subject, Aggregate: tt.agg, Column: tt.column, Operator: tt.op, Value: tt.value}
		got, err := c.Eval(env)
		if err != nil || got != tt.want {
			t.Errorf("%s(%s.%s) %s %v = %v, %v; want %v", tt.agg, tt.subject, tt.column, tt.op, tt.value, got, err, tt.want)
		}
	}
}

func TestConditionExpressions(t *testing.T) {
	t.Parallel()
	env := Env{
		FormData:              map[string]any{"amount": 1200.0, "items": []any{map[string]any{"p": 1.0}}},
		Globals:               map[string]any{"limit": 1000, "applicantId": "spoofed"},
		ApplicantID:           "u1",
		ApplicantDepartmentID: "d1",
	}
	cases := []struct {
		expr string
		want bool
	}{
		{"formData.amount > limit", true},
		{"applicantId == 'u1'", true}, // built-ins win over globals
		{"applicantDepartmentId == 'd1' && len(formData.items) == 1", true},
		{"formData.missing == nil", true},
		{"unknownGlobal == nil", true},
		{"formData.amount < 10", false},
	}
	for _, tt := range cases {
		c := Condition{Kind: ConditionExpression, Expression: tt.expr}
		got, err := c.Eval(env)
		if err != nil || got != tt.want {
			t.Errorf("%s = %v, %v; want %v", tt.expr, got, err, tt.want)
		}
	}
	for _, bad := range []string{"formData.amount >", "'text'"} {
		c := Condition{Kind: ConditionExpression, Expression: bad}
		if _, err := c.Eval(env); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestEvalBranch(t *testing.T) {
	t.Parallel()
	gt := func(v float64) []ConditionGroup {
		return []ConditionGroup{{Conditions: []Condition{{Kind: ConditionField, Subject: "amount", Operator: OpGt, Value: v}}}}
	}
	branches := []Branch{
		{ID: "default", IsDefault: true, Priority: 0},
		{ID: "over100", Priority: 2, ConditionGroups: gt(100)},
		{ID: "over1000", Priority: 1, ConditionGroups: gt(1000)},
		{ID: "either", Priority: 3, ConditionGroups: []ConditionGroup{
			{Conditions: []Condition{{Kind: ConditionField, Subject: "amount", Operator: OpEq, Value: 7}, {Kind: ConditionField, Subject: "vip", Operator: OpEq, Value: true}}},
			{Conditions: []Condition{{Kind: ConditionField, Subject: "amount", Operator: OpEq, Value: 50}}},
		}},
	}
	cases := []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"amount": 5000}, "over1000"}, // priority order, not list order
		{map[string]any{"amount": 500}, "over100"},
		{map[string]any{"amount": 50}, "either"},               // second group
		{map[string]any{"amount": 7, "vip": false}, "default"}, // AND inside a group fails
		{map[string]any{"amount": 7, "vip": true}, "either"},
	}
	for _, tt := range cases {
		b, err := EvalBranch(branches, Env{FormData: tt.data})
		if err != nil || b.ID != tt.want {
			t.Errorf("EvalBranch(%v) = %v, %v; want %s", tt.data, b, err, tt.want)
		}
	}
	if _, err := EvalBranch(branches[1:3], Env{FormData: map[string]any{"amount": 1}}); !errors.Is(err, ErrNoBranchMatched) {
		t.Errorf("no match without default: %v, want ErrNoBranchMatched", err)
	}
	if b, err := EvalBranch([]Branch{{ID: "open"}}, Env{}); err != nil || b.ID != "open" {
		t.Errorf("a branch without groups must match: %v, %v", b, err)
	}
}

func TestFlowChoose(t *testing.T) {
	t.Parallel()
	f, err := ParseFlow(validFlow().json(t), testFields())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		data           map[string]any
		branch, target string
	}{
		{map[string]any{"amount": 2000.0, "items": []any{map[string]any{"price": 12.0}}}, "big", "h1"},
		{map[string]any{"amount": 10.0, "items": []any{}}, "small", "end1"},
		{map[string]any{"amount": 10.0, "items": []any{1, 2, 3}}, "other", "end1"},
	}
	for _, tt := range cases {
		b, next, err := f.Choose("c1", Env{FormData: tt.data, ApplicantID: "u1"})
		if err != nil || b.ID != tt.branch || next.ID != tt.target {
			t.Errorf("Choose(%v) = %v, %v, %v; want %s → %s", tt.data, b, next, err, tt.branch, tt.target)
		}
	}
	if _, _, err := f.Choose("a1", Env{}); err == nil {
		t.Error("Choose on an approval node must fail")
	}
}

// TestFlowChooseConcurrent: a parsed Flow (with its precompiled expressions) serves
// concurrent evaluations.
func TestFlowChooseConcurrent(t *testing.T) {
	t.Parallel()
	f, err := ParseFlow(validFlow().json(t), testFields())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			amount := 6000.0 + float64(i) // the expression group decides: amount > 5000
			b, _, err := f.Choose("c1", Env{FormData: map[string]any{"amount": amount, "items": []any{1, 2, 3}}, ApplicantID: "u"})
			if err == nil && b.ID != "big" {
				err = errors.New("branch " + b.ID + ", want big")
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
