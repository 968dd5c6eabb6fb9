package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

const instR = "approval/instance"

// engineEvents are the event types the engine tests record.
var engineEvents = []string{approval.EventInstanceCreated, approval.EventInstanceCompleted, approval.EventInstanceWithdrawn,
	approval.EventInstanceRolledBack, approval.EventInstanceReturned, approval.EventInstanceResubmitted,
	approval.EventNodeAutoPassed, approval.EventTaskCreated, approval.EventTaskApproved, approval.EventTaskHandled,
	approval.EventTaskRejected, approval.EventTaskCanceled, approval.EventTaskTransferred, approval.EventCCNotified,
	approval.EventTaskAssigneesAdded, approval.EventTaskAssigneesRemoved, approval.EventTaskUrged, approval.EventTaskReassigned,
	approval.EventTaskTimedOut, approval.EventTaskDeadlineWarning}

// evRecorder records the engine's events delivered after commit (tx_memory).
type evRecorder struct {
	mu     sync.Mutex
	events []approval.InstanceEvent
	types  []string
}

func (r *evRecorder) module(d app.Deps) (app.Module, error) {
	for _, typ := range engineEvents {
		if _, err := d.Events.Subscribe(typ, func(_ context.Context, env *event.Envelope) error {
			b, _ := json.Marshal(env.Payload)
			var e approval.InstanceEvent
			_ = json.Unmarshal(b, &e)
			r.mu.Lock()
			r.events, r.types = append(r.events, e), append(r.types, env.Type)
			r.mu.Unlock()
			return nil
		}); err != nil {
			return app.Module{}, err
		}
	}
	return app.Module{Name: "evrecorder"}, nil
}

// count is how many events of typ concern instance id.
func (r *evRecorder) count(typ, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for i, t := range r.types {
		if t == typ && r.events[i].InstanceID == id {
			n++
		}
	}
	return n
}

// eng is an engine scenario on one database: the server, its recorder and helpers calling
// /api in the original client's shapes and reading rows back.
type eng struct {
	t   *testing.T
	srv *svctest.Server
	rec *evRecorder
	cat string
	// storage is added to deploy's params (`,"storageMode":"table"`).
	storage string
}

func newEng(t *testing.T, kind config.DBKind, opts ...svctest.Option) *eng {
	t.Helper()
	return newEngWith(t, kind, approval.Options{}, opts...)
}

// newEngWith is newEng with the module's options.
func newEngWith(t *testing.T, kind config.DBKind, apv approval.Options, opts ...svctest.Option) *eng {
	t.Helper()
	rec := &evRecorder{}
	srv := svctest.New(t, append([]svctest.Option{svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Event.Transports.TxMemory.Enabled = true
		c.Event.Routing = []config.EventRoute{{Pattern: "approval.*", Transports: []string{config.TransportTxMemory}}}
	}), svctest.WithOptions(svc.WithApproval(apv), svc.WithModule(rec.module))}, opts...)...)
	e := &eng{t: t, srv: srv, rec: rec}
	e.cat = e.ok(alice, catR, "create", `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`)["id"].(string)
	return e
}

// user is a t1 principal with every permission.
func user(id string) *rpc.Principal { return tenantUser(id, "t1", "admin") }

// call posts resource.action with params (JSON) as p.
func (e *eng) call(p *rpc.Principal, resource, action, params string) svctest.Response {
	e.t.Helper()
	var v any
	if err := json.Unmarshal([]byte(params), &v); err != nil {
		e.t.Fatalf("params %s: %v", params, err)
	}
	return e.srv.Call(e.t, resource, action, v, svctest.As(p))
}

// ok calls and fails the test unless the answer is code 0; it returns the data as a map.
func (e *eng) ok(p *rpc.Principal, resource, action, params string) map[string]any {
	e.t.Helper()
	r := e.call(p, resource, action, params)
	if r.Code != 0 {
		e.t.Fatalf("%s.%s %s: code %d %s", resource, action, params, r.Code, r.Message)
	}
	var m map[string]any
	_ = json.Unmarshal(r.Data, &m)
	return m
}

// refused calls and checks the answer is code.
func (e *eng) refused(code int, p *rpc.Principal, resource, action, params string) {
	e.t.Helper()
	if r := e.call(p, resource, action, params); r.Code != code {
		e.t.Errorf("%s.%s %s: code %d (%s), want %d", resource, action, params, r.Code, r.Message, code)
	}
}

// flow creates, deploys, publishes and activates a flow of nodes (designer JSON) and edges
// (source>target[:handle] pairs) with the form document formDoc and returns its code.
func (e *eng) flow(code, nodes string, edges ...string) string {
	e.t.Helper()
	return e.flowWith(code, `"bindingMode":"standalone"`, nodes, edges...)
}

// flowForm is flow with the form-editor document form.
func (e *eng) flowForm(code, form, nodes string, edges ...string) string {
	e.t.Helper()
	return e.deployFlow(code, `"bindingMode":"standalone"`, form, nodes, edges...)
}

// flowWith is flow with the binding fields of the create params (bindingMode, businessBinding).
func (e *eng) flowWith(code, binding, nodes string, edges ...string) string {
	e.t.Helper()
	return e.deployFlow(code, binding, formDoc, nodes, edges...)
}

// deployFlow creates, deploys (with e.storage), publishes and activates a flow with the binding
// fields binding and the form document form.
func (e *eng) deployFlow(code, binding, form, nodes string, edges ...string) string {
	e.t.Helper()
	f := e.ok(alice, flowR, "create", `{"tenantId":"t1","code":"`+code+`","name":"Flow `+code+`","categoryId":"`+e.cat+`",`+binding+`,"isAllInitiationAllowed":true,"instanceTitleTemplate":"{{.applicantName}}: {{.flowName}}"}`)
	var es []string
	for i, x := range edges {
		st, handle, _ := strings.Cut(x, ":")
		src, dst, _ := strings.Cut(st, ">")
		h := ""
		if handle != "" {
			h = `,"sourceHandle":"` + handle + `"`
		}
		es = append(es, fmt.Sprintf(`{"id":"e%d","source":"%s","target":"%s"%s}`, i, src, dst, h))
	}
	def := `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},` + nodes +
		`,{"id":"end","kind":"end","position":{"x":0,"y":0},"data":{"name":"End"}}],"edges":[` + strings.Join(es, ",") + `]}`
	v := e.ok(alice, flowR, "deploy", `{"flowId":"`+f["id"].(string)+`","flowDefinition":`+def+`,"formSchema":`+form+e.storage+`}`)
	e.ok(alice, flowR, "publish_version", `{"versionId":"`+v["id"].(string)+`"}`)
	e.ok(alice, flowR, "toggle_active", `{"flowId":"`+f["id"].(string)+`","isActive":true}`)
	return code
}

// approvalNode is an approval node's designer JSON with extra data fields.
func approvalNode(id, extra string) string {
	return `{"id":"` + id + `","kind":"approval","position":{"x":0,"y":0},"data":{"name":"` + strings.ToUpper(id) + `"` + extra + `}}`
}

// users is an assignee list of user ids.
func users(ids ...string) string {
	return `,"assignees":[{"kind":"user","ids":["` + strings.Join(ids, `","`) + `"],"sortOrder":0}]`
}

// start starts flow code as p with form data and returns the instance id.
func (e *eng) start(p *rpc.Principal, code, form string) string {
	e.t.Helper()
	if !strings.Contains(form, `"amount"`) { // the form document requires amount
		form = `{"amount":1,` + strings.TrimPrefix(strings.TrimSpace(form), "{")
		form = strings.Replace(form, ",}", "}", 1)
	}
	return e.ok(p, instR, "start", `{"tenantId":"t1","flowCode":"`+code+`","formData":`+form+`}`)["id"].(string)
}

// status is the instance's status.
func (e *eng) status(id string) string {
	e.t.Helper()
	var s string
	if err := e.srv.DB().NewSelect().Table("apv_instance").Column("status").Where("id = ?", id).Scan(context.Background(), &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// tasks lists the instance's tasks as "assignee:status" in creation order.
func (e *eng) tasks(id string) []string {
	e.t.Helper()
	var rows []approval.Task
	if err := e.srv.DB().NewSelect().Model(&rows).Where("instance_id = ?", id).Order("created_at", "sort_order").Scan(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.AssigneeID + ":" + r.Status
		if r.DelegatorID != nil {
			out[i] += "<" + *r.DelegatorID
		}
	}
	return out
}

// task is the id of assignee's pending task on the instance.
func (e *eng) task(id, assignee string) string {
	e.t.Helper()
	var tid string
	if err := e.srv.DB().NewSelect().Table("apv_task").Column("id").Where("instance_id = ?", id).Where("assignee_id = ?", assignee).
		Where("status = ?", approval.TaskPending).Scan(context.Background(), &tid); err != nil {
		e.t.Fatalf("no pending task of %s on %s: %v (tasks %v)", assignee, id, err, e.tasks(id))
	}
	return tid
}

// decide posts process_task for assignee's pending task.
func (e *eng) decide(id, assignee, action, extra string) svctest.Response {
	e.t.Helper()
	return e.call(user(assignee), instR, "process_task", `{"taskId":"`+e.task(id, assignee)+`","action":"`+action+`"`+extra+`}`)
}

func (e *eng) must(r svctest.Response) {
	e.t.Helper()
	if r.Code != 0 {
		e.t.Fatalf("code %d %s", r.Code, r.Message)
	}
}

func (e *eng) wantStatus(id, status string, tasks ...string) {
	e.t.Helper()
	if got := e.status(id); got != status {
		e.t.Errorf("status = %s, want %s", got, status)
	}
	if tasks != nil {
		got := e.tasks(id)
		if strings.Join(got, " ") != strings.Join(tasks, " ") {
			e.t.Errorf("tasks = %v, want %v", got, tasks)
		}
	}
}

func (e *eng) wantEvents(id string, pairs ...any) {
	e.t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		var got int // delivery after commit may trail the answer
		svctest.Eventually(e.t, 3*time.Second, func() bool { got = e.rec.count(pairs[i].(string), id); return got >= pairs[i+1].(int) },
			fmt.Sprintf("%s events of %s reach %d", pairs[i], id, pairs[i+1]))
		if got != pairs[i+1].(int) {
			e.t.Errorf("%s events = %d, want %d", pairs[i], got, pairs[i+1])
		}
	}
}

var applicant = user("app")

// TestEngineDecisions: start, the parallel all rule, timing CCs, a handle node, the end, the
// refused task transitions and their codes, events once per transition.
func TestEngineDecisions(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		code := e.flow("par", approvalNode("a", users("u1", "u2")+`,"ccs":[{"kind":"user","ids":["u9"],"timing":"on_approve"},{"kind":"user","ids":["u8"],"timing":"on_reject"}],"fieldPermissions":{"reason":"editable"}`)+
			`,{"id":"h","kind":"handle","position":{"x":0,"y":0},"data":{"name":"Pay"`+users("u3")+`}}`, "s>a", "a>h", "h>end")
		inst := e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"par","formData":{"amount":10,"reason":"trip"}}`)
		id := inst["id"].(string)
		if inst["status"] != "running" || inst["title"] != "app: Flow par" || inst["applicantId"] != "app" || inst["flowCode"] != code {
			t.Errorf("start answered %v", inst)
		}
		e.wantStatus(id, "running", "u1:pending", "u2:pending")
		e.refused(approval.ErrCodeNotAssignee, user("u2"), instR, "process_task", `{"taskId":"`+e.task(id, "u1")+`","action":"approve"}`)
		e.refused(approval.ErrCodeInvalidTaskTransition, user("u1"), instR, "process_task", `{"taskId":"`+e.task(id, "u1")+`","action":"handle"}`)
		e.refused(rpc.CodeBadRequest, user("u1"), instR, "process_task", `{"taskId":"`+e.task(id, "u1")+`","action":"jump"}`)
		e.refused(approval.ErrCodeTaskNotFound, user("u1"), instR, "process_task", `{"taskId":"nope","action":"approve"}`)
		e.refused(approval.ErrCodeTaskNotFound, tenantUser("u1", "t2", "admin"), instR, "process_task", `{"taskId":"`+e.task(id, "u1")+`","action":"approve"}`)
		t1 := e.task(id, "u1")
		e.must(e.decide(id, "u1", "approve", `,"opinion":"fine","formData":{"reason":"trip 2","amount":99999}`))
		e.refused(approval.ErrCodeTaskNotPending, user("u1"), instR, "process_task", `{"taskId":"`+t1+`","action":"approve"}`)
		e.wantStatus(id, "running", "u1:approved", "u2:pending")
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "running", "u1:approved", "u2:approved", "u3:pending")
		var form string
		_ = e.srv.DB().NewSelect().Table("apv_instance").Column("form_data").Where("id = ?", id).Scan(context.Background(), &form)
		if !strings.Contains(form, `"trip 2"`) || strings.Contains(form, "99999") {
			t.Errorf("form data after the editable merge: %s", form)
		}
		e.must(e.decide(id, "u3", "handle", ""))
		e.wantStatus(id, "approved", "u1:approved", "u2:approved", "u3:handled")
		e.wantEvents(id, approval.EventInstanceCreated, 1, approval.EventTaskCreated, 3, approval.EventTaskApproved, 2,
			approval.EventTaskHandled, 1, approval.EventInstanceCompleted, 1, approval.EventCCNotified, 1)
		var cc []string
		_ = e.srv.DB().NewSelect().Table("apv_cc_record").Column("cc_user_id").Where("instance_id = ?", id).Scan(context.Background(), &cc)
		if strings.Join(cc, ",") != "u9" {
			t.Errorf("cc records %v, want u9 (on_approve only)", cc)
		}
		var actions []string
		_ = e.srv.DB().NewSelect().Table("apv_action_log").Column("action").Where("instance_id = ?", id).Order("seq").Scan(context.Background(), &actions)
		if strings.Join(actions, ",") != "submit,approve,approve,handle" {
			t.Errorf("action log %v", actions)
		}
		var visits []string
		_ = e.srv.DB().NewSelect().Table("apv_node_visit").Column("status").Where("instance_id = ?", id).Order("sequence").Scan(context.Background(), &visits)
		if strings.Join(visits, ",") != "passed,passed,passed,passed" {
			t.Errorf("visits %v", visits)
		}
		e.refused(approval.ErrCodeWithdrawNotAllowed, applicant, instR, "withdraw", `{"instanceId":"`+id+`"}`)

		// Rejection: a reject under "all" rejects the node and the instance; on_reject CC fires.
		id2 := e.start(applicant, code, `{"amount":1}`)
		e.must(e.decide(id2, "u2", "reject", `,"opinion":"no"`))
		e.wantStatus(id2, "rejected", "u1:canceled", "u2:rejected")
		e.wantEvents(id2, approval.EventTaskRejected, 1, approval.EventTaskCanceled, 1, approval.EventInstanceCompleted, 1, approval.EventCCNotified, 1)

		// Start refusals.
		e.refused(approval.ErrCodeFlowNotFound, applicant, instR, "start", `{"tenantId":"t1","flowCode":"nope"}`)
		e.refused(approval.ErrCodeFlowNotFound, tenantUser("x", "t2", "admin"), instR, "start", `{"tenantId":"t1","flowCode":"par"}`)
		e.refused(approval.ErrCodeFormValidationFailed, applicant, instR, "start", `{"tenantId":"t1","flowCode":"par","formData":{"nope":1}}`)
		e.refused(rpc.CodeBadRequest, applicant, instR, "start", `{"tenantId":"t1"}`)
	})
}

// TestEngineRules: sequential activation, any, ratio with early rejection, condition branches
// by priority with default, empty-assignee actions, same-applicant per seat, delegation chains
// with a cycle, consecutive approver, auto execution types and a cc node with read
// confirmation.
func TestEngineRules(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		seq := e.flow("seq", approvalNode("a", users("u1", "u2", "u3")+`,"approvalMethod":"sequential"`), "s>a", "a>end")
		id := e.start(applicant, seq, `{"amount":1}`)
		e.wantStatus(id, "running", "u1:pending", "u2:waiting", "u3:waiting")
		e.must(e.decide(id, "u1", "approve", ""))
		e.wantStatus(id, "running", "u1:approved", "u2:pending", "u3:waiting")
		e.must(e.decide(id, "u2", "reject", ""))
		e.wantStatus(id, "rejected", "u1:approved", "u2:rejected", "u3:canceled")

		anyF := e.flow("any", approvalNode("a", users("u1", "u2")+`,"passRule":"any"`), "s>a", "a>end")
		id = e.start(applicant, anyF, `{}`)
		e.must(e.decide(id, "u1", "reject", ""))
		e.wantStatus(id, "running", "u1:rejected", "u2:pending")
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "approved")
		id = e.start(applicant, anyF, `{}`)
		e.must(e.decide(id, "u1", "reject", ""))
		e.must(e.decide(id, "u2", "reject", ""))
		e.wantStatus(id, "rejected")

		ratio := e.flow("ratio", approvalNode("a", users("u1", "u2", "u3")+`,"passRule":"ratio","passRatio":"60"`), "s>a", "a>end")
		id = e.start(applicant, ratio, `{}`)
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u2", "reject", ""))
		e.wantStatus(id, "running")
		e.must(e.decide(id, "u3", "reject", ""))
		e.wantStatus(id, "rejected", "u1:approved", "u2:rejected", "u3:rejected")
		id = e.start(applicant, ratio, `{}`)
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u3", "approve", ""))
		e.wantStatus(id, "approved", "u1:approved", "u2:canceled", "u3:approved")

		cond := e.flow("cond", `{"id":"c","kind":"condition","position":{"x":0,"y":0},"data":{"name":"?","branches":[
			{"id":"mid","label":"Mid","priority":2,"conditionGroups":[{"conditions":[{"kind":"field","subject":"amount","operator":"gt","value":100}]}]},
			{"id":"big","label":"Big","priority":1,"conditionGroups":[{"conditions":[{"kind":"expression","expression":"formData.amount > 1000"}]}]},
			{"id":"d","label":"Other","isDefault":true,"priority":3}]}},`+
			approvalNode("big", users("ub"))+`,`+approvalNode("mid", users("um"))+`,`+approvalNode("low", users("ul")),
			"s>c", "c>big:big", "c>mid:mid", "c>low:d", "big>end", "mid>end", "low>end")
		for amount, who := range map[string]string{"5000": "ub", "500": "um", "5": "ul"} {
			id = e.start(applicant, cond, `{"amount":`+amount+`}`)
			e.wantStatus(id, "running", who+":pending")
		}

		// Empty assignees: auto_pass, transfer_specified, transfer_applicant, transfer_admin.
		empty := func(code, action string) string {
			return e.flow(code, approvalNode("a", `,"assignees":[{"kind":"role","ids":["nobody"],"sortOrder":0}],"emptyAssigneeAction":"`+action+`","fallbackUserIds":["fb"],"adminUserIds":["adm"]`), "s>a", "a>end")
		}
		id = e.start(applicant, empty("e1", "auto_pass"), `{}`)
		e.wantStatus(id, "approved", []string{}...)
		e.wantEvents(id, approval.EventNodeAutoPassed, 1)
		e.wantStatus(e.start(applicant, empty("e2", "transfer_specified"), `{}`), "running", "fb:pending")
		e.wantStatus(e.start(applicant, empty("e3", "transfer_applicant"), `{}`), "running", "app:pending")
		e.wantStatus(e.start(applicant, empty("e4", "transfer_admin"), `{}`), "running", "adm:pending")
		e.refused(approval.ErrCodeNoAssignee, applicant, instR, "start", `{"tenantId":"t1","flowCode":"`+empty("e5", "transfer_superior")+`","formData":{"amount":1}}`)

		// Same applicant per seat: auto_pass drops the applicant's seat; exclude too; self_approve keeps it.
		e.wantStatus(e.start(applicant, e.flow("sa1", approvalNode("a", users("app", "u1")+`,"sameApplicantAction":"auto_pass"`), "s>a", "a>end"), `{}`), "running", "u1:pending")
		e.wantStatus(e.start(applicant, e.flow("sa2", approvalNode("a", users("app")+`,"sameApplicantAction":"auto_pass"`), "s>a", "a>end"), `{}`), "approved")
		e.wantStatus(e.start(applicant, e.flow("sa3", approvalNode("a", users("app")+`,"sameApplicantAction":"exclude","emptyAssigneeAction":"transfer_specified","fallbackUserIds":["fb"]`), "s>a", "a>end"), `{}`), "running", "fb:pending")
		e.wantStatus(e.start(applicant, e.flow("sa4", approvalNode("a", users("app")), "s>a", "a>end"), `{}`), "running", "app:pending")

		// Delegation chain u1 → d1 → d2 → u1 (cycle): the task goes to d2 for u1.
		for _, d := range [][2]string{{"u1", "d1"}, {"d1", "d2"}, {"d2", "u1"}} {
			e.ok(root, delR, "create", `{"delegatorId":"`+d[0]+`","delegateeId":"`+d[1]+`","startsAt":"2020-01-01 00:00:00","endsAt":"2099-01-01 00:00:00","isActive":true}`)
		}
		e.wantStatus(e.start(applicant, e.flow("del", approvalNode("a", users("u1", "u2")), "s>a", "a>end"), `{}`), "running", "d2:pending<u1", "u2:pending")

		// Consecutive approver: u2 approved the previous approval node, so its seat at b auto-passes.
		cons := e.flow("cons", approvalNode("a", users("u2"))+`,`+approvalNode("b", users("u2", "u3")+`,"consecutiveApproverAction":"auto_pass"`), "s>a", "a>b", "b>end")
		id = e.start(applicant, cons, `{}`)
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "running", "u2:approved", "u2:approved", "u3:pending")

		// Execution types.
		e.wantStatus(e.start(applicant, e.flow("ap", approvalNode("a", users("u1")+`,"executionType":"auto_pass"`), "s>a", "a>end"), `{}`), "approved", []string{}...)
		e.wantStatus(e.start(applicant, e.flow("ar", approvalNode("a", users("u1")+`,"executionType":"auto_reject"`), "s>a", "a>end"), `{}`), "rejected", []string{}...)

		// A cc node with read confirmation waits until every recipient has read it.
		ccf := e.flow("ccr", `{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"Read","ccs":[{"kind":"user","ids":["r1","r2"]}],"isReadConfirmRequired":true}}`, "s>k", "k>end")
		id = e.start(applicant, ccf, `{}`)
		e.wantStatus(id, "running")
		e.refused(approval.ErrCodeAccessDenied, user("zz"), instR, "mark_cc_read", `{"instanceId":"`+id+`"}`)
		e.ok(user("r1"), instR, "mark_cc_read", `{"instanceId":"`+id+`"}`)
		e.wantStatus(id, "running")
		e.ok(user("r2"), instR, "mark_cc_read", `{"instanceId":"`+id+`"}`)
		e.wantStatus(id, "approved")
	})
}

// TestEngineTransferRollbackWithdraw: transfer, rollback to a previous node (keep), to start
// (returned), resubmit, withdraw and manual CC with their refusals.
func TestEngineTransferRollbackWithdraw(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		code := e.flow("rb", approvalNode("a", users("u1")+`,"fieldPermissions":{"reason":"editable"}`)+`,`+
			approvalNode("b", users("u2")+`,"rollbackType":"any","rollbackDataStrategy":"keep","isTransferAllowed":true`)+`,`+
			approvalNode("c", users("u3")+`,"isTransferAllowed":false,"rollbackType":"none","isManualCcAllowed":false`), "s>a", "a>b", "b>c", "c>end")
		node := nodeIDs(t, e, code)
		id := e.start(applicant, code, `{"reason":"first"}`)
		e.must(e.decide(id, "u1", "approve", `,"formData":{"reason":"changed by u1"}`))

		// Transfer b from u2 to u4; refusals first.
		e.refused(approval.ErrCodeInvalidTransferTarget, user("u2"), instR, "process_task", `{"taskId":"`+e.task(id, "u2")+`","action":"transfer","transferToId":"u2"}`)
		e.refused(approval.ErrCodeInvalidTransferTarget, user("u2"), instR, "process_task", `{"taskId":"`+e.task(id, "u2")+`","action":"transfer"}`)
		e.must(e.decide(id, "u2", "transfer", `,"transferToId":"u4","opinion":"away"`))
		e.wantStatus(id, "running", "u1:approved", "u2:transferred", "u4:pending")
		e.wantEvents(id, approval.EventTaskTransferred, 1)

		// Rollback from b to a (keep: a's snapshot, taken when a was entered).
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u4"), instR, "process_task", `{"taskId":"`+e.task(id, "u4")+`","action":"rollback","targetNodeId":"`+node["c"]+`"}`)
		e.must(e.decide(id, "u4", "rollback", `,"targetNodeId":"`+node["a"]+`"`))
		e.wantStatus(id, "running", "u1:approved", "u2:transferred", "u4:rolled_back", "u1:pending")
		var form string
		_ = e.srv.DB().NewSelect().Table("apv_instance").Column("form_data").Where("id = ?", id).Scan(context.Background(), &form)
		if !strings.Contains(form, `"first"`) {
			t.Errorf("keep strategy did not restore a's snapshot: %s", form)
		}
		e.wantEvents(id, approval.EventInstanceRolledBack, 1)
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u2", "approve", ""))

		// c allows neither transfer nor rollback nor manual CC.
		e.refused(approval.ErrCodeTransferNotAllowed, user("u3"), instR, "process_task", `{"taskId":"`+e.task(id, "u3")+`","action":"transfer","transferToId":"u5"}`)
		e.refused(approval.ErrCodeRollbackNotAllowed, user("u3"), instR, "process_task", `{"taskId":"`+e.task(id, "u3")+`","action":"rollback","targetNodeId":"`+node["s"]+`"}`)
		e.refused(approval.ErrCodeManualCcNotAllowed, applicant, instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["x"]}`)
		e.refused(approval.ErrCodeNotApplicant, user("u3"), instR, "withdraw", `{"instanceId":"`+id+`"}`)
		e.refused(approval.ErrCodeResubmitNotAllowed, applicant, instR, "resubmit", `{"instanceId":"`+id+`"}`)

		// Withdraw, then resubmit restarts from start.
		e.ok(applicant, instR, "withdraw", `{"instanceId":"`+id+`","reason":"oops"}`)
		e.wantStatus(id, "withdrawn")
		if ts := e.tasks(id); ts[len(ts)-1] != "u3:canceled" {
			t.Errorf("tasks after withdraw %v", ts)
		}
		e.refused(approval.ErrCodeWithdrawNotAllowed, applicant, instR, "withdraw", `{"instanceId":"`+id+`"}`)
		e.refused(approval.ErrCodeInstanceCompleted, user("u3"), instR, "process_task", `{"taskId":"`+lastTask(e, id)+`","action":"approve"}`)
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"reason":"again"}}`)
		e.wantStatus(id, "running")
		e.task(id, "u1")
		e.wantEvents(id, approval.EventInstanceWithdrawn, 1, approval.EventInstanceResubmitted, 1)

		// Rollback to start → returned; resubmit → running again.
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+node["s"]+`"`))
		e.wantStatus(id, "returned")
		e.wantEvents(id, approval.EventInstanceReturned, 1)
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`"}`)
		e.wantStatus(id, "running")

		// Manual CC at a (allowed by default), by a participant only.
		e.refused(approval.ErrCodeAccessDenied, user("stranger"), instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["x"]}`)
		e.ok(user("u1"), instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["x","y","x"]}`)
		e.wantEvents(id, approval.EventCCNotified, 1)
	})
}

// lastTask is the id of the instance's most recent task.
func lastTask(e *eng, id string) string {
	var tid string
	_ = e.srv.DB().NewSelect().Table("apv_task").Column("id").Where("instance_id = ?", id).OrderExpr("created_at DESC").Limit(1).Scan(context.Background(), &tid)
	return tid
}

// TestEngineRace: 50 assignees decide one parallel node at the same moment; the node advances
// once, every decision is kept and every transition's event is published once.
func TestEngineRace(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		var ids []string
		for i := 0; i < 50; i++ {
			ids = append(ids, fmt.Sprintf("r%02d", i))
		}
		code := e.flow("race", approvalNode("a", users(ids...)+`,"ccs":[{"kind":"user","ids":["w"],"timing":"on_approve"}]`)+`,`+approvalNode("b", users("last")), "s>a", "a>b", "b>end")
		id := e.start(applicant, code, `{}`)
		tasks := map[string]string{}
		for _, u := range ids {
			tasks[u] = e.task(id, u)
		}
		var wg sync.WaitGroup
		codes := make([]int, len(ids))
		for i, u := range ids {
			wg.Add(1)
			go func(i int, u string) {
				defer wg.Done()
				r := e.srv.Call(t, instR, "process_task", map[string]any{"taskId": tasks[u], "action": "approve"}, svctest.As(user(u)))
				codes[i] = r.Code
			}(i, u)
		}
		wg.Wait()
		for i, c := range codes {
			if c != 0 {
				t.Errorf("%s: code %d", ids[i], c)
			}
		}
		got := e.tasks(id)
		sort.Strings(got)
		want := append([]string{"last:pending"}, func() []string {
			var out []string
			for _, u := range ids {
				out = append(out, u+":approved")
			}
			return out
		}()...)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("tasks = %v", got)
		}
		visits, _ := e.srv.DB().NewSelect().Table("apv_node_visit").Where("instance_id = ?", id).Count(context.Background())
		if visits != 3 {
			t.Errorf("visits = %d, want 3 (start, a, b)", visits)
		}
		svctest.Eventually(t, 5*time.Second, func() bool { return e.rec.count(approval.EventTaskApproved, id) >= 50 },
			"50 task.approved events")
		e.wantEvents(id, approval.EventTaskApproved, 50, approval.EventTaskCreated, 51, approval.EventCCNotified, 1, approval.EventTaskCanceled, 0)
	})
}

// TestEngineAssigneesUrgeAdmin: add_assignee before / after / parallel, remove_assignee,
// urge_task with its cooldown, and the admin commands terminate_instance and reassign_task,
// with their refusals.
func TestEngineAssigneesUrgeAdmin(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		code := e.flow("add", approvalNode("a", users("u1", "u2")+`,"urgeCooldownMinutes":5`), "s>a", "a>end")
		only := e.flow("noadd", approvalNode("a", users("u1", "u2")+`,"isAddAssigneeAllowed":false,"isRemoveAssigneeAllowed":false,"addAssigneeTypes":["after"]`), "s>a", "a>end")

		// before: u1 waits until x1 has approved.
		id := e.start(applicant, code, `{}`)
		add := func(as, taskID, typ string, who ...string) svctest.Response {
			return e.call(user(as), instR, "add_assignee", `{"taskId":"`+taskID+`","addType":"`+typ+`","userIds":["`+strings.Join(who, `","`)+`"]}`)
		}
		e.must(add("u1", e.task(id, "u1"), "before", "x1", "u2"))
		e.wantStatus(id, "running", "u1:waiting", "u2:pending", "x1:pending")
		e.refused(approval.ErrCodeNoUsersSpecified, user("u2"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u2")+`","addType":"parallel","userIds":["x1"]}`)
		e.must(e.decide(id, "x1", "approve", ""))
		e.wantStatus(id, "running", "u1:pending", "u2:pending", "x1:approved")
		// after: x2 becomes pending once u2 has approved.
		e.must(add("u2", e.task(id, "u2"), "after", "x2"))
		e.wantStatus(id, "running", "u1:pending", "u2:pending", "x1:approved", "x2:waiting")
		e.must(e.decide(id, "u2", "approve", ""))
		e.wantStatus(id, "running", "u1:pending", "u2:approved", "x1:approved", "x2:pending")
		// parallel: x3 pending at once; then remove x3 (by a peer), approve the rest.
		e.must(add("u1", e.task(id, "u1"), "parallel", "x3"))
		e.refused(approval.ErrCodeInvalidTaskTransition, user("u1"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u1")+`"}`)
		e.refused(approval.ErrCodeNotAssignee, user("zz"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "x3")+`"}`)
		e.ok(user("u1"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "x3")+`"}`)
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "x2", "approve", ""))
		e.wantStatus(id, "approved", "u1:approved", "u2:approved", "x1:approved", "x2:approved", "x3:removed")
		e.wantEvents(id, approval.EventTaskCreated, 6)

		// Refusals on a node that allows neither.
		id = e.start(applicant, only, `{}`)
		e.refused(approval.ErrCodeAddAssigneeNotAllowed, user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","addType":"after","userIds":["q"]}`)
		e.refused(approval.ErrCodeRemoveAssigneeNotAllowed, user("u1"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u2")+`"}`)
		id = e.start(applicant, e.flow("types", approvalNode("a", users("u1", "u2")+`,"addAssigneeTypes":["after"]`), "s>a", "a>end"), `{}`)
		e.refused(approval.ErrCodeInvalidAddAssigneeType, user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","addType":"before","userIds":["q"]}`)
		e.ok(user("u1"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u2")+`"}`)
		e.wantStatus(id, "running", "u1:pending", "u2:removed")
		e.refused(approval.ErrCodeLastAssigneeRemoval, user("u1"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u1")+`"}`)

		// Urge: applicant or participant, once per cooldown.
		id = e.start(applicant, code, `{}`)
		tu1 := e.task(id, "u1")
		e.ok(applicant, instR, "urge_task", `{"taskId":"`+tu1+`","message":"please"}`)
		r := e.call(applicant, instR, "urge_task", `{"taskId":"`+tu1+`"}`)
		if r.Code != approval.ErrCodeUrgeCooldown || !strings.Contains(r.Message, "5") {
			t.Errorf("second urge: %d %s", r.Code, r.Message)
		}
		e.ok(user("u2"), instR, "urge_task", `{"taskId":"`+tu1+`"}`)
		e.refused(approval.ErrCodeAccessDenied, user("stranger"), instR, "urge_task", `{"taskId":"`+tu1+`"}`)
		e.wantEvents(id, approval.EventTaskUrged, 2)

		// Admin: reassign u1 → u7, then terminate; terminated is final.
		e.refused(approval.ErrCodeInvalidTransferTarget, alice, "approval/admin", "reassign_task", `{"taskId":"`+tu1+`","newAssigneeId":"u2"}`)
		e.ok(alice, "approval/admin", "reassign_task", `{"taskId":"`+tu1+`","newAssigneeId":"u7","reason":"leave"}`)
		e.wantStatus(id, "running", "u1:transferred", "u2:pending", "u7:pending")
		e.wantEvents(id, approval.EventTaskReassigned, 1)
		e.ok(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`","reason":"stop"}`)
		e.wantStatus(id, "terminated", "u1:transferred", "u2:canceled", "u7:canceled")
		e.refused(approval.ErrCodeTerminateNotAllowed, alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`"}`)
		e.refused(approval.ErrCodeInstanceNotFound, bob, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`"}`)
		e.wantEvents(id, approval.EventInstanceCompleted, 1)
	})
}

// TestEngineRollbackTypes: previous (only the last node of the trail) with the clear strategy,
// and specified (only the listed designer keys).
func TestEngineRollbackTypes(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		code := e.flow("rbt", approvalNode("a", users("u1"))+`,`+
			approvalNode("b", users("u2")+`,"rollbackType":"previous","rollbackDataStrategy":"clear"`)+`,`+
			approvalNode("c", users("u3")+`,"rollbackType":"specified","rollbackTargetKeys":["a"]`), "s>a", "a>b", "b>c", "c>end")
		node := map[string]string{}
		var nodes []approval.Node
		if err := e.srv.DB().NewSelect().Model(&nodes).Join("JOIN apv_flow_version AS v ON v.id = node.flow_version_id").
			Join("JOIN apv_flow AS f ON f.id = v.flow_id").Where("f.code = ?", code).Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			node[n.Key] = n.ID
		}
		id := e.start(applicant, code, `{"reason":"x"}`)
		e.must(e.decide(id, "u1", "approve", ""))
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u2"), instR, "process_task", `{"taskId":"`+e.task(id, "u2")+`","action":"rollback","targetNodeId":"`+node["s"]+`"}`)
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+node["a"]+`"`))
		var form *string
		_ = e.srv.DB().NewSelect().Table("apv_instance").Column("form_data").Where("id = ?", id).Scan(context.Background(), &form)
		if form != nil && *form != "null" {
			t.Errorf("clear strategy left form data %s", *form)
		}
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u2", "approve", ""))
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u3"), instR, "process_task", `{"taskId":"`+e.task(id, "u3")+`","action":"rollback","targetNodeId":"`+node["b"]+`"}`)
		e.refused(approval.ErrCodeInvalidRollbackTarget, user("u3"), instR, "process_task", `{"taskId":"`+e.task(id, "u3")+`","action":"rollback","targetNodeId":"`+node["s"]+`"}`)
		e.must(e.decide(id, "u3", "rollback", `,"targetNodeId":"`+node["a"]+`"`))
		e.wantStatus(id, "running")
		e.task(id, "u1")
		var visits []string
		_ = e.srv.DB().NewSelect().Table("apv_node_visit").Column("status").Where("instance_id = ?", id).Order("sequence").Scan(context.Background(), &visits)
		if strings.Join(visits, ",") != "passed,passed,returned,passed,passed,returned,active" {
			t.Errorf("visits %v", visits)
		}
	})
}

// TestEngineDirectoryKinds: superior, department_leader, role and department assignees and
// the transfer_superior same-applicant action resolve through the built-in directory; the
// applicant's department is snapshotted on the instance.
func TestEngineDirectoryKinds(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		ctx := context.Background()
		st := e.srv.Security().Store()
		ann, err := st.Create(ctx, "ann", "Ann", "long-enough-pass-1", []string{"finance", "admin"})
		if err != nil {
			t.Fatal(err)
		}
		ben, _ := st.Create(ctx, "ben", "Ben", "long-enough-pass-2", []string{"admin"})
		dir := security.NewDirectory(e.srv.DB(), nil)
		fin, err := dir.AddDepartment(ctx, "fin", "Finance", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{dir.SetLeaders(ctx, "fin", []string{"ann"}), dir.SetUserDepartment(ctx, "ben", "fin"), dir.SetSuperior(ctx, "ben", "ann")} {
			if err != nil {
				t.Fatal(err)
			}
		}
		kinds := []string{`[{"kind":"superior","sortOrder":0}]`, `[{"kind":"department_leader","sortOrder":0}]`,
			`[{"kind":"role","ids":["finance"],"sortOrder":0}]`, `[{"kind":"department","ids":["` + fin.ID + `"],"sortOrder":0}]`,
			`[{"kind":"self","sortOrder":0}]`}
		var nodes []string
		edges := []string{"s>n0"}
		for i, k := range kinds {
			extra := ""
			if i == len(kinds)-1 {
				extra = `,"sameApplicantAction":"transfer_superior"`
			}
			nodes = append(nodes, approvalNode(fmt.Sprintf("n%d", i), `,"assignees":`+k+extra))
			next := "end"
			if i+1 < len(kinds) {
				next = fmt.Sprintf("n%d", i+1)
			}
			edges = append(edges, fmt.Sprintf("n%d>%s", i, next))
		}
		code := e.flow("dir", strings.Join(nodes, ","), edges...)
		inst := e.ok(tenantUser(ben.ID, "t1", "admin"), instR, "start", `{"tenantId":"t1","flowCode":"`+code+`","formData":{"amount":1}}`)
		id := inst["id"].(string)
		if inst["applicantDepartmentName"] != "Finance" || inst["applicantName"] != "Ben" {
			t.Errorf("applicant snapshot %v / %v", inst["applicantName"], inst["applicantDepartmentName"])
		}
		for range kinds {
			e.must(e.call(tenantUser(ann.ID, "t1", "admin"), instR, "process_task", `{"taskId":"`+e.task(id, ann.ID)+`","action":"approve"}`))
		}
		want := make([]string, len(kinds))
		for i := range want {
			want[i] = ann.ID + ":approved"
		}
		e.wantStatus(id, "approved", want...)
	})
}
