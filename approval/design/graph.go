package design

// The graph rules of wire-approval §5: edge ids and endpoints, degrees per node kind, the
// sourceHandle contract of condition nodes, and the topology (a DAG in which every node is
// reachable from the start and reaches an end).

// edges checks edge ids and endpoints and builds the adjacency of the well-formed edges.
func (v *validator) edges(f *Flow, in []edgeWire) {
	seen := map[string]bool{}
	for _, ew := range in {
		if ew.ID == "" {
			v.fail(RuleEmptyEdgeID, "", "an edge has an empty id")
			continue
		}
		if seen[ew.ID] {
			v.fail(RuleDuplicateEdgeID, "", "edge id %q is used twice", ew.ID).EdgeID = ew.ID
			continue
		}
		seen[ew.ID] = true
		_, src := f.byID[ew.Source]
		_, dst := f.byID[ew.Target]
		if !src {
			v.fail(RuleUnknownSourceNode, "", "edge %q starts at unknown node %q", ew.ID, ew.Source).EdgeID = ew.ID
		}
		if !dst {
			v.fail(RuleUnknownTargetNode, "", "edge %q ends at unknown node %q", ew.ID, ew.Target).EdgeID = ew.ID
		}
		if !src || !dst {
			continue
		}
		e := &Edge{ID: ew.ID, Source: ew.Source, Target: ew.Target, Data: ew.Data}
		if ew.SourceHandle != nil {
			e.SourceHandle = *ew.SourceHandle
		}
		f.Edges = append(f.Edges, e)
		f.out[e.Source] = append(f.out[e.Source], e)
		f.in[e.Target] = append(f.in[e.Target], e)
	}
}

// degrees checks in/out degrees per kind and the sourceHandle rules.
func (v *validator) degrees(f *Flow) {
	for _, n := range f.Nodes {
		outs := f.out[n.ID]
		switch n.Kind {
		case NodeStart:
			if len(f.in[n.ID]) > 0 {
				v.fail(RuleStartIncoming, n.ID, "the start node cannot have incoming edges")
			}
			if len(outs) != 1 {
				v.fail(RuleStartOutgoing, n.ID, "the start node needs exactly one outgoing edge, found %d", len(outs))
			} else if outs[0].SourceHandle != "" {
				v.fail(RuleNodeSourceHandle, n.ID, "edge %q leaves a %s node and cannot carry a sourceHandle", outs[0].ID, n.Kind)
			}
		case NodeEnd:
			if len(outs) > 0 {
				v.fail(RuleEndOutgoing, n.ID, "an end node cannot have outgoing edges")
			}
			if len(f.in[n.ID]) == 0 {
				v.fail(RuleEndIncoming, n.ID, "an end node needs at least one incoming edge")
			}
		case NodeCondition:
			v.branchEdges(n, outs)
		default:
			if len(outs) != 1 {
				v.fail(RuleNodeOutgoingCount, n.ID, "a %s node needs exactly one outgoing edge, found %d", n.Kind, len(outs))
			} else if outs[0].SourceHandle != "" {
				v.fail(RuleNodeSourceHandle, n.ID, "edge %q leaves a %s node and cannot carry a sourceHandle", outs[0].ID, n.Kind)
			}
		}
	}
}

// branchEdges checks that a condition node's outgoing edges match its branches one to one.
func (v *validator) branchEdges(n *Node, outs []*Edge) {
	branches := map[string]bool{}
	for _, b := range n.Condition.Branches {
		if b.ID != "" {
			branches[b.ID] = true
		}
	}
	used := map[string]bool{}
	for _, e := range outs {
		switch {
		case e.SourceHandle == "":
			v.fail(RuleConditionMissingHandle, n.ID, "edge %q leaves a condition node without a sourceHandle naming its branch", e.ID).EdgeID = e.ID
		case !branches[e.SourceHandle]:
			v.fail(RuleConditionUnknownHandle, n.ID, "edge %q names unknown branch %q", e.ID, e.SourceHandle).EdgeID = e.ID
		case used[e.SourceHandle]:
			v.fail(RuleConditionDuplicateHandle, n.ID, "branch %q has more than one edge", e.SourceHandle).BranchID = e.SourceHandle
		default:
			used[e.SourceHandle] = true
		}
	}
	for _, b := range n.Condition.Branches {
		if b.ID != "" && !used[b.ID] {
			v.fail(RuleConditionBranchNoEdge, n.ID, "branch %q has no outgoing edge", b.ID).BranchID = b.ID
		}
	}
}

// topology checks that the graph is acyclic, that every node is reachable from the start and
// that every node reaches an end.
func (v *validator) topology(f *Flow) {
	if cycle := f.findCycle(); cycle != "" {
		v.fail(RuleGraphCycle, cycle, "the flow graph has a cycle through node %q", cycle)
	}
	if start := f.Start(); start != nil {
		reached := f.reach([]string{start.ID}, func(id string) []string { return targets(f.out[id]) })
		for _, n := range f.Nodes {
			if !reached[n.ID] {
				v.fail(RuleNodeUnreachable, n.ID, "node %q cannot be reached from the start node", n.ID)
			}
		}
	}
	var ends []string
	for _, n := range f.Nodes {
		if n.Kind == NodeEnd {
			ends = append(ends, n.ID)
		}
	}
	if len(ends) > 0 {
		reaches := f.reach(ends, func(id string) []string { return f.Predecessors(id) })
		for _, n := range f.Nodes {
			if !reaches[n.ID] {
				v.fail(RuleNodeCannotReachEnd, n.ID, "node %q cannot reach any end node", n.ID)
			}
		}
	}
}

// findCycle returns a node on a cycle, or "" when the graph is a DAG (iterative three-colour
// depth-first search, so deep graphs cannot exhaust the stack).
func (f *Flow) findCycle() string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(f.Nodes))
	type frame struct {
		id   string
		next int
	}
	for _, root := range f.Nodes {
		if color[root.ID] != white {
			continue
		}
		stack := []frame{{id: root.ID}}
		color[root.ID] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			outs := f.out[top.id]
			if top.next == len(outs) {
				color[top.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			to := outs[top.next].Target
			top.next++
			switch color[to] {
			case grey:
				return to
			case white:
				color[to] = grey
				stack = append(stack, frame{id: to})
			}
		}
	}
	return ""
}

// reach returns the set of nodes reachable from roots along next.
func (f *Flow) reach(roots []string, next func(string) []string) map[string]bool {
	seen := make(map[string]bool, len(f.Nodes))
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		seen[r] = true
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, to := range next(id) {
			if !seen[to] {
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	return seen
}

func targets(edges []*Edge) []string {
	ids := make([]string, 0, len(edges))
	for _, e := range edges {
		ids = append(ids, e.Target)
	}
	return ids
}
