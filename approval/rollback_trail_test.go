package approval

import (
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval/design"
)

// TestRollbackTrail: the rollback targets of wire-approval §8 from a visit trail, per rollback
// type — the path that led to the current visit, where a re-entered node (a rollback's target,
// the start after a resubmit) drops what came after its earlier visit; cc nodes, the current
// node and nodes downstream of it are never targets.
func TestRollbackTrail(t *testing.T) {
	t.Parallel()
	g := &graph{nodes: map[string]*Node{}}
	for _, n := range []struct {
		key  string
		kind design.NodeKind
	}{{"s", "start"}, {"a", "approval"}, {"k", "cc"}, {"b", "approval"}, {"h", "handle"}, {"c", "approval"}} {
		g.nodes[n.key] = &Node{Key: n.key, Kind: n.kind}
		g.nodes[n.key].ID = n.key
	}
	g.start = g.nodes["s"]
	// visits parses "a:passed b:returned …" into visits of sequence 1, 2, …
	visits := func(trail string) []Visit {
		var out []Visit
		for i, f := range strings.Fields(trail) {
			key, status, _ := strings.Cut(f, ":")
			out = append(out, Visit{NodeID: key, Sequence: i + 1, Status: status})
		}
		return out
	}
	tests := []struct {
		name, node, typ, visits, want string
		keys                          []string
	}{
		{"any: the path, newest first, no cc", "c", "any", "s:passed a:passed k:passed b:passed h:passed", "h b a s", nil},
		{"previous", "c", "previous", "s:passed a:passed k:passed b:passed h:passed", "h", nil},
		{"start", "c", "start", "s:passed a:passed b:passed", "s", nil},
		{"specified", "c", "specified", "s:passed a:passed b:passed h:passed", "h a", []string{"a", "h", "c"}},
		{"none", "c", "none", "s:passed a:passed", "", nil},
		{"re-entry of the current node", "b", "any", "s:passed a:passed b:passed c:returned", "a s", nil},
		{"downstream after a rollback", "a", "any", "s:passed a:passed b:passed c:returned", "s", nil},
		{"previous after a re-entry", "a", "previous", "s:passed a:passed b:passed h:passed c:returned b:returned", "s", nil},
		{"after a resubmit", "b", "any", "s:passed a:passed b:passed c:returned s:passed a:passed", "a s", nil},
		{"rolled back twice", "c", "any", "s:passed a:passed b:passed c:returned b:passed c:returned a:passed b:passed", "b a s", nil},
		{"withdrawn and resubmitted", "a", "any", "s:passed a:canceled s:passed", "s", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := *g.nodes[tt.node]
			n.RollbackType, n.RollbackTargetKeys = design.RollbackType(tt.typ), tt.keys
			vs := visits(tt.visits)
			var got []string
			for _, x := range rollbackTrail(g, &n, vs, len(vs)+1) {
				got = append(got, x.Key)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("targets = %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}
