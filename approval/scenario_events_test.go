package approval_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/svctest"
)

// lastEvent is the most recent recorded event of typ for instance id (nil when none).
func (r *evRecorder) lastEvent(typ, id string) *approval.InstanceEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.types) - 1; i >= 0; i-- {
		if r.types[i] == typ && r.events[i].InstanceID == id {
			ev := r.events[i]
			return &ev
		}
	}
	return nil
}

// line renders values separated by spaces.
func line(vs ...any) string { return strings.TrimSpace(fmt.Sprintln(vs...)) }

// who renders a person reference ("" for nil).
func who(u *approval.UserInfo) string {
	if u == nil {
		return ""
	}
	return u.ID
}

// scenarioEventPayloads checks the fields of wire-approval §10 on the events of one walk
// through every kind of transition: the base (instance, flow, applicant, occurredTime from the
// clock), the task events' task and node, and each event's own fields.
func scenarioEventPayloads(t *testing.T, e *eng) {
	code := e.flow("evp", approvalNode("a", users("u1", "u2")+`,"timeoutHours":2,"ccs":[{"kind":"user","ids":["c1"],"timing":"on_approve"}]`)+`,`+
		approvalNode("b", users("u3")+`,"rollbackType":"any"`), "s>a", "a>b", "b>end")
	nodes := e.nodeIDs(code)
	started := e.act()
	id := e.start(applicant, code, `{}`)
	e.act()
	e.ok(user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","addType":"parallel","userIds":["x1"]}`)
	e.ok(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u2")+`","message":"hurry"}`)
	e.must(e.decide(id, "u2", "transfer", `,"transferToId":"u5","opinion":"away"`))
	e.ok(alice, "approval/admin", "reassign_task", `{"taskId":"`+e.task(id, "x1")+`","newAssigneeId":"x2","reason":"leave"}`)
	for _, u := range []string{"u1", "x2", "u5"} {
		e.must(e.decide(id, u, "approve", `,"opinion":"ok `+u+`"`))
	}
	e.must(e.decide(id, "u3", "rollback", `,"targetNodeId":"`+nodes["a"]+`","opinion":"redo"`))
	e.ok(applicant, instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["m1"]}`)
	e.ok(applicant, instR, "withdraw", `{"instanceId":"`+id+`","reason":"oops"}`)
	e.ok(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`","reason":"stop"}`)
	e.wantEvents(id, approval.EventInstanceCompleted, 1)
	deadline := func(ev *approval.InstanceEvent) string {
		if ev.Deadline == nil {
			return "none"
		}
		return ev.Deadline.Sub(ev.OccurredTime).String()
	}
	checks := []struct {
		typ  string
		got  func(ev *approval.InstanceEvent) string
		want string
	}{
		{approval.EventInstanceCreated, func(ev *approval.InstanceEvent) string {
			return line(ev.FlowCode, ev.FlowID == e.flowID(code), ev.TenantID, ev.Applicant.ID, ev.Title, ev.OccurredTime.Equal(started.Add(0)))
		}, "evp true t1 app app: Flow evp true"},
		{evCreated, func(ev *approval.InstanceEvent) string {
			return line(who(ev.Assignee), ev.NodeID == nodes["a"], ev.NodeName, ev.TaskID != "", deadline(ev))
		}, "u2 true A true 2h0m0s"},
		{approval.EventTaskAssigneesAdded, func(ev *approval.InstanceEvent) string {
			return line(ev.AddType, len(ev.Assignees), ev.Assignees[0].ID, ev.NodeName)
		}, "parallel 1 x1 A"},
		{approval.EventTaskUrged, func(ev *approval.InstanceEvent) string {
			return line(who(ev.Urger), who(ev.Target), ev.Message)
		}, "app u2 hurry"},
		{evTransferred, func(ev *approval.InstanceEvent) string { return line(who(ev.From), who(ev.To), ev.Reason) }, "u2 u5 away"},
		{approval.EventTaskReassigned, func(ev *approval.InstanceEvent) string { return line(who(ev.From), who(ev.To), ev.Reason) }, "x1 x2 leave"},
		{evApproved, func(ev *approval.InstanceEvent) string { return line(who(ev.Operator), ev.Opinion, who(ev.Assignee)) }, "u5 ok u5 u5"},
		{approval.EventInstanceRolledBack, func(ev *approval.InstanceEvent) string {
			return line(ev.FromNodeID == nodes["b"], ev.FromNodeName, ev.ToNodeID == nodes["a"], ev.ToNodeName, who(ev.Operator), ev.Opinion)
		}, "true B true A u3 redo"},
		{approval.EventCCNotified, func(ev *approval.InstanceEvent) string {
			return line(len(ev.Recipients), ev.Recipients[0].ID, *ev.IsManual, ev.NodeName)
		}, "1 m1 true A"},
		{approval.EventInstanceWithdrawn, func(ev *approval.InstanceEvent) string { return line(who(ev.Operator), ev.Reason) }, "app oops"},
		{evCanceled, func(ev *approval.InstanceEvent) string { return line(who(ev.Assignee), ev.Reason) }, "u2 withdrawn"},
		{evCompleted, func(ev *approval.InstanceEvent) string {
			return line(ev.FinalStatus, ev.Reason, ev.FinishedAt != nil && !ev.FinishedAt.IsZero())
		}, "terminated stop true"},
	}
	// Delivery after commit runs per subscription, so an earlier command's event may trail a
	// later one's: check until every expectation holds or the deadline passes.
	mismatches := func() []string {
		var out []string
		for _, c := range checks {
			ev := e.rec.lastEvent(c.typ, id)
			if ev == nil {
				out = append(out, c.typ+": no event")
			} else if got := c.got(ev); got != c.want {
				out = append(out, fmt.Sprintf("%s: %s, want %s", c.typ, got, c.want))
			}
		}
		if n := e.rec.since(id, time.Time{})[approval.EventCCNotified]; n != 2 {
			out = append(out, fmt.Sprintf("cc.notified = %d, want 2 (node a's on_approve copy, then add_cc)", n))
		}
		return out
	}
	var got []string
	svctest.Eventually(t, 10*time.Second, func() bool { got = mismatches(); return len(got) == 0 },
		"the approval events match")
	for _, m := range got {
		t.Error(m)
	}
}
