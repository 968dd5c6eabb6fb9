package approval

import (
	"testing"
	"time"

	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/crud"
)

// TestInstanceRules: withdraw and resubmit for every instance status (wire-approval §7), for
// the applicant and for someone else.
func TestInstanceRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status             string
		withdraw, resubmit error
	}{
		{InstanceRunning, nil, ErrResubmitNotAllowed},
		{InstanceReturned, nil, nil},
		{InstanceWithdrawn, ErrWithdrawNotAllowed, nil},
		{InstanceApproved, ErrWithdrawNotAllowed, ErrResubmitNotAllowed},
		{InstanceRejected, ErrWithdrawNotAllowed, ErrResubmitNotAllowed},
		{InstanceTerminated, ErrWithdrawNotAllowed, ErrResubmitNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			t.Parallel()
			inst := &Instance{ApplicantID: "app", Status: tt.status}
			if err := withdrawErr(inst, "app"); err != tt.withdraw {
				t.Errorf("withdrawErr = %v, want %v", err, tt.withdraw)
			}
			if err := resubmitErr(inst, "app"); err != tt.resubmit {
				t.Errorf("resubmitErr = %v, want %v", err, tt.resubmit)
			}
			if err := withdrawErr(inst, "u1"); err != ErrNotApplicant {
				t.Errorf("withdrawErr(other) = %v, want ErrNotApplicant", err)
			}
			if err := resubmitErr(inst, "u1"); err != ErrNotApplicant {
				t.Errorf("resubmitErr(other) = %v, want ErrNotApplicant", err)
			}
		})
	}
}

// TestTaskRules: the decision check, the handle alias, add and remove assignee (§8).
func TestTaskRules(t *testing.T) {
	t.Parallel()
	running := &Instance{Status: InstanceRunning}
	mine := ruleTask("t1", "u1", TaskPending)
	if err := decisionErr(running, mine, "u1"); err != nil {
		t.Errorf("decisionErr(own pending) = %v", err)
	}
	for _, tt := range []struct {
		inst *Instance
		task *Task
		user string
		want error
	}{
		{&Instance{Status: InstanceReturned}, mine, "u1", ErrInstanceCompleted},
		{running, &Task{AssigneeID: "u1", Status: TaskWaiting}, "u1", ErrTaskNotPending},
		{running, mine, "u2", ErrNotAssignee},
	} {
		if err := decisionErr(tt.inst, tt.task, tt.user); err != tt.want {
			t.Errorf("decisionErr(%s, %s, %s) = %v, want %v", tt.inst.Status, tt.task.Status, tt.user, err, tt.want)
		}
	}
	handle, approval := &Node{Kind: "handle"}, &Node{Kind: "approval"}
	if a, err := decisionAction(handle, ActionApprove); a != ActionHandle || err != nil {
		t.Errorf("approve on a handle node = %s, %v, want handle", a, err)
	}
	if _, err := decisionAction(approval, ActionHandle); err != ErrInvalidTaskTransition {
		t.Errorf("handle on an approval node: %v, want ErrInvalidTaskTransition", err)
	}
	n := &Node{IsAddAssigneeAllowed: true, AddAssigneeTypes: []design.AddAssigneeType{AddBefore}, IsRemoveAssigneeAllowed: true}
	if err := addAssigneeErr(mine, n, "u1", AddAfter); err != ErrInvalidAddAssigneeType {
		t.Errorf("addAssigneeErr(after) = %v, want ErrInvalidAddAssigneeType", err)
	}
	if err := addAssigneeErr(mine, &Node{AddAssigneeTypes: []design.AddAssigneeType{AddBefore}}, "u1", AddBefore); err != ErrAddAssigneeNotAllowed {
		t.Errorf("addAssigneeErr(not allowed) = %v, want ErrAddAssigneeNotAllowed", err)
	}
	peer := *ruleTask("t2", "u2", TaskWaiting)
	visit := []Task{*mine, peer, *ruleTask("t3", "u3", TaskApproved)}
	for _, tt := range []struct {
		target *Task
		user   string
		node   *Node
		want   error
	}{
		{&peer, "u1", n, nil},
		{&visit[2], "u1", n, ErrTaskNotPending},
		{&peer, "u3", n, ErrNotAssignee},
		{&peer, "u1", &Node{}, ErrRemoveAssigneeNotAllowed},
		{mine, "u1", n, ErrInvalidTaskTransition},
	} {
		if err := removeAssigneeErr(visit, tt.target, tt.node, tt.user); err != tt.want {
			t.Errorf("removeAssigneeErr(%s by %s) = %v, want %v", tt.target.ID, tt.user, err, tt.want)
		}
	}
	if err := removeAssigneeErr([]Task{*mine}, mine, n, "u1"); err != ErrLastAssigneeRemoval {
		t.Errorf("removeAssigneeErr(last) = %v, want ErrLastAssigneeRemoval", err)
	}
}

// TestUrgeable: a pending task is urgeable by a participant unless its own last urge of that
// task is within the node's cooldown (default 30 minutes).
func TestUrgeable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	g := &graph{nodes: map[string]*Node{"n": {}}}
	t1 := ruleTask("t1", "u1", TaskPending)
	t1.NodeID = "n"
	d := &detailData{inst: &Instance{Status: InstanceRunning, ApplicantID: "app"}, g: g, tasks: []Task{*t1},
		urges: []UrgeRecord{{TaskID: &t1.ID, UrgerID: "app", CreatedAt: crud.NewTime(now.Add(-29 * time.Minute))}}}
	if got := len(d.viewer("app", now).urgeable()); got != 0 {
		t.Errorf("urgeable within the cooldown = %d, want 0", got)
	}
	if got := len(d.viewer("app", now.Add(time.Minute)).urgeable()); got != 1 {
		t.Errorf("urgeable after the cooldown = %d, want 1", got)
	}
	if got := len(d.viewer("u1", now).urgeable()); got != 1 {
		t.Errorf("urgeable by another urger = %d, want 1", got)
	}
}

// ruleTask is a task row of the rule tests.
func ruleTask(id, assignee, status string) *Task {
	t := &Task{AssigneeID: assignee, Status: status}
	t.ID = id
	return t
}
