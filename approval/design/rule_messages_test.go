package design

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"unicode"

	"github.com/svc-framework/svc/i18n"
)

// constValues are the string constants declared in file whose names start with prefix (the
// Rule and Schema* constants: the test reads the source so a new rule cannot miss its text).
func constValues(t *testing.T, file, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 || !vs.Names[0].IsExported() || len(vs.Names[0].Name) <= len(prefix) || vs.Names[0].Name[:len(prefix)] != prefix {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			out = append(out, s)
		}
		return true
	})
	return out
}

var placeholder = regexp.MustCompile(`\{\{(\w+)\}\}`)

// hasHan reports whether s contains a Chinese character.
func hasHan(s string) bool {
	return slices.ContainsFunc([]rune(s), func(r rune) bool { return unicode.Is(unicode.Han, r) })
}

// TestRuleMessages: every flow design rule (rule.go) and form design rule (field.go) has its
// parameters named and a catalogue text in en and zh-CN whose placeholders are exactly those
// parameters; a zh-CN catalog renders every one in Chinese, with the values filled in and no
// placeholder left, and so are the locations (node, edge, branch, field).
func TestRuleMessages(t *testing.T) {
	t.Parallel()
	en, zh := i18n.MustNew(i18n.English, Messages()), i18n.MustNew(i18n.Chinese, Messages())
	type ruleCase struct {
		key    string
		params []string
	}
	var cases []ruleCase
	rules := constValues(t, "rule.go", "Rule")
	if len(rules) < 70 {
		t.Fatalf("read %d rules from rule.go, want them all", len(rules))
	}
	for _, r := range rules {
		params, ok := ruleParams[Rule(r)]
		if !ok {
			t.Errorf("rule %s has no entry in ruleParams", r)
		}
		cases = append(cases, ruleCase{(&RuleError{Rule: Rule(r)}).MessageKey(), params})
	}
	schema := constValues(t, "field.go", "Schema")
	if len(schema) != len(schemaParams) {
		t.Errorf("field.go declares %d form design rules, schemaParams names %d", len(schema), len(schemaParams))
	}
	for _, r := range schema {
		params, ok := schemaParams[r]
		if !ok {
			t.Errorf("form design rule %s has no entry in schemaParams", r)
		}
		cases = append(cases, ruleCase{(&SchemaError{Rule: r}).MessageKey(), params})
	}
	for _, loc := range [][]string{{"approval_design_at_node", "message", "node"}, {"approval_design_at_edge", "message", "edge"},
		{"approval_design_at_branch", "message", "node", "branch"}, {"approval_design_at_field", "message", "field"}} {
		cases = append(cases, ruleCase{loc[0], loc[1:]})
	}
	for _, c := range cases {
		args := map[string]string{}
		for _, p := range c.params {
			args[p] = "V_" + p
		}
		for _, cat := range []*i18n.Catalog{en, zh} {
			if !cat.Has(c.key) {
				t.Errorf("%s: no text for %s", cat.Language(), c.key)
				continue
			}
			var named []string
			for _, m := range placeholder.FindAllStringSubmatch(cat.T(c.key, nil), -1) {
				named = append(named, m[1])
			}
			slices.Sort(named)
			want := slices.Sorted(slices.Values(c.params))
			if !slices.Equal(slices.Compact(named), want) {
				t.Errorf("%s %s: placeholders %v, want the parameters %v", cat.Language(), c.key, named, want)
			}
		}
		got := zh.T(c.key, args)
		if !hasHan(got) || placeholder.MatchString(got) {
			t.Errorf("zh-CN %s = %q, want Chinese with every value filled in", c.key, got)
		}
		if en.T(c.key, args) == got {
			t.Errorf("%s: the zh-CN text is the English one", c.key)
		}
	}
}

// TestRuleErrorParams: a check's values reach its RuleError as the rule's named parameters.
func TestRuleErrorParams(t *testing.T) {
	t.Parallel()
	var err error
	problems := Problems([]byte(`{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"S"}},
		{"id":"x","kind":"robot","position":{"x":0,"y":0},"data":{}}],"edges":[]}`), nil)
	i := slices.IndexFunc(problems, func(p *RuleError) bool { return p.Rule == RuleInvalidNodeKind })
	if i < 0 {
		t.Fatalf("problems %v, want %s", problems, RuleInvalidNodeKind)
	}
	if got := problems[i].Params(); got["kind"] != "robot" || len(got) != 1 || problems[i].NodeID != "x" {
		t.Errorf("params %v node %q, want kind=robot at node x", got, problems[i].NodeID)
	}
	var se *SchemaError
	_, err = ParseFormSchema([]byte(`{"version":2,"presentations":{"pc":{"children":[{"id":"X","type":"gizmo","key":"k","label":"K"}]}}}`))
	if !errors.As(err, &se) || se.Params()["widget"] != "gizmo" || se.Path != "k" {
		t.Errorf("ParseFormSchema = %v, want unknown_field_type with widget=gizmo at k", err)
	}
}
