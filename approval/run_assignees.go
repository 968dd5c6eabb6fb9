package approval

import (
	"context"
	"sort"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// seat is one resolved assignee of a node: the person the task goes to and, through a
// delegation, whom it is for.
type seat struct {
	user, delegator string
	sort            int
}

// resolveSeats resolves n's assignee rules in sort order (dedupe), applies the same-applicant
// action per seat, the empty-assignee action and the delegation chains. No seats and a reason
// means the node auto-passes.
func (r *run) resolveSeats(ctx context.Context, n *Node) ([]seat, string, error) {
	var users []string
	for _, a := range r.g.assignees[n.ID] {
		ids, err := r.resolveRule(ctx, a.Kind, a.IDs, a.FormField, true)
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
		if u != r.inst.ApplicantID || n.Kind != design.NodeApproval {
			kept = append(kept, u)
			continue
		}
		switch n.SameApplicantAction {
		case design.SameApplicantAutoPass:
			autoPassed = true
		case design.SameApplicantExclude:
		case design.SameApplicantTransferSuperior:
			sup, err := r.s.assignees.Superior(ctx, u)
			if err != nil {
				return nil, "", ErrAssigneeResolveFailed.Wrap(err)
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
		case design.EmptyAutoPass, "":
			return nil, "empty_assignee", nil
		case design.EmptyTransferAdmin:
			kept = n.AdminUserIDs
		case design.EmptyTransferSuperior:
			sup, err := r.s.assignees.Superior(ctx, r.inst.ApplicantID)
			if err != nil {
				return nil, "", ErrAssigneeResolveFailed.Wrap(err)
			}
			if sup != "" {
				kept = []string{sup}
			}
		case design.EmptyTransferApplicant:
			kept = []string{r.inst.ApplicantID}
		case design.EmptyTransferSpecified:
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
		final, err := r.delegate(ctx, u)
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
// form_field → the user id(s) in the form field (string or array). A cc rule passes its kind
// as an assignee kind: cc kinds are assignee kinds by the same names (user, role, department,
// form_field).
func (r *run) resolveRule(ctx context.Context, kind design.AssigneeKind, ids []string, formField *string, strict bool) ([]string, error) {
	as := r.s.assignees
	fail := func(err error) ([]string, error) {
		if !strict {
			return nil, nil
		}
		return nil, ErrAssigneeResolveFailed.Wrap(err)
	}
	var out []string
	switch kind {
	case design.AssigneeUser:
		out = append(out, ids...)
	case design.AssigneeRole:
		for _, id := range ids {
			us, err := as.RoleUsers(ctx, id)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case design.AssigneeDepartment:
		for _, id := range ids {
			us, err := as.DepartmentLeaders(ctx, id)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case design.AssigneeSelf:
		out = append(out, r.inst.ApplicantID)
	case design.AssigneeSuperior:
		sup, err := as.Superior(ctx, r.inst.ApplicantID)
		if err != nil {
			return fail(err)
		}
		if sup != "" {
			out = append(out, sup)
		}
	case design.AssigneeDepartmentLeader:
		if d := deref(r.inst.ApplicantDepartmentID); d != "" {
			us, err := as.DepartmentLeaders(ctx, d)
			if err != nil {
				return fail(err)
			}
			out = append(out, us...)
		}
	case design.AssigneeFormField:
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
func (r *run) delegate(ctx context.Context, user string) (string, error) {
	depth := r.s.cfg.DelegationMaxDepth // default applied at load
	f, err := r.flowRow(ctx)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{user: true}
	cur := user
	for i := 0; i < depth; i++ {
		var ds []Delegation
		// apv_delegation is not written by a run: no flush of the deferred writes first.
		err := r.tx.NewSelect().Model(&ds).Where("delegator_id = ?", cur).Where("is_active = ?", true).
			Where("starts_at <= ?", crud.NewTime(r.now)).Where("ends_at > ?", crud.NewTime(r.now)).
			WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("flow_id = ?", f.ID).WhereOr("flow_category_id = ?", f.CategoryID).
					WhereOr("(flow_id IS NULL AND flow_category_id IS NULL)")
			}).Order("created_at DESC").Scan(ctx)
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
func (r *run) createTasks(ctx context.Context, n *Node, v *Visit, seats []seat) error {
	ids := make([]string, 0, len(seats)*2)
	for _, st := range seats {
		ids = append(ids, st.user)
		if st.delegator != "" {
			ids = append(ids, st.delegator)
		}
	}
	infos, err := r.s.userInfos(ctx, ids)
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
		if n.ApprovalMethod == design.MethodSequential && i > 0 {
			t.Status, t.Deadline = TaskWaiting, crud.Time{}
		}
	}
	if err := r.writes.Queue(ctx, r.tx.NewInsert().Model(&tasks)); err != nil {
		return err
	}
	return r.announcePending(ctx, tasks, n)
}

// announcePending publishes approval.task.created for the pending tasks among the new tasks of
// node n (waiting ones announce when they become pending).
func (r *run) announcePending(ctx context.Context, tasks []Task, n *Node) error {
	for i := range tasks {
		if tasks[i].Status == TaskPending {
			if err := r.taskEvent(ctx, EventTaskCreated, &tasks[i], n, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillTask sets a new pending task of node n's visit v for user u.
func (r *run) fillTask(t *Task, n *Node, v *Visit, u UserInfo, sortOrder int) {
	now := crud.NewTime(r.now)
	t.ID, t.CreatedAt, t.UpdatedAt, t.CreatedBy, t.UpdatedBy = rpc.NewID(), now, now, r.op.ID, r.op.ID
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
