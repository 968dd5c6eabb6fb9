package approval_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// invFlow is the flow of the invariant test: start → A (u1, u2 in parallel, all; transfer,
// add before/parallel, remove, rollback to any earlier node, manual CC) → B (u3; rollback to the
// previous node only; opinion required; nothing else) → H (handle by u10; transfer) → end.
func invFlow(e *eng) string {
	return e.flow("inv", approvalNode("a", users("u1", "u2")+`,"isTransferAllowed":true,"isAddAssigneeAllowed":true,"addAssigneeTypes":["before","parallel"],`+
		`"isRemoveAssigneeAllowed":true,"isRollbackAllowed":true,"rollbackType":"any","isManualCcAllowed":true`)+
		`,`+approvalNode("b", users("u3")+`,"isRollbackAllowed":true,"rollbackType":"previous","isOpinionRequired":true,"isTransferAllowed":false`)+
		`,{"id":"h","kind":"handle","position":{"x":0,"y":0},"data":{"name":"H"`+users("u10")+`,"isTransferAllowed":true}}`,
		"s>a", "a>b", "b>h", "h>end")
}

// invState takes a fresh instance of invFlow to one state; viewers are who looks at it.
type invState struct {
	name    string
	story   func(e *eng, id string)
	viewers []string
}

func invStates() []invState {
	approve := func(who ...string) func(e *eng, id string) {
		return func(e *eng, id string) {
			for _, u := range who {
				e.must(e.decide(id, u, "approve", `,"opinion":"x"`))
			}
		}
	}
	return []invState{
		{"fresh", approve(), []string{"app", "u1", "u2"}},
		{"one approved", approve("u1"), []string{"app", "u1", "u2"}},
		{"added before", func(e *eng, id string) {
			e.must(e.call(user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","userIds":["u5"],"addType":"before"}`))
		}, []string{"app", "u1", "u2", "u5"}},
		{"transferred", func(e *eng, id string) { e.must(e.decide(id, "u1", "transfer", `,"transferToId":"u4"`)) }, []string{"app", "u1", "u4"}},
		{"at B", approve("u1", "u2"), []string{"app", "u1", "u3"}},
		{"at H", approve("u1", "u2", "u3"), []string{"app", "u3", "u10"}},
		{"rolled back to A", func(e *eng, id string) {
			approve("u1", "u2")(e, id)
			e.must(e.decide(id, "u3", "rollback", `,"opinion":"x","targetNodeId":"`+e.versionNode(id, "a")+`"`))
		}, []string{"app", "u1", "u3"}},
		{"urged", func(e *eng, id string) {
			e.must(e.call(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u1")+`"}`))
		}, []string{"app", "u1"}},
		{"cc", func(e *eng, id string) {
			e.must(e.call(user("u1"), instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["u7"]}`))
		}, []string{"u7"}},
		{"returned", func(e *eng, id string) {
			e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+e.versionNode(id, "s")+`"`))
		}, []string{"app", "u1", "u2"}},
		{"withdrawn", func(e *eng, id string) { e.must(e.call(applicant, instR, "withdraw", `{"instanceId":"`+id+`"}`)) }, []string{"app", "u1"}},
		{"approved", approve("u1", "u2", "u3", "u10"), []string{"app", "u10"}},
		{"rejected", func(e *eng, id string) { e.must(e.decide(id, "u2", "reject", "")) }, []string{"app", "u1"}},
		{"terminated", func(e *eng, id string) {
			e.must(e.call(alice, resAdmin, "terminate_instance", `{"instanceId":"`+id+`"}`))
		}, []string{"app", "u2"}},
	}
}

// viewerDetail is what the invariant reads of my.get_instance_detail.
type viewerDetail struct {
	AvailableActions []string `json:"availableActions"`
	MyTask           *struct {
		TaskID             string   `json:"taskId"`
		AddAssigneeTypes   []string `json:"addAssigneeTypes"`
		RollbackTargets    []struct{ NodeID string }
		RemovableAssignees []struct{ TaskID string }
	} `json:"myTask"`
}

func (d viewerDetail) has(action string) bool { return slices.Contains(d.AvailableActions, action) }

// detailAttempt is one command a viewer could send, addressed by task position and node key
// so it can be replayed on an identical copy of the instance.
type detailAttempt struct {
	name   string
	listed bool
	send   func(id string) int // the answer's code
}

// TestDetailInvariant is issue #24's acceptance invariant: for instances in many states and
// several viewers, every action my.get_instance_detail lists (each rollback target, add type
// and removable assignee) is accepted by its command — run on a fresh identical copy of the
// instance — and every other is refused (refusals change nothing, so they run on the instance
// itself). An urge is listed when some pending task accepts one. approve on a handle node is
// the alias of handle the engine accepts (docs/approval.md, Reference).
func TestDetailInvariant(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		clock := svctest.NewClock(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
		e := newEng(t, kind, svctest.WithClock(clock), svctest.WithConfig(func(c *config.Config) { c.API.RateLimit.Max = 1 << 30 }))
		code := invFlow(e)
		for _, st := range invStates() {
			fresh := func() string {
				clock.Advance(61 * time.Second) // urge_task allows 10 calls a minute
				id := e.start(applicant, code, goldenForm)
				st.story(e, id)
				return id
			}
			id := fresh()
			for _, v := range st.viewers {
				r := e.call(user(v), resMy, "get_instance_detail", `{"instanceId":"`+id+`"}`)
				if r.Code != 0 {
					t.Fatalf("%s: detail as %s: code %d %s", st.name, v, r.Code, r.Message)
				}
				var d viewerDetail
				if err := json.Unmarshal(r.Data, &d); err != nil {
					t.Fatal(err)
				}
				for _, a := range e.detailAttempts(id, v, d) {
					if !a.listed {
						if c := a.send(id); c == 0 {
							t.Errorf("%s as %s: %s is not listed (%v) but was accepted", st.name, v, a.name, d.AvailableActions)
						}
						continue
					}
					if c := a.send(fresh()); c != 0 {
						t.Errorf("%s as %s: %s is listed (%v) but was refused with %d", st.name, v, a.name, d.AvailableActions, c)
					}
				}
				e.checkDetailUrge(st.name, v, d, id, fresh)
			}
		}
	})
}

// detailAttempts are the commands viewer v could send on instance id (urges: checkDetailUrge),
// with whether the detail d lists them.
func (e *eng) detailAttempts(id, v string, d viewerDetail) []detailAttempt {
	tasks := e.taskList(id)
	target := slices.IndexFunc(tasks, func(t approval.Task) bool { return d.MyTask != nil && t.ID == d.MyTask.TaskID })
	for i := range tasks {
		if target < 0 && tasks[i].AssigneeID == v {
			target = i // the viewer's own task, else the first pending one
		}
	}
	if target < 0 {
		target = max(slices.IndexFunc(tasks, func(t approval.Task) bool { return t.Status == approval.TaskPending }), 0)
	}
	p := user(v)
	task := func(id string, i int) string { return e.taskList(id)[i].ID }
	process := func(action, extra string) func(string) int {
		return func(id string) int {
			return e.call(p, instR, "process_task", `{"taskId":"`+task(id, target)+`","action":"`+action+`","opinion":"x"`+extra+`}`).Code
		}
	}
	var out []detailAttempt
	for _, a := range []string{"approve", "handle", "reject"} {
		out = append(out, detailAttempt{a, d.has(a) || (a == "approve" && d.has("handle")), process(a, "")})
	}
	out = append(out, detailAttempt{"transfer", d.has("transfer"), process("transfer", `,"transferToId":"zz"`)})
	if d.has("rollback") && len(d.MyTask.RollbackTargets) == 0 {
		e.t.Errorf("%s lists rollback without targets", v)
	}
	for _, key := range []string{"s", "a", "b", "h", "end"} {
		node := e.versionNode(id, key)
		ok := d.has("rollback") && slices.ContainsFunc(d.MyTask.RollbackTargets, func(x struct{ NodeID string }) bool { return x.NodeID == node })
		out = append(out, detailAttempt{"rollback to " + key, ok, func(id string) int {
			return process("rollback", `,"targetNodeId":"`+e.versionNode(id, key)+`"`)(id)
		}})
	}
	for _, typ := range []string{"before", "after", "parallel"} {
		ok := d.has("add_assignee") && slices.Contains(d.MyTask.AddAssigneeTypes, typ)
		out = append(out, detailAttempt{"add_assignee " + typ, ok, func(id string) int {
			return e.call(p, instR, "add_assignee", `{"taskId":"`+task(id, target)+`","userIds":["zz"],"addType":"`+typ+`"}`).Code
		}})
	}
	for i := range tasks {
		ok := d.has("remove_assignee") && slices.ContainsFunc(d.MyTask.RemovableAssignees, func(x struct{ TaskID string }) bool { return x.TaskID == tasks[i].ID })
		out = append(out, detailAttempt{"remove_assignee " + tasks[i].AssigneeID, ok, func(id string) int {
			return e.call(p, instR, "remove_assignee", `{"taskId":"`+task(id, i)+`"}`).Code
		}})
	}
	instance := func(action, params string) func(string) int {
		return func(id string) int { return e.call(p, instR, action, `{"instanceId":"`+id+`"`+params+`}`).Code }
	}
	return append(out, detailAttempt{"withdraw", d.has("withdraw"), instance("withdraw", "")},
		detailAttempt{"resubmit", d.has("resubmit"), instance("resubmit", `,"formData":{}`)},
		detailAttempt{"add_cc", d.has("add_cc"), instance("add_cc", `,"ccUserIds":["zz"]`)})
}

// checkDetailUrge: urge is listed exactly when urge_task accepts the viewer's urge of some pending
// task (each tried on a fresh copy).
func (e *eng) checkDetailUrge(state, v string, d viewerDetail, id string, fresh func() string) {
	tasks := e.taskList(id)
	accepted := false
	for i := range tasks {
		if tasks[i].Status != approval.TaskPending || accepted {
			continue
		}
		copyID := fresh()
		accepted = e.call(user(v), instR, "urge_task", `{"taskId":"`+e.taskList(copyID)[i].ID+`"}`).Code == 0
	}
	if accepted != d.has("urge") {
		e.t.Errorf("%s as %s: urge listed = %v, accepted = %v", state, v, d.has("urge"), accepted)
	}
}

// taskList are the instance's tasks in creation order (the same positions on identical copies).
func (e *eng) taskList(id string) []approval.Task {
	e.t.Helper()
	var rows []approval.Task
	if err := e.srv.DB().NewSelect().Model(&rows).Where("instance_id = ?", id).Order("created_at", "sort_order", "id").
		Scan(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return rows
}
