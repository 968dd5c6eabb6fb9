package approval

import (
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
)

// Node progress statuses of the flow graph (wire-approval §4 NodeProgressStatus): a visited
// node shows its latest visit's status, an unvisited one pending.
const NodeProgressPending = "pending"

// InstanceFlowGraph is the version's graph annotated with the instance's progress (§6.7), in
// the designer's node and edge order, ready for React Flow.
type InstanceFlowGraph struct {
	Nodes []FlowGraphNode `json:"nodes"`
	Edges []FlowGraphEdge `json:"edges"`
}

// FlowGraphNode is one node: id is the designer key, nodeId the persistent id.
type FlowGraphNode struct {
	ID       string            `json:"id"`
	NodeID   string            `json:"nodeId"`
	Kind     design.NodeKind   `json:"kind"`
	Position design.Position   `json:"position"`
	Data     FlowGraphNodeData `json:"data"`
}

// FlowGraphNodeData is a node's name, its latest visit's status and times, and the
// participants, cc recipients and activities of all its visits in traversal order (what the
// client's people overlay reads).
type FlowGraphNodeData struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	visitView
	StartedAt  *crud.Time `json:"startedAt,omitempty"`
	FinishedAt *crud.Time `json:"finishedAt,omitempty"`
}

// FlowGraphEdge is one edge between designer keys.
type FlowGraphEdge struct {
	ID           string  `json:"id"`
	Source       string  `json:"source"`
	Target       string  `json:"target"`
	SourceHandle *string `json:"sourceHandle,omitempty"`
}

// designerGraph is what the progress graph reads of the stored flowSchema: node order and
// positions, edge order.
type designerGraph struct {
	Nodes []struct {
		ID       string          `json:"id"`
		Position design.Position `json:"position"`
	} `json:"nodes"`
	Edges []FlowGraphEdge `json:"edges"`
}

// flowGraph is the progress graph. Condition nodes have no visits: one counts as passed when a
// node before it and a node after it are reached.
func (d *detailData) flowGraph() InstanceFlowGraph {
	dg := &d.g.layout
	views := d.visitViews()
	latest := map[string]int{}
	for i := range d.visits {
		latest[d.visits[i].NodeID] = i
	}
	byKey := make(map[string]*Node, len(d.g.nodes))
	for _, n := range d.g.nodes {
		byKey[n.Key] = n
	}
	out := InstanceFlowGraph{Nodes: make([]FlowGraphNode, 0, len(dg.Nodes)), Edges: dg.Edges}
	if out.Edges == nil {
		out.Edges = []FlowGraphEdge{}
	}
	status := map[string]string{}
	for _, dn := range dg.Nodes {
		n := byKey[dn.ID]
		if n == nil {
			continue
		}
		fn := FlowGraphNode{ID: n.Key, NodeID: n.ID, Kind: n.Kind, Position: dn.Position, Data: FlowGraphNodeData{Name: n.Name, Status: NodeProgressPending}}
		if i, ok := latest[n.ID]; ok {
			v := &d.visits[i]
			fn.Data.Status, fn.Data.visitView = v.Status, d.aggregate(n.ID, views)
			fn.Data.StartedAt, fn.Data.FinishedAt = optionalTime(v.CreatedAt), optionalTime(v.FinishedAt)
		}
		status[n.Key] = fn.Data.Status
		out.Nodes = append(out.Nodes, fn)
	}
	passConditions(out.Nodes, dg.Edges, status)
	return out
}

// aggregate is the view of node id's visits in sequence order: the node's settings and the
// concatenated participants, cc recipients and activities.
func (d *detailData) aggregate(id string, views []visitView) visitView {
	var out visitView
	for i := range d.visits {
		if d.visits[i].NodeID != id {
			continue
		}
		v := views[i]
		out.ExecutionType, out.ApprovalMethod, out.PassRule, out.PassRatio = v.ExecutionType, v.ApprovalMethod, v.PassRule, v.PassRatio
		out.Participants = append(out.Participants, v.Participants...)
		out.CCRecipients = append(out.CCRecipients, v.CCRecipients...)
		out.Activities = append(out.Activities, v.Activities...)
	}
	return out
}

// passConditions marks condition nodes passed when a reached node leads into them and they lead
// to a reached node (repeated for chained conditions).
func passConditions(nodes []FlowGraphNode, edges []FlowGraphEdge, status map[string]string) {
	for changed := true; changed; {
		changed = false
		for i := range nodes {
			n := &nodes[i]
			if n.Kind != design.NodeCondition || n.Data.Status != NodeProgressPending {
				continue
			}
			in, out := false, false
			for _, e := range edges {
				if e.Target == n.ID && status[e.Source] != NodeProgressPending {
					in = true
				}
				if e.Source == n.ID && status[e.Target] != NodeProgressPending {
					out = true
				}
			}
			if in && out {
				n.Data.Status, status[n.ID], changed = VisitPassed, VisitPassed, true
			}
		}
	}
}
