package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/security"
)

// assigneeForm is a form document with user-id fields for form_field assignees: one text field
// and one checkbox group (a list of ids).
const assigneeForm = `{"version":2,"presentations":{"pc":{"children":[
 {"id":"F1","type":"number","key":"amount","label":"Amount"},
 {"id":"F2","type":"textfield","key":"approver","label":"Approver"},
 {"id":"F3","type":"checkbox-group","key":"approvers","label":"Approvers"}]}}}`

// flowID is the id of flow code.
func (e *eng) flowID(code string) string {
	e.t.Helper()
	var id string
	if err := e.srv.DB().NewSelect().Table("apv_flow").Column("id").Where("code = ?", code).Scan(context.Background(), &id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// scenarioAssignees: the assignee kinds and empty-assignee actions TestEngineRules and
// TestEngineDirectoryKinds leave out (form_field as a string and as a list, transfer_superior
// with a superior, dedupe across rules), and delegation (wire-approval §8): a chain of three,
// the delegation_max_depth cap (3 on this server), a two-person cycle, scope priority flow >
// category > global, the newest of one scope, time windows on the fake clock, inactive
// delegations, and the explicit-user paths (transfer, reassign) that are not delegated.
func scenarioAssignees(t *testing.T, e *eng) {
	ctx := context.Background()
	t.Run("kinds", func(t *testing.T) {
		e := e.sub(t)
		ff := e.flowForm("aff", assigneeForm, approvalNode("a", `,"assignees":[{"kind":"form_field","formField":"approver","sortOrder":0},`+
			`{"kind":"form_field","formField":"approvers","sortOrder":1},{"kind":"user","ids":["f2"],"sortOrder":2}]`), "s>a", "a>end")
		e.wantStatus(e.start(applicant, ff, `{"approver":"f1","approvers":["f2","f3"]}`), "running", "f1:pending", "f2:pending", "f3:pending")
		e.wantStatus(e.start(applicant, ff, `{}`), "running", "f2:pending")

		st := e.srv.Security().Store()
		boss, err := st.Create(ctx, "boss", "Boss", "long-enough-pass-1", []string{"admin"})
		if err != nil {
			t.Fatal(err)
		}
		emp, err := st.Create(ctx, "emp", "Emp", "long-enough-pass-2", []string{"admin"})
		if err != nil {
			t.Fatal(err)
		}
		if err := security.NewDirectory(e.srv.DB(), nil).SetSuperior(ctx, emp.ID, boss.ID); err != nil {
			t.Fatal(err)
		}
		sup := e.flow("asup", approvalNode("a", `,"assignees":[{"kind":"role","ids":["nobody"],"sortOrder":0}],"emptyAssigneeAction":"transfer_superior"`), "s>a", "a>end")
		e.wantStatus(e.start(tenantUser(emp.ID, "t1", "admin"), sup, `{}`), "running", boss.ID+":pending")
	})
	t.Run("delegation", func(t *testing.T) {
		e := e.sub(t)
		const on, off = "2030-06-01 00:00:00", "2030-07-01 00:00:00"
		cat2 := e.ok(alice, catR, "create", `{"tenantId":"t1","code":"c2","name":"C2","sortOrder":1,"isActive":true}`)["id"].(string)
		node := func(who ...string) string { return approvalNode("a", users(who...)) }
		fl := e.flow("dflow", node("p1", "c1", "k1", "y1", "w1", "i1"), "s>a", "a>end")
		sameCat := e.flow("dcat", node("p1"), "s>a", "a>end")
		other := e.sub(t)
		other.cat = cat2
		otherCat := other.flow("dother", node("p1"), "s>a", "a>end")

		// p1: global, category and flow scopes; the flow's wins, then the category's.
		e.delegation("p1", "pg", on, off, "")
		e.delegation("p1", "pc", on, off, `,"flowCategoryId":"`+e.cat+`"`)
		e.delegation("p1", "pf", on, off, `,"flowId":"`+e.flowID(fl)+`"`)
		// c1 → c2 → c3 → c4 → c5: three hops at most, so c4.
		for _, d := range [][2]string{{"c1", "c2"}, {"c2", "c3"}, {"c3", "c4"}, {"c4", "c5"}} {
			e.delegation(d[0], d[1], on, off, "")
		}
		// k1 ⇄ k2: the cycle breaks at k2. y1: two globals, the newest wins.
		e.delegation("k1", "k2", on, off, "")
		e.delegation("k2", "k1", on, off, "")
		e.delegation("y1", "yold", on, off, "")
		e.act()
		e.delegation("y1", "ynew", on, off, "")
		// w1: a window from an hour on, for an hour. i1: inactive; x1: expired.
		opens := e.srv.Clock.Now().UTC().Truncate(time.Second).Add(time.Hour)
		const layout = "2006-01-02 15:04:05"
		e.delegation("w1", "w2", opens.Format(layout), opens.Add(time.Hour).Format(layout), "")
		e.ok(root, delR, "create", `{"delegatorId":"i1","delegateeId":"i2","startsAt":"`+on+`","endsAt":"`+off+`","isActive":false}`)

		// before w1's window
		id := e.start(applicant, fl, `{}`)
		e.wantStatus(id, "running", "pf:pending<p1", "c4:pending<c1", "k2:pending<k1", "ynew:pending<y1", "w1:pending", "i1:pending")
		e.wantStatus(e.start(applicant, sameCat, `{}`), "running", "pc:pending<p1")
		e.wantStatus(e.start(applicant, otherCat, `{}`), "running", "pg:pending<p1")
		e.srv.Clock.Set(opens) // w1's window opens (inclusive)
		e.wantStatus(e.start(applicant, fl, `{}`), "running", "pf:pending<p1", "c4:pending<c1", "k2:pending<k1", "ynew:pending<y1", "w2:pending<w1", "i1:pending")
		e.srv.Clock.Set(opens.Add(time.Hour)) // and closes (exclusive)
		id2 := e.start(applicant, fl, `{}`)
		e.wantStatus(id2, "running", "pf:pending<p1", "c4:pending<c1", "k2:pending<k1", "ynew:pending<y1", "w1:pending", "i1:pending")

		// Transfer and reassign name their user: no delegation applies.
		e.act()
		e.must(e.decide(id2, "i1", "transfer", `,"transferToId":"p1"`))
		e.act()
		e.ok(alice, "approval/admin", "reassign_task", `{"taskId":"`+e.task(id2, "w1")+`","newAssigneeId":"c1"}`)
		e.wantStatus(id2, "running", "pf:pending<p1", "c4:pending<c1", "k2:pending<k1", "ynew:pending<y1", "w1:transferred", "i1:transferred",
			"p1:pending", "c1:pending")
		var delegator string
		if err := e.srv.DB().NewSelect().Table("apv_task").Column("delegator_name").Where("id = ?", e.task(id, "c4")).Scan(ctx, &delegator); err != nil || delegator != "c1" {
			t.Errorf("delegator name = %q, %v", delegator, err)
		}
	})
}

// scenarioAddRemove: the add/remove assignee variants of wire-approval §8 beyond
// TestEngineAssigneesUrgeAdmin — a transfer repoints the "after" child to the new task (people
// already live at the node skipped), a reassigned "before" helper still reactivates the
// suspended parent, removing the only "before" helper reactivates it too, a removal
// re-evaluates the pass rule, before/after on a sequential node (no parallel lane there);
// events once each.
func scenarioAddRemove(t *testing.T, e *eng) {
	par := e.flow("arpar", approvalNode("a", users("u1", "u2")), "s>a", "a>end")
	half := e.flow("arhalf", approvalNode("a", users("u1", "u2", "u3")+`,"passRule":"ratio","passRatio":"50"`), "s>a", "a>end")
	seq := e.flow("arseq", approvalNode("a", users("u1", "u2")+`,"approvalMethod":"sequential"`), "s>a", "a>end")
	add := func(e *eng, as, taskID, typ string, who ...string) {
		e.t.Helper()
		e.act()
		e.ok(user(as), instR, "add_assignee", `{"taskId":"`+taskID+`","addType":"`+typ+`","userIds":`+jsonList(who)+`}`)
	}
	t.Run("transfer repoints the after child", func(t *testing.T) {
		e := e.sub(t)
		id := e.start(applicant, par, `{}`)
		add(e, "u1", e.task(id, "u1"), "after", "x1", "u2")
		from := e.act()
		e.must(e.decide(id, "u1", "transfer", `,"transferToId":"u5"`))
		e.must(e.decide(id, "u5", "approve", ""))
		e.wantStatus(id, "running", "u1:transferred", "u2:pending", "x1:pending", "u5:approved")
		e.wantEventsSince(id, from, map[string]int{evTransferred: 1, evCreated: 2, evApproved: 1})
		e.must(e.decide(id, "x1", "approve", ""))
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "approved")
	})
	t.Run("a reassigned before helper still reactivates the parent", func(t *testing.T) {
		e := e.sub(t)
		id := e.start(applicant, par, `{}`)
		add(e, "u1", e.task(id, "u1"), "before", "b1")
		e.wantStatus(id, "running", "u1:waiting", "u2:pending", "b1:pending")
		e.refused(approval.ErrCodeTaskNotPending, alice, "approval/admin", "reassign_task", `{"taskId":"`+e.taskOf(id, "u1")+`","newAssigneeId":"u6"}`)
		e.act()
		e.ok(alice, "approval/admin", "reassign_task", `{"taskId":"`+e.task(id, "b1")+`","newAssigneeId":"b2"}`)
		from := e.act()
		e.must(e.decide(id, "b2", "approve", ""))
		e.wantStatus(id, "running", "u1:pending", "u2:pending", "b1:transferred", "b2:approved")
		e.wantEventsSince(id, from, map[string]int{evApproved: 1, evCreated: 1})
	})
	t.Run("removing the before helper reactivates the parent", func(t *testing.T) {
		e := e.sub(t)
		id := e.start(applicant, par, `{}`)
		add(e, "u1", e.task(id, "u1"), "before", "b1")
		from := e.act()
		e.ok(user("u2"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "b1")+`"}`)
		e.wantStatus(id, "running", "u1:pending", "u2:pending", "b1:removed")
		e.wantEventsSince(id, from, map[string]int{approval.EventTaskAssigneesRemoved: 1, evCreated: 1})
	})
	t.Run("a removal re-evaluates the node", func(t *testing.T) {
		e := e.sub(t)
		id := e.start(applicant, half, `{}`)
		e.must(e.decide(id, "u1", "approve", ""))
		from := e.act()
		e.ok(user("u2"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u3")+`"}`)
		e.wantStatus(id, "approved", "u1:approved", "u2:canceled", "u3:removed")
		e.wantEventsSince(id, from, map[string]int{approval.EventTaskAssigneesRemoved: 1, evCanceled: 1, evCompleted: 1})
	})
	t.Run("sequential node: before and after", func(t *testing.T) {
		e := e.sub(t)
		id := e.start(applicant, seq, `{}`)
		e.refused(approval.ErrCodeInvalidAddAssigneeType, user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","addType":"parallel","userIds":["z"]}`)
		from := e.act()
		add(e, "u1", e.task(id, "u1"), "after", "a1")
		e.wantEventsSince(id, from, map[string]int{approval.EventTaskAssigneesAdded: 1})
		e.must(e.decide(id, "u1", "approve", ""))
		e.wantStatus(id, "running", "u1:approved", "u2:waiting", "a1:pending")
		e.must(e.decide(id, "a1", "approve", ""))
		e.wantStatus(id, "running", "u1:approved", "u2:pending", "a1:approved")
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "approved")
	})
}

// jsonList is a JSON array of strings.
func jsonList(ss []string) string {
	out := "["
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += `"` + s + `"`
	}
	return out + "]"
}
