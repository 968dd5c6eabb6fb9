package approval

import (
	"slices"
	"sort"
	"time"

	"github.com/svc-framework/svc/approval/design"
)

// The predicates of this file are the checks the engine's commands apply before they change
// anything. The commands call them, and the instance detail (availableActions, myTask) asks
// the same questions, so what the detail offers is what the commands accept (issue #24: the
// invariant TestDetailInvariant holds).

// decisionErr is process_task's common check (wire-approval §8 Decisions): the instance runs,
// the task is pending and belongs to user.
func decisionErr(inst *Instance, t *Task, user string) error {
	switch {
	case inst.Status != InstanceRunning:
		return ErrInstanceCompleted
	case t.Status != TaskPending:
		return ErrTaskNotPending
	case t.AssigneeID != user:
		return ErrNotAssignee
	}
	return nil
}

// decisionAction maps a requested decision onto node n: approve on a handle node handles;
// handle on any other node is refused (40204).
func decisionAction(n *Node, action string) (string, error) {
	switch {
	case action == ActionApprove && n.Kind == design.NodeHandle:
		return ActionHandle, nil
	case action == ActionHandle && n.Kind != design.NodeHandle:
		return "", ErrInvalidTaskTransition
	}
	return action, nil
}

// transferErr: the node must allow transfer (40207).
func transferErr(n *Node) error {
	if !n.IsTransferAllowed {
		return ErrTransferNotAllowed
	}
	return nil
}

// rollbackErr: the node must allow rollback with a type other than none (40205).
func rollbackErr(n *Node) error {
	if !n.IsRollbackAllowed || n.RollbackType == design.RollbackNone {
		return ErrRollbackNotAllowed
	}
	return nil
}

// rollbackTrail are the nodes node n's visit of sequence current may roll back to (§8
// rollback): the start, approval and handle nodes on the path that led to that visit, newest
// first, filtered by n's rollback type. visits are the instance's visits in any order.
func rollbackTrail(g *graph, n *Node, visits []Visit, current int) []*Node {
	trail := pathTo(g, n, visits, current)
	switch n.RollbackType {
	case design.RollbackPrevious:
		if len(trail) > 0 {
			return trail[:1]
		}
	case design.RollbackStart:
		return []*Node{g.start}
	case design.RollbackAny:
		return trail
	case design.RollbackSpecified:
		var out []*Node
		for _, vn := range trail {
			if slices.Contains(n.RollbackTargetKeys, vn.Key) {
				out = append(out, vn)
			}
		}
		return out
	}
	return nil
}

// pathTo is the path that led to n's visit of sequence current, newest first, start, approval
// and handle nodes only: the passed visits before it, where every re-entry of a node (a
// rollback's target, the start after a resubmit, n itself) drops that node's earlier visit and
// all after it — what a rollback undid is not on the path, so a node downstream of n is never
// a target.
func pathTo(g *graph, n *Node, visits []Visit, current int) []*Node {
	before := make([]Visit, 0, len(visits))
	for _, v := range visits {
		if v.Sequence < current {
			before = append(before, v)
		}
	}
	sort.Slice(before, func(a, b int) bool { return before[a].Sequence < before[b].Sequence })
	var path []*Node
	cut := func(id string) {
		if i := slices.IndexFunc(path, func(x *Node) bool { return x.ID == id }); i >= 0 {
			path = path[:i]
		}
	}
	for _, v := range before {
		if vn := g.nodes[v.NodeID]; vn != nil {
			cut(vn.ID)
			if v.Status == VisitPassed {
				path = append(path, vn)
			}
		}
	}
	cut(n.ID)
	var trail []*Node
	for i := len(path) - 1; i >= 0; i-- {
		switch design.NodeKind(path[i].Kind) {
		case design.NodeStart, design.NodeApproval, design.NodeHandle:
			trail = append(trail, path[i])
		}
	}
	return trail
}

// addAssigneeErr: user's own pending task, a node allowing additions (40206) of type typ
// (40211).
func addAssigneeErr(t *Task, n *Node, user string, typ design.AddAssigneeType) error {
	switch {
	case t.AssigneeID != user:
		return ErrNotAssignee
	case t.Status != TaskPending:
		return ErrTaskNotPending
	case !n.IsAddAssigneeAllowed:
		return ErrAddAssigneeNotAllowed
	case !slices.Contains(n.AddAssigneeTypes, typ):
		return ErrInvalidAddAssigneeType
	}
	return nil
}

// live reports whether a task status is live (pending or waiting).
func live(status string) bool { return status == TaskPending || status == TaskWaiting }

// removeAssigneeErr: user removes task t of its visit, whose tasks are visitTasks (§8
// remove_assignee): t live, user holds a pending task there, the node allows removal (40210),
// t is not the last live one (40214) and not user's own (40204).
func removeAssigneeErr(visitTasks []Task, t *Task, n *Node, user string) error {
	if !live(t.Status) {
		return ErrTaskNotPending
	}
	mine := slices.ContainsFunc(visitTasks, func(x Task) bool { return x.AssigneeID == user && x.Status == TaskPending })
	others := 0
	for _, x := range visitTasks {
		if x.ID != t.ID && live(x.Status) {
			others++
		}
	}
	switch {
	case !mine:
		return ErrNotAssignee
	case !n.IsRemoveAssigneeAllowed:
		return ErrRemoveAssigneeNotAllowed
	case others == 0:
		return ErrLastAssigneeRemoval
	case t.AssigneeID == user:
		return ErrInvalidTaskTransition
	}
	return nil
}

// withdrawErr: only the applicant (40212), only from a state that may become withdrawn (40104).
func withdrawErr(inst *Instance, user string) error {
	switch {
	case inst.ApplicantID != user:
		return ErrNotApplicant
	case !canTransition(inst.Status, InstanceWithdrawn):
		return ErrWithdrawNotAllowed
	}
	return nil
}

// resubmitErr: only the applicant (40212), only from returned or withdrawn (40105).
func resubmitErr(inst *Instance, user string) error {
	switch {
	case inst.ApplicantID != user:
		return ErrNotApplicant
	case inst.Status != InstanceReturned && inst.Status != InstanceWithdrawn:
		return ErrResubmitNotAllowed
	}
	return nil
}

// participantErr: the applicant or someone who has or had a task on the instance (hadTask),
// else 40701 (add_cc, urge_task).
func participantErr(inst *Instance, user string, hadTask bool) error {
	if inst.ApplicantID == user || hadTask {
		return nil
	}
	return ErrAccessDenied
}

// manualCCErr: add_cc on a running instance (40102) whose current node allows manual CC
// (40209); the participant check comes first.
func manualCCErr(inst *Instance, g *graph, participant error) error {
	if inst.Status != InstanceRunning {
		return ErrInstanceCompleted
	}
	if participant != nil {
		return participant
	}
	if n := g.nodes[deref(inst.CurrentNodeID)]; n == nil || !n.IsManualCCAllowed {
		return ErrManualCcNotAllowed
	}
	return nil
}

// urgeCooldown is node n's urge cooldown (≤ 0: DefaultUrgeCooldownMinutes).
func urgeCooldown(n *Node) int {
	if n.UrgeCooldownMinutes <= 0 {
		return DefaultUrgeCooldownMinutes
	}
	return n.UrgeCooldownMinutes
}

// urgeSince is the instant after which an earlier urge of the same task by the same urger
// still blocks a new one at node n.
func urgeSince(n *Node, now time.Time) time.Time {
	return now.Add(-time.Duration(urgeCooldown(n)) * time.Minute)
}
