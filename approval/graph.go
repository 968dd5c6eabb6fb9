package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/svc-framework/svc/approval/design"
	"github.com/uptrace/bun"
)

// graph is a published version as the engine walks it: the materialised nodes, their assignee
// and cc rules, the edges and the version's form fields. A version is immutable, so graphs are
// cached per version id.
type graph struct {
	version   *Version
	nodes     map[string]*Node
	start     *Node
	out       map[string][]Edge
	assignees map[string][]NodeAssignee
	ccs       map[string][]NodeCC
	branches  map[string][]design.Branch
	fields    []design.FormField
	hasFields bool
	layout    designerGraph // the designer's node order, positions and edges (the detail's flow graph)
}

// loadGraph reads version id's graph (cached).
func (s *Service) loadGraph(ctx context.Context, idb bun.IDB, versionID string) (*graph, error) {
	if g, ok := s.graphs.Load(versionID); ok {
		return g.(*graph), nil
	}
	g := &graph{version: new(Version), nodes: map[string]*Node{}, out: map[string][]Edge{},
		assignees: map[string][]NodeAssignee{}, ccs: map[string][]NodeCC{}, branches: map[string][]design.Branch{}}
	if err := idb.NewSelect().Model(g.version).Where("id = ?", versionID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrVersionNotFound
		}
		return nil, err
	}
	var nodes []Node
	if err := idb.NewSelect().Model(&nodes).Where("flow_version_id = ?", versionID).Scan(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		g.nodes[n.ID], ids[i] = n, n.ID
		if n.Kind == design.NodeStart {
			g.start = n
		}
		if n.Kind == design.NodeCondition && !isNull(n.Branches) {
			var b []design.Branch
			if err := json.Unmarshal(n.Branches, &b); err != nil {
				return nil, fmt.Errorf("approval: branches of node %s: %w", n.Key, err)
			}
			g.branches[n.ID] = b
		}
	}
	if g.start == nil {
		return nil, fmt.Errorf("approval: version %s has no start node", versionID)
	}
	var edges []Edge
	if err := idb.NewSelect().Model(&edges).Where("flow_version_id = ?", versionID).Scan(ctx); err != nil {
		return nil, err
	}
	for _, e := range edges {
		g.out[e.SourceNodeID] = append(g.out[e.SourceNodeID], e)
	}
	var as []NodeAssignee
	if err := idb.NewSelect().Model(&as).Where("node_id IN (?)", bun.List(ids)).Order("sort_order").Scan(ctx); err != nil {
		return nil, err
	}
	for _, a := range as {
		g.assignees[a.NodeID] = append(g.assignees[a.NodeID], a)
	}
	var cs []NodeCC
	if err := idb.NewSelect().Model(&cs).Where("node_id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, err
	}
	for _, c := range cs {
		g.ccs[c.NodeID] = append(g.ccs[c.NodeID], c)
	}
	if !isNull(g.version.FormFields) {
		if err := json.Unmarshal(g.version.FormFields, &g.fields); err != nil {
			return nil, fmt.Errorf("approval: form fields of version %s: %w", versionID, err)
		}
		g.hasFields = true
	}
	// Stored by deploy after ParseFlow accepted it; read once per version, not per detail.
	if err := json.Unmarshal(g.version.FlowSchema, &g.layout); err != nil && !isNull(g.version.FlowSchema) {
		return nil, fmt.Errorf("approval: version %s flow schema: %w", versionID, err)
	}
	s.graphs.Store(versionID, g)
	return g, nil
}

// next is the node the single outgoing edge of n leads to.
func (g *graph) next(n *Node) (*Node, error) {
	out := g.out[n.ID]
	if len(out) != 1 {
		return nil, fmt.Errorf("approval: node %s has %d outgoing edges", n.Key, len(out))
	}
	return g.nodes[out[0].TargetNodeID], nil
}

// ccsOn are n's cc rules that fire on a decision of kind timing (always fires on both).
func (g *graph) ccsOn(n *Node, timing design.CCTiming) []NodeCC {
	var out []NodeCC
	for _, c := range g.ccs[n.ID] {
		if c.Timing == timing || c.Timing == design.CCAlways || c.Timing == "" {
			out = append(out, c)
		}
	}
	return out
}
