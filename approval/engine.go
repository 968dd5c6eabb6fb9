package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/event"
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
		if n.Kind == string(design.NodeStart) {
			g.start = n
		}
		if n.Kind == string(design.NodeCondition) && !isNull(n.Branches) {
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
	if err := idb.NewSelect().Model(&as).Where("node_id IN (?)", bun.In(ids)).Order("sort_order").Scan(ctx); err != nil {
		return nil, err
	}
	for _, a := range as {
		g.assignees[a.NodeID] = append(g.assignees[a.NodeID], a)
	}
	var cs []NodeCC
	if err := idb.NewSelect().Model(&cs).Where("node_id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
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

// byKey is the node with designer key key.
func (g *graph) byKey(key string) *Node {
	for _, n := range g.nodes {
		if n.Key == key {
			return n
		}
	}
	return nil
}

// perms are n's field permissions as design's type.
func perms(n *Node) map[string]design.Permission {
	out := make(map[string]design.Permission, len(n.FieldPermissions))
	for k, v := range n.FieldPermissions {
		out[k] = design.Permission(v)
	}
	return out
}

// run is one engine command inside its transaction: the locked instance, its graph, the
// operator and the clock reading every row of the command shares.
type run struct {
	s    *Service
	ctx  context.Context
	tx   bun.Tx
	inst *Instance
	flow *Flow
	g    *graph
	op   UserInfo
	now  time.Time
	seq  int
}

// newRun prepares a run on inst (already locked): its graph and the last visit sequence (0
// for an instance created by this command). The flow row is read when a delegation lookup
// needs its category.
func (s *Service) newRun(ctx context.Context, tx bun.Tx, inst *Instance, op UserInfo) (*run, error) {
	g, err := s.loadGraph(ctx, tx, inst.FlowVersionID)
	if err != nil {
		return nil, err
	}
	r := &run{s: s, ctx: ctx, tx: tx, inst: inst, g: g, op: op, now: s.clock().UTC()}
	if inst.CurrentNodeID == nil && inst.Status == InstanceRunning {
		return r, nil // a new instance: no visit yet
	}
	if err := tx.NewSelect().Model((*Visit)(nil)).ColumnExpr("COALESCE(MAX(sequence), 0)").
		Where("instance_id = ?", inst.ID).Scan(ctx, &r.seq); err != nil {
		return nil, err
	}
	return r, nil
}

// flowRow is the instance's flow (read once per run).
func (r *run) flowRow() (*Flow, error) {
	if r.flow == nil {
		f := new(Flow)
		if err := r.tx.NewSelect().Model(f).Where("id = ?", r.inst.FlowID).Scan(r.ctx); err != nil {
			return nil, err
		}
		r.flow = f
	}
	return r.flow, nil
}

// lockInstance reads instance id for update: the first lock of every command that changes an
// instance (fixed order: instance row, then its tasks), so two deciders on one node serialise.
// SQLite transactions begin IMMEDIATE and are serialised by the write lock.
func (s *Service) lockInstance(ctx context.Context, tx bun.Tx, id string) (*Instance, error) {
	inst := new(Instance)
	q := tx.NewSelect().Model(inst).Where("id = ?", id)
	if s.db.Kind != config.SQLite {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrInstanceNotFound
		}
		return nil, err
	}
	return inst, nil
}

// maxDepth guards the forward walk against a corrupt graph (deploy rejects cycles).
const maxDepth = 256

// enter walks forward from node n until a node waits or the flow ends.
func (r *run) enter(n *Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("approval: the walk from %s is too deep", n.Key)
	}
	if err := r.setCurrent(n); err != nil {
		return err
	}
	switch design.NodeKind(n.Kind) {
	case design.NodeStart:
		if _, err := r.visit(n, VisitPassed); err != nil {
			return err
		}
		return r.advance(n, depth)
	case design.NodeEnd:
		if _, err := r.visit(n, VisitPassed); err != nil {
			return err
		}
		return r.finish(InstanceApproved, "")
	case design.NodeCondition:
		b, err := design.EvalBranch(r.g.branches[n.ID], design.Env{FormData: r.inst.FormData, Globals: r.inst.Globals,
			ApplicantID: r.inst.ApplicantID, ApplicantDepartmentID: deref(r.inst.ApplicantDepartmentID)})
		if err != nil {
			return fmt.Errorf("approval: condition %s: %w", n.Key, err)
		}
		for _, e := range r.g.out[n.ID] {
			if e.SourceHandle != nil && *e.SourceHandle == b.ID {
				return r.enter(r.g.nodes[e.TargetNodeID], depth+1)
			}
		}
		return fmt.Errorf("approval: branch %s of %s has no edge", b.ID, n.Key)
	case design.NodeCC:
		v, err := r.visit(n, VisitActive)
		if err != nil {
			return err
		}
		recs, err := r.cc(n, v, r.g.ccs[n.ID], "")
		if err != nil {
			return err
		}
		if n.IsReadConfirmRequired && len(recs) > 0 {
			return nil // waits for mark_cc_read
		}
		if err := r.closeVisit(v, VisitPassed); err != nil {
			return err
		}
		return r.advance(n, depth)
	case design.NodeApproval, design.NodeHandle:
		return r.enterTask(n, depth)
	}
	return fmt.Errorf("approval: unknown node kind %q", n.Kind)
}

// advance leaves n along its single edge.
func (r *run) advance(n *Node, depth int) error {
	next, err := r.g.next(n)
	if err != nil {
		return err
	}
	return r.enter(next, depth+1)
}

func (r *run) setCurrent(n *Node) error {
	id := n.ID
	r.inst.CurrentNodeID = &id
	return nil
}

// visit inserts the next visit of n with status.
func (r *run) visit(n *Node, status string) (*Visit, error) {
	r.seq++
	v := &Visit{ID: crud.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, TenantID: r.inst.TenantID,
		InstanceID: r.inst.ID, NodeID: n.ID, Sequence: r.seq, Status: status}
	if status != VisitActive {
		v.FinishedAt = crud.NewTime(r.now)
	}
	_, err := r.tx.NewInsert().Model(v).Exec(r.ctx)
	return v, err
}

// closeVisit finishes v with status.
func (r *run) closeVisit(v *Visit, status string) error {
	v.Status, v.FinishedAt = status, crud.NewTime(r.now)
	_, err := r.tx.NewUpdate().Model(v).Column("status", "finished_at").WherePK().Exec(r.ctx)
	return err
}

// enterTask enters an approval or handle node: snapshot the form, honour the execution type,
// resolve the assignees (same-applicant, delegation, empty-assignee rules) and create the tasks.
func (r *run) enterTask(n *Node, depth int) error {
	v, err := r.visit(n, VisitActive)
	if err != nil {
		return err
	}
	snap := &FormSnapshot{ID: crud.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID,
		NodeID: n.ID, FormData: nonNilMap(r.inst.FormData)}
	if _, err := r.tx.NewInsert().Model(snap).Exec(r.ctx); err != nil {
		return err
	}
	switch n.ExecutionType {
	case string(design.ExecutionAutoPass):
		return r.autoPass(n, v, "execution_type", depth)
	case string(design.ExecutionAutoReject):
		if err := r.closeVisit(v, VisitRejected); err != nil {
			return err
		}
		return r.finish(InstanceRejected, "")
	}
	seats, reason, err := r.resolveSeats(n)
	if err != nil {
		return err
	}
	if len(seats) == 0 {
		return r.autoPass(n, v, reason, depth)
	}
	if err := r.createTasks(n, v, seats); err != nil {
		return err
	}
	if n.ConsecutiveApproverAction == string(design.ConsecutiveAutoPass) {
		return r.consecutive(n, v, depth)
	}
	return nil
}

// autoPass passes n's visit without tasks and moves on (event approval.node.auto_passed).
func (r *run) autoPass(n *Node, v *Visit, reason string, depth int) error {
	if err := r.closeVisit(v, VisitPassed); err != nil {
		return err
	}
	if err := r.publish(EventNodeAutoPassed, func(e *InstanceEvent) { e.NodeID, e.NodeName, e.Reason = n.ID, n.Name, reason }); err != nil {
		return err
	}
	if _, err := r.cc(n, v, r.timed(n, design.CCOnApprove), ""); err != nil {
		return err
	}
	return r.advance(n, depth)
}

// seat is one resolved assignee of a node: the person the task goes to and, through a
// delegation, whom it is for.
type seat struct {
	user, delegator string
	sort            int
}

// resolveSeats resolves n's assignee rules in sort order (dedupe), applies the same-applicant
// action per seat, the empty-assignee action and the delegation chains. No seats and a reason
// means the node auto-passes.
func (r *run) resolveSeats(n *Node) ([]seat, string, error) {
	var users []string
	for _, a := range r.g.assignees[n.ID] {
		ids, err := r.resolveRule(a.Kind, a.IDs, a.FormField, true)
		if err != nil {
			return nil, "", err
		}
		users = append(users, ids...)
	}
	users = dedupe(users)
	// Same applicant, per seat (wire-approval §15: R: semantics with exclude).
	var kept []string
	autoPassed := false
	for _, u := range users {
		if u != r.inst.ApplicantID || n.Kind != string(design.NodeApproval) {
			kept = append(kept, u)
			continue
		}
		switch n.SameApplicantAction {
		case string(design.SameApplicantAutoPass):
			autoPassed = true
		case string(design.SameApplicantExclude):
		case string(design.SameApplicantTransferSuperior):
			sup, err := r.s.assignees.Superior(r.ctx, u)
			if err != nil {
				return nil, "", Detail(ErrAssigneeResolveFailed, err.Error())
			}
			if sup != "" {
				kept = append(kept, sup)
			} else {
				kept = append(kept, u)
			}
		default:
			kept = append(kept, u)
		}
	}
	kept = dedupe(kept)
	if len(kept) == 0 && autoPassed {
		return nil, "same_applicant", nil
	}
	if len(kept) == 0 {
		switch n.EmptyAssigneeAction {
		case string(design.EmptyAutoPass), "":
			return nil, "empty_assignee", nil
		case string(design.EmptyTransferAdmin):
			kept = n.AdminUserIDs
		case string(design.EmptyTransferSuperior):
			sup, err := r.s.assignees.Superior(r.ctx, r.inst.ApplicantID)
			if err != nil {
				return nil, "", Detail(ErrAssigneeResolveFailed, err.Error())
			}
			if sup != "" {
				kept = []string{sup}
			}
		case string(design.EmptyTransferApplicant):
			kept = []string{r.inst.ApplicantID}
		case string(design.EmptyTransferSpecified):
			kept = n.FallbackUserIDs
		}
		kept = dedupe(kept)
		if len(kept) == 0 {
			return nil, "", ErrNoAssignee
		}
	}
	seats := make([]seat, 0, len(kept))
	taken := map[string]bool{}
	for i, u := range kept {
		final, err := r.delegate(u)
		if err != nil {
			return nil, "", err
		}
		if taken[final] {
			continue
		}
		taken[final] = true
		st := seat{user: final, sort: i}
		if final != u {
			st.delegator = u
		}
		seats = append(seats, st)
	}
	return seats, "", nil
}

// resolveRule resolves one assignee or cc rule (wire-approval §8): user ids; role → the role's
// users; department → the department's leaders; self → the applicant; superior → the
// applicant's superior; department_leader → the leaders of the applicant's department;
// form_field → the user id(s) in the form field (string or array).
func (r *run) resolveRule(kind string, ids []string, formField *string, strict bool) ([]string, error) {
	as := r.s.assignees
	fail := func(err error) ([]string, error) {
		if !strict {
			return nil, nil
		}
		return nil, Detail(ErrAssigneeResolveFailed, err.Error())
	}
	var out []string
	switch kind {
	case "user":
		out = append(out, ids...)
	case "role":
		for _, id := range ids {
			us, err := as.RoleUsers(r.ctx, id)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case "department":
		for _, id := range ids {
			us, err := as.DepartmentLeaders(r.ctx, id)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case "self":
		out = append(out, r.inst.ApplicantID)
	case "superior":
		sup, err := as.Superior(r.ctx, r.inst.ApplicantID)
		if err != nil {
			return fail(err)
		}
		if sup != "" {
			out = append(out, sup)
		}
	case "department_leader":
		if d := deref(r.inst.ApplicantDepartmentID); d != "" {
			us, err := as.DepartmentLeaders(r.ctx, d)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case "form_field":
		switch v := r.inst.FormData[deref(formField)].(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

// delegate follows the active delegations of user (window containing now; flow-scoped before
// category-scoped before global, newest first) up to svc.approval.delegation_max_depth,
// stopping on a cycle, and returns the final delegatee.
func (r *run) delegate(user string) (string, error) {
	depth := r.s.cfg.DelegationMaxDepth
	if depth <= 0 {
		depth = 10
	}
	f, err := r.flowRow()
	if err != nil {
		return "", err
	}
	seen := map[string]bool{user: true}
	cur := user
	for i := 0; i < depth; i++ {
		var ds []Delegation
		err := r.tx.NewSelect().Model(&ds).Where("delegator_id = ?", cur).Where("is_active = ?", true).
			Where("starts_at <= ?", crud.NewTime(r.now)).Where("ends_at > ?", crud.NewTime(r.now)).
			WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("flow_id = ?", f.ID).WhereOr("flow_category_id = ?", f.CategoryID).
					WhereOr("(flow_id IS NULL AND flow_category_id IS NULL)")
			}).Order("created_at DESC").Scan(r.ctx)
		if err != nil {
			return "", err
		}
		if len(ds) == 0 {
			return cur, nil
		}
		rank := func(d Delegation) int {
			switch {
			case d.FlowID != nil:
				return 0
			case d.FlowCategoryID != nil:
				return 1
			}
			return 2
		}
		sort.SliceStable(ds, func(a, b int) bool { return rank(ds[a]) < rank(ds[b]) })
		nxt := ds[0].DelegateeID
		if seen[nxt] {
			return cur, nil // cycle: stop at the last person before it
		}
		seen[nxt] = true
		cur = nxt
	}
	return cur, nil
}

// createTasks creates the tasks of n's visit v: parallel → all pending; sequential → the first
// pending, the rest waiting in sort order. Pending tasks get the deadline and
// approval.task.created.
func (r *run) createTasks(n *Node, v *Visit, seats []seat) error {
	ids := make([]string, 0, len(seats)*2)
	for _, st := range seats {
		ids = append(ids, st.user)
		if st.delegator != "" {
			ids = append(ids, st.delegator)
		}
	}
	infos, err := r.s.userInfos(r.ctx, ids)
	if err != nil {
		return err
	}
	tasks := make([]Task, len(seats))
	for i, st := range seats {
		t := &tasks[i]
		r.fillTask(t, n, v, infos[st.user], st.sort)
		if st.delegator != "" {
			d := infos[st.delegator]
			t.DelegatorID, t.DelegatorName = &d.ID, &d.Name
			t.DelegatorDepartmentID, t.DelegatorDepartmentName = optional(d.DepartmentID), optional(d.DepartmentName)
		}
		if n.ApprovalMethod == string(design.MethodSequential) && i > 0 {
			t.Status, t.Deadline = TaskWaiting, crud.Time{}
		}
	}
	if _, err := r.tx.NewInsert().Model(&tasks).Exec(r.ctx); err != nil {
		return err
	}
	for i := range tasks {
		if tasks[i].Status == TaskPending {
			if err := r.taskEvent(EventTaskCreated, &tasks[i], n, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillTask sets a new pending task of node n's visit v for user u.
func (r *run) fillTask(t *Task, n *Node, v *Visit, u UserInfo, sortOrder int) {
	now := crud.NewTime(r.now)
	t.ID, t.CreatedAt, t.UpdatedAt, t.CreatedBy, t.UpdatedBy = crud.NewID(), now, now, r.op.ID, r.op.ID
	t.TenantID, t.InstanceID, t.NodeID, t.VisitID = r.inst.TenantID, r.inst.ID, n.ID, v.ID
	t.AssigneeID, t.AssigneeName = u.ID, u.Name
	t.AssigneeDepartmentID, t.AssigneeDepartmentName = optional(u.DepartmentID), optional(u.DepartmentName)
	t.SortOrder, t.Status = sortOrder, TaskPending
	t.Deadline = r.deadline(n)
}

// deadline is now + the node's timeout hours (none without a timeout).
func (r *run) deadline(n *Node) crud.Time {
	if n.TimeoutHours <= 0 {
		return crud.Time{}
	}
	return crud.NewTime(r.now.Add(time.Duration(n.TimeoutHours) * time.Hour))
}

// consecutive auto-approves the tasks of v whose assignee approved in the approval node visit
// just before it, then evaluates the node.
func (r *run) consecutive(n *Node, v *Visit, depth int) error {
	var prev Visit
	err := r.tx.NewSelect().Model(&prev).Join("JOIN apv_flow_node AS fn ON fn.id = visit.node_id").
		Where("visit.instance_id = ?", r.inst.ID).Where("visit.sequence < ?", v.Sequence).
		Where("fn.kind = ?", string(design.NodeApproval)).Where("visit.status = ?", VisitPassed).
		OrderExpr("visit.sequence DESC").Limit(1).Scan(r.ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var approvers []string
	if err := r.tx.NewSelect().Model((*Task)(nil)).Column("assignee_id").Where("visit_id = ?", prev.ID).
		Where("status = ?", TaskApproved).Scan(r.ctx, &approvers); err != nil {
		return err
	}
	for {
		tasks, err := r.visitTasks(v.ID)
		if err != nil {
			return err
		}
		var hit *Task
		for i := range tasks {
			if tasks[i].Status == TaskPending && slices.Contains(approvers, tasks[i].AssigneeID) {
				hit = &tasks[i]
				break
			}
		}
		if hit == nil {
			return nil
		}
		if err := r.setTask(hit, TaskApproved); err != nil {
			return err
		}
		if err := r.log(ActionApprove, n, hit, func(l *ActionLog) {
			l.OperatorID, l.OperatorName = hit.AssigneeID, hit.AssigneeName
			l.Meta = json.RawMessage(`{"auto":"consecutive_approver"}`)
		}); err != nil {
			return err
		}
		done, err := r.evaluate(n, v, depth)
		if err != nil || done {
			return err
		}
	}
}

// visitTasks are the tasks of visit id in sort order.
func (r *run) visitTasks(visitID string) ([]Task, error) {
	var ts []Task
	err := r.tx.NewSelect().Model(&ts).Where("visit_id = ?", visitID).Order("sort_order", "created_at").Scan(r.ctx)
	return ts, err
}

// setTask moves t to status (finished unless waiting or pending).
func (r *run) setTask(t *Task, status string) error {
	t.Status, t.UpdatedAt, t.UpdatedBy = status, crud.NewTime(r.now), r.op.ID
	if status != TaskPending && status != TaskWaiting {
		t.FinishedAt = crud.NewTime(r.now)
	}
	_, err := r.tx.NewUpdate().Model(t).Column("status", "updated_at", "updated_by", "finished_at", "deadline").WherePK().Exec(r.ctx)
	return err
}

// counted reports whether a task's outcome counts for the pass rule (wire-approval §8): not
// transferred, canceled, removed, skipped or rolled back.
func counted(status string) bool {
	switch status {
	case TaskTransferred, TaskCanceled, TaskRemoved, TaskSkipped, TaskRolledBack:
		return false
	}
	return true
}

// outcome applies n's pass rule to the tasks of its visit: "passed", "rejected" or "".
func outcome(n *Node, tasks []Task) string {
	total, ok, no := 0, 0, 0
	for _, t := range tasks {
		if !counted(t.Status) {
			continue
		}
		total++
		switch t.Status {
		case TaskApproved, TaskHandled:
			ok++
		case TaskRejected:
			no++
		}
	}
	if total == 0 {
		return "passed"
	}
	switch n.PassRule {
	case string(design.PassAny):
		if ok > 0 {
			return "passed"
		}
		if no == total {
			return "rejected"
		}
	case string(design.PassRatio):
		ratio := n.PassRatio.Float()
		if ratio <= 1 {
			ratio *= 100 // the older 0..1 scale
		}
		if float64(ok)*100 >= ratio*float64(total) {
			return "passed"
		}
		if float64(total-no)*100 < ratio*float64(total) {
			return "rejected"
		}
	default: // all
		if no > 0 {
			return "rejected"
		}
		if ok == total {
			return "passed"
		}
	}
	return ""
}

// evaluate applies the pass rule to v after a change: passed → cancel the rest, fire CCs,
// advance; rejected → cancel the rest, fire CCs, reject the instance; undecided → activate the
// next sequential task when none is pending. It reports whether the node finished.
func (r *run) evaluate(n *Node, v *Visit, depth int) (bool, error) {
	tasks, err := r.visitTasks(v.ID)
	if err != nil {
		return false, err
	}
	switch outcome(n, tasks) {
	case "passed":
		if err := r.cancelLive(tasks, n, "node_passed"); err != nil {
			return true, err
		}
		if err := r.closeVisit(v, VisitPassed); err != nil {
			return true, err
		}
		if _, err := r.cc(n, v, r.timed(n, design.CCOnApprove), ""); err != nil {
			return true, err
		}
		return true, r.advance(n, depth)
	case "rejected":
		if err := r.cancelLive(tasks, n, "node_rejected"); err != nil {
			return true, err
		}
		if err := r.closeVisit(v, VisitRejected); err != nil {
			return true, err
		}
		if _, err := r.cc(n, v, r.timed(n, design.CCOnReject), ""); err != nil {
			return true, err
		}
		return true, r.finish(InstanceRejected, "")
	}
	for _, t := range tasks {
		if t.Status == TaskPending {
			return false, nil
		}
	}
	for i := range tasks {
		if tasks[i].Status == TaskWaiting {
			t := &tasks[i]
			t.Deadline = r.deadline(n)
			if err := r.setTask(t, TaskPending); err != nil {
				return false, err
			}
			return false, r.taskEvent(EventTaskCreated, t, n, nil)
		}
	}
	return false, nil
}

// cancelLive cancels the pending and waiting tasks among tasks (approval.task.canceled each).
func (r *run) cancelLive(tasks []Task, n *Node, reason string) error {
	for i := range tasks {
		t := &tasks[i]
		if t.Status != TaskPending && t.Status != TaskWaiting {
			continue
		}
		if err := r.setTask(t, TaskCanceled); err != nil {
			return err
		}
		if err := r.taskEvent(EventTaskCanceled, t, n, func(e *InstanceEvent) { e.Reason = reason }); err != nil {
			return err
		}
	}
	return nil
}

// cancelAll cancels every live task and active visit of the instance (withdraw, terminate).
func (r *run) cancelAll(reason string) error {
	var tasks []Task
	if err := r.tx.NewSelect().Model(&tasks).Where("instance_id = ?", r.inst.ID).
		Where("status IN (?)", bun.In([]string{TaskPending, TaskWaiting})).Order("sort_order").Scan(r.ctx); err != nil {
		return err
	}
	for i := range tasks {
		if err := r.cancelLive(tasks[i:i+1], r.g.nodes[tasks[i].NodeID], reason); err != nil {
			return err
		}
	}
	_, err := r.tx.NewUpdate().Model((*Visit)(nil)).Set("status = ?", VisitCanceled).Set("finished_at = ?", crud.NewTime(r.now)).
		Where("instance_id = ?", r.inst.ID).Where("status = ?", VisitActive).Exec(r.ctx)
	return err
}

// timed are n's cc rules that fire on a decision of kind timing (always fires on both).
func (r *run) timed(n *Node, timing design.CCTiming) []NodeCC {
	var out []NodeCC
	for _, c := range r.g.ccs[n.ID] {
		if c.Timing == string(timing) || c.Timing == string(design.CCAlways) || c.Timing == "" {
			out = append(out, c)
		}
	}
	return out
}

// cc delivers carbon copies of rules (best effort: a rule that does not resolve is skipped)
// for node n's visit v, deduplicated per visit and user, and publishes approval.cc.notified.
func (r *run) cc(n *Node, v *Visit, rules []NodeCC, taskID string) ([]CCRecord, error) {
	var users []string
	for _, c := range rules {
		ids, _ := r.resolveRule(c.Kind, c.IDs, c.FormField, false)
		users = append(users, ids...)
	}
	users = dedupe(users)
	if len(users) == 0 {
		return nil, nil
	}
	var have []string
	if err := r.tx.NewSelect().Model((*CCRecord)(nil)).Column("cc_user_id").Where("visit_id = ?", v.ID).Scan(r.ctx, &have); err != nil {
		return nil, err
	}
	users = slices.DeleteFunc(users, func(u string) bool { return slices.Contains(have, u) })
	return r.insertCC(n, &v.ID, users, taskID, false)
}

// insertCC writes the cc records of users (manual ones without a visit) and publishes
// approval.cc.notified.
func (r *run) insertCC(n *Node, visitID *string, users []string, taskID string, manual bool) ([]CCRecord, error) {
	if len(users) == 0 {
		return nil, nil
	}
	infos, err := r.s.userInfos(r.ctx, users)
	if err != nil {
		return nil, err
	}
	recs := make([]CCRecord, len(users))
	rec := make([]UserInfo, len(users))
	for i, u := range users {
		in := infos[u]
		rec[i] = in
		recs[i] = CCRecord{ID: crud.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID,
			NodeID: &n.ID, VisitID: visitID, TaskID: optional(taskID), CCUserID: u, CCUserName: in.Name,
			CCUserDepartmentID: optional(in.DepartmentID), CCUserDepartmentName: optional(in.DepartmentName), IsManual: manual}
	}
	if _, err := r.tx.NewInsert().Model(&recs).Exec(r.ctx); err != nil {
		return nil, err
	}
	return recs, r.publish(EventCCNotified, func(e *InstanceEvent) {
		e.NodeID, e.NodeName, e.Recipients, e.IsManual = n.ID, n.Name, rec, &manual
	})
}

// finish moves the instance to a final (or resting) status and, for approved, rejected and
// terminated, publishes approval.instance.completed.
func (r *run) finish(status, reason string) error {
	if !canTransition(r.inst.Status, status) {
		return ErrInvalidInstanceTransition
	}
	r.inst.Status, r.inst.FinishedAt = status, crud.NewTime(r.now)
	switch status {
	case InstanceApproved, InstanceRejected, InstanceTerminated:
		if status != InstanceApproved {
			if err := r.cancelAll("instance_" + status); err != nil {
				return err
			}
		}
		return r.publish(EventInstanceCompleted, func(e *InstanceEvent) {
			e.FinalStatus, e.FinishedAt = status, &r.inst.FinishedAt
			if status == InstanceTerminated {
				e.Reason = reason
			}
		})
	}
	return nil
}

// save writes the instance's mutable columns.
func (r *run) save() error {
	r.inst.UpdatedAt, r.inst.UpdatedBy = crud.NewTime(r.now), r.op.ID
	_, err := r.tx.NewUpdate().Model(r.inst).Column("status", "current_node_id", "finished_at", "form_data", "updated_at", "updated_by").
		WherePK().Exec(r.ctx)
	return err
}

// log writes an action log row of action at node n (nil: instance level) and task t (nil: none).
func (r *run) log(action string, n *Node, t *Task, fill func(*ActionLog)) error {
	l := &ActionLog{ID: crud.NewID(), CreatedAt: crud.NewTime(r.now), CreatedBy: r.op.ID, InstanceID: r.inst.ID, Action: action,
		OperatorID: r.op.ID, OperatorName: r.op.Name, OperatorDepartmentID: optional(r.op.DepartmentID),
		OperatorDepartmentName: optional(r.op.DepartmentName), AddedAssignees: []UserInfo{}, RemovedAssignees: []UserInfo{}, CCUsers: []UserInfo{}}
	if n != nil {
		l.NodeID = &n.ID
	}
	if t != nil {
		l.TaskID = &t.ID
	}
	if fill != nil {
		fill(l)
	}
	_, err := r.tx.NewInsert().Model(l).Exec(r.ctx)
	return err
}

// canTransition is the instance state machine of wire-approval §7.
func canTransition(from, to string) bool {
	switch from {
	case InstanceRunning:
		return to != InstanceRunning
	case InstanceReturned:
		return to == InstanceRunning || to == InstanceTerminated || to == InstanceWithdrawn
	case InstanceWithdrawn:
		return to == InstanceRunning || to == InstanceTerminated
	}
	return false
}

// userInfos resolves ids through the directory; unknown ids get their id as name.
func (s *Service) userInfos(ctx context.Context, ids []string) (map[string]UserInfo, error) {
	m, err := s.users.ResolveUsers(ctx, dedupe(ids))
	if err != nil {
		return nil, Detail(ErrAssigneeResolveFailed, err.Error())
	}
	out := make(map[string]UserInfo, len(ids))
	for _, id := range ids {
		u, ok := m[id]
		if !ok || u.Name == "" {
			u.Name = id
		}
		u.ID = id
		out[id] = u
	}
	return out, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// publish publishes an instance event of typ inside the run's transaction.
func (r *run) publish(typ string, fill func(*InstanceEvent)) error {
	e := r.instanceEvent()
	if fill != nil {
		fill(&e)
	}
	return r.s.events.Publish(r.ctx, event.Named{Type: typ, Payload: e}, event.InTx(r.tx))
}

// taskEvent publishes a task event of typ for t at node n.
func (r *run) taskEvent(typ string, t *Task, n *Node, fill func(*InstanceEvent)) error {
	return r.publish(typ, func(e *InstanceEvent) {
		e.TaskID, e.NodeID, e.NodeName = t.ID, n.ID, n.Name
		a := UserInfo{ID: t.AssigneeID, Name: t.AssigneeName, DepartmentID: deref(t.AssigneeDepartmentID), DepartmentName: deref(t.AssigneeDepartmentName)}
		e.Assignee = &a
		if !t.Deadline.IsZero() {
			d := t.Deadline
			e.Deadline = &d
		}
		if fill != nil {
			fill(e)
		}
	})
}

func (r *run) instanceEvent() InstanceEvent {
	i := r.inst
	return InstanceEvent{InstanceID: i.ID, InstanceNo: i.InstanceNo, TenantID: i.TenantID, Title: i.Title, FlowID: i.FlowID,
		FlowCode: i.FlowCode, BusinessRef: i.BusinessRef, OccurredTime: r.now,
		Applicant: UserInfo{ID: i.ApplicantID, Name: i.ApplicantName, DepartmentID: deref(i.ApplicantDepartmentID), DepartmentName: deref(i.ApplicantDepartmentName)}}
}
