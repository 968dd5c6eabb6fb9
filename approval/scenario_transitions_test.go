package approval_test

import (
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// instanceActs are the commands that move an instance (wire-approval §6.4, §6.6), each sent as
// the party allowed to send it: the assignee u1 (approve, reject, rollback to start), the
// applicant (withdraw, resubmit, add_cc, urge_task) and an administrator (terminate_instance).
var instanceActs = map[string]func(e *eng, id string, nodes map[string]string) svctest.Response{
	"approve": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(user("u1"), instR, "process_task", taskParams(e.taskOf(id, "u1"), "approve", ""))
	},
	"reject": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(user("u1"), instR, "process_task", taskParams(e.taskOf(id, "u1"), "reject", ""))
	},
	"rollback": func(e *eng, id string, nodes map[string]string) svctest.Response {
		return e.call(user("u1"), instR, "process_task", taskParams(e.taskOf(id, "u1"), "rollback", `,"targetNodeId":"`+nodes["s"]+`"`))
	},
	"withdraw": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(applicant, instR, "withdraw", `{"instanceId":"`+id+`","reason":"r"}`)
	},
	"resubmit": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"reason":"again"}}`)
	},
	"terminate": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`","reason":"stop"}`)
	},
	"add_cc": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(applicant, instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["k1"]}`)
	},
	"urge": func(e *eng, id string, _ map[string]string) svctest.Response {
		return e.call(applicant, instR, "urge_task", `{"taskId":"`+e.taskOf(id, "u1")+`"}`)
	},
}

// Short names of the event types in the expectation tables.
const (
	evCreated     = approval.EventTaskCreated
	evApproved    = approval.EventTaskApproved
	evHandled     = approval.EventTaskHandled
	evRejected    = approval.EventTaskRejected
	evCanceled    = approval.EventTaskCanceled
	evTransferred = approval.EventTaskTransferred
	evCompleted   = approval.EventInstanceCompleted
)

// scenarioInstanceTransitions plays the instance state machine of wire-approval §7 as a
// matrix: every status (reached through /api) × every command that moves an instance. Allowed
// rows check the new status, finished_at (set when the instance rests, cleared by resubmit)
// and the exact events of the transition; refused rows check the code and that nothing moved.
func scenarioInstanceTransitions(t *testing.T, e *eng) {
	code := e.flow("it", approvalNode("a", users("u1")+`,"rollbackType":"start"`), "s>a", "a>end")
	nodes := e.nodeIDs(code)
	// reach brings a new instance to a status through the commands of the state table.
	reach := map[string][]string{
		"running": nil, "returned": {"rollback"}, "withdrawn": {"withdraw"},
		"approved": {"approve"}, "rejected": {"reject"}, "terminated": {"terminate"},
	}
	type row struct {
		from, act string
		code      int
		to        string
		events    map[string]int
	}
	refusedFinal := func(from string) []row {
		return []row{
			{from, "approve", approval.ErrCodeInstanceCompleted, from, nil},
			{from, "reject", approval.ErrCodeInstanceCompleted, from, nil},
			{from, "rollback", approval.ErrCodeInstanceCompleted, from, nil},
			{from, "withdraw", approval.ErrCodeWithdrawNotAllowed, from, nil},
			{from, "resubmit", approval.ErrCodeResubmitNotAllowed, from, nil},
			{from, "terminate", approval.ErrCodeTerminateNotAllowed, from, nil},
			{from, "add_cc", approval.ErrCodeInstanceCompleted, from, nil},
			{from, "urge", approval.ErrCodeInstanceCompleted, from, nil},
		}
	}
	rows := []row{
		{"running", "approve", 0, "approved", map[string]int{evApproved: 1, evCompleted: 1}},
		{"running", "reject", 0, "rejected", map[string]int{evRejected: 1, evCompleted: 1}},
		{"running", "rollback", 0, "returned", map[string]int{approval.EventInstanceReturned: 1}},
		{"running", "withdraw", 0, "withdrawn", map[string]int{approval.EventInstanceWithdrawn: 1, evCanceled: 1}},
		{"running", "resubmit", approval.ErrCodeResubmitNotAllowed, "running", nil},
		{"running", "terminate", 0, "terminated", map[string]int{evCompleted: 1, evCanceled: 1}},
		{"running", "add_cc", 0, "running", map[string]int{approval.EventCCNotified: 1}},
		{"running", "urge", 0, "running", map[string]int{approval.EventTaskUrged: 1}},
		{"returned", "approve", approval.ErrCodeInstanceCompleted, "returned", nil},
		{"returned", "reject", approval.ErrCodeInstanceCompleted, "returned", nil},
		{"returned", "rollback", approval.ErrCodeInstanceCompleted, "returned", nil},
		{"returned", "withdraw", 0, "withdrawn", map[string]int{approval.EventInstanceWithdrawn: 1}},
		{"returned", "resubmit", 0, "running", map[string]int{approval.EventInstanceResubmitted: 1, evCreated: 1}},
		{"returned", "terminate", 0, "terminated", map[string]int{evCompleted: 1}},
		{"returned", "add_cc", approval.ErrCodeInstanceCompleted, "returned", nil},
		{"returned", "urge", approval.ErrCodeInstanceCompleted, "returned", nil},
		{"withdrawn", "approve", approval.ErrCodeInstanceCompleted, "withdrawn", nil},
		{"withdrawn", "reject", approval.ErrCodeInstanceCompleted, "withdrawn", nil},
		{"withdrawn", "rollback", approval.ErrCodeInstanceCompleted, "withdrawn", nil},
		{"withdrawn", "withdraw", approval.ErrCodeWithdrawNotAllowed, "withdrawn", nil},
		{"withdrawn", "resubmit", 0, "running", map[string]int{approval.EventInstanceResubmitted: 1, evCreated: 1}},
		{"withdrawn", "terminate", 0, "terminated", map[string]int{evCompleted: 1}},
		{"withdrawn", "add_cc", approval.ErrCodeInstanceCompleted, "withdrawn", nil},
		{"withdrawn", "urge", approval.ErrCodeInstanceCompleted, "withdrawn", nil},
	}
	for _, final := range []string{"approved", "rejected", "terminated"} {
		rows = append(rows, refusedFinal(final)...)
	}
	for _, tt := range rows {
		t.Run(tt.from+"/"+tt.act, func(t *testing.T) {
			e := e.sub(t)
			id := e.start(applicant, code, `{"reason":"first"}`)
			for _, a := range reach[tt.from] {
				e.act()
				e.must(instanceActs[a](e, id, nodes))
			}
			e.wantStatus(id, tt.from)
			from := e.act()
			if r := instanceActs[tt.act](e, id, nodes); r.Code != tt.code {
				t.Fatalf("code = %d (%s), want %d", r.Code, r.Message, tt.code)
			}
			e.wantStatus(id, tt.to)
			if finished := e.column(id, "finished_at") != ""; finished != (tt.to != "running") {
				t.Errorf("finished_at set = %v in %s", finished, tt.to)
			}
			e.wantEventsSince(id, from, tt.events)
			if want, ok := visitsFromRunning[tt.act]; ok && tt.from == "running" {
				if got := visits(e, id); got != want {
					t.Errorf("visits = %s, want %s", got, want)
				}
			}
		})
	}
}

// visitsFromRunning are the node-visit statuses (start, a, end) after each command on a
// running instance: the visit state machine of wire-approval §7 (active → passed, rejected,
// returned, canceled).
var visitsFromRunning = map[string]string{
	"approve": "passed,passed,passed", "reject": "passed,rejected", "rollback": "passed,returned",
	"withdraw": "passed,canceled", "terminate": "passed,canceled", "add_cc": "passed,active", "urge": "passed,active",
}

// scenarioTaskTransitions plays the rows of the task state machine (wire-approval §7) the
// engine tests do not already cover, and the refused task transitions with their codes.
func scenarioTaskTransitions(t *testing.T, e *eng) {
	seqAny := e.flow("tseq", approvalNode("a", users("u1", "u2", "u3")+`,"approvalMethod":"sequential","passRule":"any"`), "s>a", "a>end")
	par := e.flow("tpar", approvalNode("a", users("u1", "u2")+`,"rollbackType":"start"`), "s>a", "a>end")
	opinion := e.flow("topn", approvalNode("a", users("u1", "u2")+`,"isOpinionRequired":true,"rollbackType":"start"`), "s>a", "a>end")
	parNodes, opnNodes := e.nodeIDs(par), e.nodeIDs(opinion)
	type row struct {
		name   string
		flow   string
		setup  func(e *eng, id string)
		act    func(e *eng, id string) svctest.Response
		code   int
		status string
		tasks  []string
		events map[string]int
	}
	decide := func(who, action, extra string) func(e *eng, id string) svctest.Response {
		return func(e *eng, id string) svctest.Response {
			return e.call(user(who), instR, "process_task", taskParams(e.taskOf(id, who), action, extra))
		}
	}
	task := func(who, action, taskOf string, extra string) func(e *eng, id string) svctest.Response {
		return func(e *eng, id string) svctest.Response {
			return e.call(user(who), instR, action, `{"taskId":"`+e.taskOf(id, taskOf)+`"`+extra+`}`)
		}
	}
	rows := []row{
		{name: "waiting→canceled when the node passes", flow: seqAny, act: decide("u1", "approve", ""),
			status: "approved", tasks: []string{"u1:approved", "u2:canceled", "u3:canceled"},
			events: map[string]int{evApproved: 1, evCanceled: 2, evCompleted: 1}},
		{name: "waiting→pending after a rejection under any", flow: seqAny, act: decide("u1", "reject", ""),
			status: "running", tasks: []string{"u1:rejected", "u2:pending", "u3:waiting"},
			events: map[string]int{evRejected: 1, evCreated: 1}},
		{name: "waiting→removed", flow: seqAny, act: task("u1", "remove_assignee", "u3", ""),
			status: "running", tasks: []string{"u1:pending", "u2:waiting", "u3:removed"},
			events: map[string]int{approval.EventTaskAssigneesRemoved: 1}},
		{name: "pending→canceled by a peer's rollback", flow: par, act: decide("u1", "rollback", `,"targetNodeId":"`+parNodes["s"]+`"`),
			status: "returned", tasks: []string{"u1:rolled_back", "u2:canceled"},
			events: map[string]int{evCanceled: 1, approval.EventInstanceReturned: 1}},
		{name: "waiting task refuses a decision", flow: seqAny, act: decide("u2", "approve", ""),
			code: approval.ErrCodeTaskNotPending, status: "running", tasks: []string{"u1:pending", "u2:waiting", "u3:waiting"}},
		{name: "waiting task refuses add_assignee", flow: seqAny, act: task("u2", "add_assignee", "u2", `,"addType":"parallel","userIds":["x"]`),
			code: approval.ErrCodeTaskNotPending, status: "running", tasks: []string{"u1:pending", "u2:waiting", "u3:waiting"}},
		{name: "waiting task refuses an urge", flow: seqAny, act: func(e *eng, id string) svctest.Response {
			return e.call(applicant, instR, "urge_task", `{"taskId":"`+e.taskOf(id, "u2")+`"}`)
		}, code: approval.ErrCodeTaskNotPending, status: "running"},
		{name: "finished task refuses remove_assignee", flow: par, setup: func(e *eng, id string) { e.must(e.decide(id, "u2", "approve", "")) },
			act: task("u1", "remove_assignee", "u2", ""), code: approval.ErrCodeTaskNotPending, status: "running", tasks: []string{"u1:pending", "u2:approved"}},
		{name: "a stranger cannot roll back", flow: par, act: func(e *eng, id string) svctest.Response {
			return e.call(user("zz"), instR, "process_task", taskParams(e.taskOf(id, "u1"), "rollback", `,"targetNodeId":"`+parNodes["s"]+`"`))
		}, code: approval.ErrCodeNotAssignee, status: "running", tasks: []string{"u1:pending", "u2:pending"}},
		{name: "transfer to a person live at the node", flow: par, act: decide("u1", "transfer", `,"transferToId":"u2"`),
			code: approval.ErrCodeInvalidTransferTarget, status: "running", tasks: []string{"u1:pending", "u2:pending"}},
		{name: "admin reassign of a waiting task", flow: seqAny, act: func(e *eng, id string) svctest.Response {
			return e.call(alice, "approval/admin", "reassign_task", `{"taskId":"`+e.taskOf(id, "u2")+`","newAssigneeId":"u9"}`)
		}, code: approval.ErrCodeTaskNotPending, status: "running", tasks: []string{"u1:pending", "u2:waiting", "u3:waiting"}},
		{name: "opinion required: approve", flow: opinion, act: decide("u1", "approve", ""), code: approval.ErrCodeOpinionRequired, status: "running"},
		{name: "opinion required: blank reject", flow: opinion, act: decide("u1", "reject", `,"opinion":"  "`), code: approval.ErrCodeOpinionRequired, status: "running"},
		{name: "opinion required: transfer", flow: opinion, act: decide("u1", "transfer", `,"transferToId":"u7"`), code: approval.ErrCodeOpinionRequired, status: "running"},
		{name: "opinion required: rollback", flow: opinion, act: decide("u1", "rollback", `,"targetNodeId":"`+opnNodes["s"]+`"`), code: approval.ErrCodeOpinionRequired, status: "running"},
		{name: "opinion given", flow: opinion, act: decide("u1", "approve", `,"opinion":"ok"`), status: "running",
			tasks: []string{"u1:approved", "u2:pending"}, events: map[string]int{evApproved: 1}},
		{name: "unknown task", flow: par, act: func(e *eng, id string) svctest.Response {
			return e.call(user("u1"), instR, "process_task", taskParams("nope", "approve", ""))
		}, code: approval.ErrCodeTaskNotFound, status: "running"},
		{name: "rollback needs a target", flow: par, act: decide("u1", "rollback", ""), code: approval.ErrCodeInvalidRollbackTarget, status: "running"},
		{name: "missing action", flow: par, act: func(e *eng, id string) svctest.Response {
			return e.call(user("u1"), instR, "process_task", `{"taskId":"`+e.taskOf(id, "u1")+`"}`)
		}, code: rpc.CodeBadRequest, status: "running"},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			id := e.start(applicant, tt.flow, `{}`)
			if tt.setup != nil {
				e.act()
				tt.setup(e, id)
			}
			from := e.act()
			if r := tt.act(e, id); r.Code != tt.code {
				t.Fatalf("code = %d (%s), want %d", r.Code, r.Message, tt.code)
			}
			e.wantStatus(id, tt.status, tt.tasks...)
			e.wantEventsSince(id, from, tt.events)
		})
	}
}
