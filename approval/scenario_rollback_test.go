package approval_test

import (
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval"
)

// scenarioRollback plays the rollback rules of wire-approval §8 not covered by
// TestEngineTransferRollbackWithdraw and TestEngineRollbackTypes: each rollback type's accepted
// and refused targets on the visit trail (cc and condition nodes are never targets, nor the
// current node), isRollbackAllowed, previous after a re-entry, the trail starting afresh after a
// resubmit, keep with a target that has no snapshot, and the events of a rollback to a task
// node (the peers canceled, the target's tasks created).
func scenarioRollback(t *testing.T, e *eng) {
	// s → a → k (cc) → b → c; c's rollback type varies per flow.
	flow := func(code, cExtra string) (string, map[string]string) {
		c := e.flow(code, approvalNode("a", users("u1"))+`,{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"K","ccs":[{"kind":"user","ids":["r1"]}]}},`+
			approvalNode("b", users("u2"))+`,`+approvalNode("c", users("u3", "u4")+cExtra), "s>a", "a>k", "k>b", "b>c", "c>end")
		return c, e.nodeIDs(c)
	}
	type row struct {
		name    string
		cExtra  string
		target  string
		code    int
		tasks   []string
		events  map[string]int
		visited string
	}
	rows := []row{
		{name: "not allowed", cExtra: `,"isRollbackAllowed":false,"rollbackType":"any"`, target: "a", code: approval.ErrCodeRollbackNotAllowed},
		{name: "type none", cExtra: `,"rollbackType":"none"`, target: "a", code: approval.ErrCodeRollbackNotAllowed},
		{name: "current node", cExtra: `,"rollbackType":"any"`, target: "c", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "a cc node", cExtra: `,"rollbackType":"any"`, target: "k", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "the end", cExtra: `,"rollbackType":"any"`, target: "end", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "start type refuses a task node", cExtra: `,"rollbackType":"start"`, target: "b", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "previous refuses an earlier node", cExtra: `,"rollbackType":"previous"`, target: "a", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "specified refuses an unlisted node", cExtra: `,"rollbackType":"specified","rollbackTargetKeys":["a"]`, target: "b", code: approval.ErrCodeInvalidRollbackTarget},
		{name: "any to a", cExtra: `,"rollbackType":"any"`, target: "a",
			tasks:   []string{"u1:approved", "u2:approved", "u3:rolled_back", "u4:canceled", "u1:pending"},
			events:  map[string]int{approval.EventInstanceRolledBack: 1, evCanceled: 1, evCreated: 1, approval.EventCCNotified: 0},
			visited: "passed,passed,passed,passed,returned,active"},
		{name: "previous to b", cExtra: `,"rollbackType":"previous"`, target: "b",
			tasks:   []string{"u1:approved", "u2:approved", "u3:rolled_back", "u4:canceled", "u2:pending"},
			events:  map[string]int{approval.EventInstanceRolledBack: 1, evCanceled: 1, evCreated: 1},
			visited: "passed,passed,passed,passed,returned,active"},
		{name: "start with keep leaves the form", cExtra: `,"rollbackType":"start","rollbackDataStrategy":"keep"`, target: "s",
			tasks:   []string{"u1:approved", "u2:approved", "u3:rolled_back", "u4:canceled"},
			events:  map[string]int{approval.EventInstanceReturned: 1, evCanceled: 1},
			visited: "passed,passed,passed,passed,returned"},
	}
	for i, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			code, nodes := flow("rb"+string(rune('a'+i)), tt.cExtra)
			id := e.start(applicant, code, `{"reason":"first"}`)
			e.act()
			e.must(e.decide(id, "u1", "approve", ""))
			e.act()
			e.must(e.decide(id, "u2", "approve", ""))
			e.act()
			from := e.act()
			r := e.call(user("u3"), instR, "process_task", taskParams(e.task(id, "u3"), "rollback", `,"targetNodeId":"`+nodes[tt.target]+`","opinion":"back"`))
			if r.Code != tt.code {
				t.Fatalf("code = %d (%s), want %d", r.Code, r.Message, tt.code)
			}
			if tt.code != 0 {
				e.wantStatus(id, "running", "u1:approved", "u2:approved", "u3:pending", "u4:pending")
				return
			}
			e.wantStatus(id, map[bool]string{true: "returned", false: "running"}[tt.target == "s"], tt.tasks...)
			e.wantEventsSince(id, from, tt.events)
			if got := visits(e, id); got != tt.visited {
				t.Errorf("visits = %s, want %s", got, tt.visited)
			}
			if form := e.column(id, "form_data"); !strings.Contains(form, `"first"`) {
				t.Errorf("form data after keep = %s", form)
			}
		})
	}
	t.Run("a node downstream is never a target", func(t *testing.T) {
		e := e.sub(t)
		code := e.flow("rbdown", approvalNode("a", users("u1")+`,"rollbackType":"any"`)+`,`+approvalNode("b", users("u2"))+`,`+
			approvalNode("c", users("u3")+`,"rollbackType":"any"`), "s>a", "a>b", "b>c", "c>end")
		nodes := e.nodeIDs(code)
		id := toThird(e, code)
		e.must(e.decide(id, "u3", "rollback", `,"targetNodeId":"`+nodes["a"]+`"`))
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u1"), instR, "process_task", taskParams(e.task(id, "u1"), "rollback", `,"targetNodeId":"`+nodes["b"]+`"`))
		e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+nodes["s"]+`"`))
		e.wantStatus(id, "returned")
	})
	t.Run("previous after a re-entry, and a fresh trail after resubmit", func(t *testing.T) {
		e := e.sub(t)
		code, nodes := flow("rbprev", `,"rollbackType":"previous"`)
		id := toThird(e, code)
		e.must(e.decide(id, "u3", "rollback", `,"targetNodeId":"`+nodes["b"]+`"`))
		// b's own rollback (previous by default) goes to a, the node before b's passed visit.
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u2"), instR, "process_task", taskParams(e.task(id, "u2"), "rollback", `,"targetNodeId":"`+nodes["c"]+`"`))
		e.act()
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+nodes["a"]+`"`))
		e.act()
		e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+nodes["s"]+`"`))
		e.wantStatus(id, "returned")
		e.act()
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`"}`)
		// After the resubmit a's previous is the new start visit only.
		e.must(e.decide(id, "u1", "approve", ""))
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u2"), instR, "process_task", taskParams(e.task(id, "u2"), "rollback", `,"targetNodeId":"`+nodes["s"]+`"`))
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+nodes["a"]+`"`))
		e.wantStatus(id, "running")
		e.task(id, "u1")
	})
}

// toThird starts flow code and approves its first two nodes (u1, then u2): the instance waits
// at the third.
func toThird(e *eng, code string) string {
	e.t.Helper()
	id := e.start(applicant, code, `{}`)
	e.must(e.decide(id, "u1", "approve", ""))
	e.must(e.decide(id, "u2", "approve", ""))
	e.act()
	return id
}

// visits lists instance id's visit statuses in sequence order, comma-separated.
func visits(e *eng, id string) string {
	e.t.Helper()
	var vs []string
	if err := e.srv.DB().NewSelect().Table("apv_node_visit").Column("status").Where("instance_id = ?", id).Order("sequence").Scan(e.t.Context(), &vs); err != nil {
		e.t.Fatal(err)
	}
	return strings.Join(vs, ",")
}
