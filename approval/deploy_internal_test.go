package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// TestDesignErrorLanguage: a flow or form design that does not deploy is answered with the
// rule's catalogue text and its place in the process language — Chinese under zh-CN, with the
// node, branch and field ids the designer uses — under the unchanged codes 40005 and 40010, and
// the English error stays the cause for the log.
func TestDesignErrorLanguage(t *testing.T) {
	t.Parallel()
	flowErr := design.Problems([]byte(`{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"S"}},
		{"id":"x","kind":"robot","position":{"x":0,"y":0},"data":{}}],"edges":[]}`), nil)[0]
	_, formErr := design.ParseFormSchema([]byte(`{"version":2,"presentations":{"pc":{"children":[{"id":"X","type":"gizmo","key":"k","label":"K"}]}}}`))
	cases := []struct {
		name string
		tmpl *rpc.Error
		err  error
		want map[string]string // language → detail
	}{
		{"flow rule at a node", ErrInvalidFlowDesign, flowErr, map[string]string{
			i18n.English: `unknown node kind "robot" (node x)`, i18n.Chinese: "未知的节点类型“robot”（节点 x）"}},
		{"flow rule at a branch", ErrInvalidFlowDesign, &design.RuleError{Rule: design.RuleConditionBranchNoEdge, NodeID: "c1", BranchID: "b",
			Message: `branch "b" has no outgoing edge`, Args: []string{"b"}}, map[string]string{
			i18n.English: `branch "b" has no outgoing edge (node c1, branch b)`, i18n.Chinese: "分支“b”没有出线（节点 c1，分支 b）"}},
		{"form rule at a field", ErrInvalidFormDesign, formErr, map[string]string{
			i18n.English: `unknown widget type "gizmo" (field k)`, i18n.Chinese: "未知的组件类型“gizmo”（字段 k）"}},
	}
	for _, tt := range cases {
		for lang, want := range tt.want {
			cat := i18n.MustNew(lang, Messages())
			got := designError(tt.tmpl, tt.err, cat.T)
			re, ok := rpc.AsError(got)
			if !ok || re.Code != tt.tmpl.Code || re.Key != tt.tmpl.Key {
				t.Fatalf("%s %s: %v, want the %d template", tt.name, lang, got, tt.tmpl.Code)
			}
			if detail := re.Args["detail"]; detail != want {
				t.Errorf("%s %s: detail %q, want %q", tt.name, lang, detail, want)
			}
			if lang == i18n.Chinese && strings.Contains(re.Args["detail"], "invalid") {
				t.Errorf("%s: English in the zh-CN detail %q", tt.name, re.Args["detail"])
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("%s %s: the design error is not the cause", tt.name, lang)
			}
		}
	}
}
