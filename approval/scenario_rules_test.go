package approval_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval"
)

// scenarioPassRules plays each pass rule (all, any, ratio) with the parallel and the
// sequential method (wire-approval §8: outcomes counted over live tasks, early rejection,
// activation in sort order), and handle nodes (sequential + any by default), through decisions
// "user:action" in order; each row checks the final status, every task and the instance's
// exact events from its start.
func scenarioPassRules(t *testing.T, e *eng) {
	flows := map[string]string{}
	for _, rule := range []string{"all", "any", "ratio:60", "ratio:50", "ratio:100", "ratio:1"} {
		for _, method := range []string{"parallel", "sequential"} {
			r, ratio, _ := strings.Cut(rule, ":")
			extra := fmt.Sprintf(`,"approvalMethod":"%s","passRule":"%s"`, method, r)
			if ratio != "" {
				extra += `,"passRatio":"` + ratio + `"`
			}
			code := strings.NewReplacer(":", "", "parallel", "p", "sequential", "s").Replace(rule + method)
			flows[rule+"/"+method] = e.flow(code, approvalNode("a", users("u1", "u2", "u3")+extra), "s>a", "a>end")
		}
	}
	flows["handle"] = e.flow("hdl", `{"id":"h","kind":"handle","position":{"x":0,"y":0},"data":{"name":"H"`+users("u1", "u2", "u3")+`}}`, "s>h", "h>end")
	const (
		started = approval.EventInstanceCreated
	)
	type row struct {
		flow      string
		decisions []string
		status    string
		tasks     []string
		events    map[string]int
	}
	rows := []row{
		{"all/parallel", []string{"u1:approve", "u2:approve", "u3:approve"}, "approved", []string{"u1:approved", "u2:approved", "u3:approved"},
			map[string]int{started: 1, evCreated: 3, evApproved: 3, evCompleted: 1}},
		{"all/parallel", []string{"u1:approve", "u3:reject"}, "rejected", []string{"u1:approved", "u2:canceled", "u3:rejected"},
			map[string]int{started: 1, evCreated: 3, evApproved: 1, evRejected: 1, evCanceled: 1, evCompleted: 1}},
		{"all/sequential", []string{"u1:approve", "u2:approve", "u3:approve"}, "approved", []string{"u1:approved", "u2:approved", "u3:approved"},
			map[string]int{started: 1, evCreated: 3, evApproved: 3, evCompleted: 1}},
		{"all/sequential", []string{"u1:reject"}, "rejected", []string{"u1:rejected", "u2:canceled", "u3:canceled"},
			map[string]int{started: 1, evCreated: 1, evRejected: 1, evCanceled: 2, evCompleted: 1}},
		{"any/parallel", []string{"u2:approve"}, "approved", []string{"u1:canceled", "u2:approved", "u3:canceled"},
			map[string]int{started: 1, evCreated: 3, evApproved: 1, evCanceled: 2, evCompleted: 1}},
		{"any/parallel", []string{"u1:reject", "u2:reject", "u3:reject"}, "rejected", []string{"u1:rejected", "u2:rejected", "u3:rejected"},
			map[string]int{started: 1, evCreated: 3, evRejected: 3, evCompleted: 1}},
		{"any/sequential", []string{"u1:reject", "u2:approve"}, "approved", []string{"u1:rejected", "u2:approved", "u3:canceled"},
			map[string]int{started: 1, evCreated: 2, evRejected: 1, evApproved: 1, evCanceled: 1, evCompleted: 1}},
		{"any/sequential", []string{"u1:reject", "u2:reject", "u3:reject"}, "rejected", []string{"u1:rejected", "u2:rejected", "u3:rejected"},
			map[string]int{started: 1, evCreated: 3, evRejected: 3, evCompleted: 1}},
		{"ratio:60/parallel", []string{"u1:approve", "u2:approve"}, "approved", []string{"u1:approved", "u2:approved", "u3:canceled"},
			map[string]int{started: 1, evCreated: 3, evApproved: 2, evCanceled: 1, evCompleted: 1}},
		{"ratio:60/parallel", []string{"u1:reject", "u2:reject"}, "rejected", []string{"u1:rejected", "u2:rejected", "u3:canceled"},
			map[string]int{started: 1, evCreated: 3, evRejected: 2, evCanceled: 1, evCompleted: 1}},
		{"ratio:60/sequential", []string{"u1:approve", "u2:reject", "u3:approve"}, "approved", []string{"u1:approved", "u2:rejected", "u3:approved"},
			map[string]int{started: 1, evCreated: 3, evApproved: 2, evRejected: 1, evCompleted: 1}},
		{"ratio:60/sequential", []string{"u1:reject", "u2:reject"}, "rejected", []string{"u1:rejected", "u2:rejected", "u3:canceled"},
			map[string]int{started: 1, evCreated: 2, evRejected: 2, evCanceled: 1, evCompleted: 1}},
		{"ratio:50/parallel", []string{"u1:reject", "u2:approve"}, "running", []string{"u1:rejected", "u2:approved", "u3:pending"},
			map[string]int{started: 1, evCreated: 3, evRejected: 1, evApproved: 1}},
		{"ratio:50/parallel", []string{"u1:reject", "u2:approve", "u3:approve"}, "approved", []string{"u1:rejected", "u2:approved", "u3:approved"},
			map[string]int{started: 1, evCreated: 3, evRejected: 1, evApproved: 2, evCompleted: 1}},
		{"ratio:50/sequential", []string{"u1:approve", "u2:approve"}, "approved", []string{"u1:approved", "u2:approved", "u3:canceled"},
			map[string]int{started: 1, evCreated: 2, evApproved: 2, evCanceled: 1, evCompleted: 1}},
		{"ratio:100/parallel", []string{"u1:approve", "u2:reject"}, "rejected", []string{"u1:approved", "u2:rejected", "u3:canceled"},
			map[string]int{started: 1, evCreated: 3, evApproved: 1, evRejected: 1, evCanceled: 1, evCompleted: 1}},
		{"ratio:100/sequential", []string{"u1:approve", "u2:approve", "u3:approve"}, "approved", []string{"u1:approved", "u2:approved", "u3:approved"},
			map[string]int{started: 1, evCreated: 3, evApproved: 3, evCompleted: 1}},
		{"ratio:1/parallel", []string{"u1:approve"}, "approved", []string{"u1:approved", "u2:canceled", "u3:canceled"},
			map[string]int{started: 1, evCreated: 3, evApproved: 1, evCanceled: 2, evCompleted: 1}},
		{"handle", []string{"u1:handle"}, "approved", []string{"u1:handled", "u2:canceled", "u3:canceled"},
			map[string]int{started: 1, evCreated: 1, evHandled: 1, evCanceled: 2, evCompleted: 1}},
		{"handle", []string{"u1:approve"}, "approved", []string{"u1:handled", "u2:canceled", "u3:canceled"},
			map[string]int{started: 1, evCreated: 1, evHandled: 1, evCanceled: 2, evCompleted: 1}},
		{"handle", []string{"u1:reject", "u2:handle"}, "approved", []string{"u1:rejected", "u2:handled", "u3:canceled"},
			map[string]int{started: 1, evCreated: 2, evRejected: 1, evHandled: 1, evCanceled: 1, evCompleted: 1}},
	}
	for _, tt := range rows {
		t.Run(tt.flow+" "+strings.Join(tt.decisions, ","), func(t *testing.T) {
			e := e.sub(t)
			from := e.act()
			id := e.start(applicant, flows[tt.flow], `{}`)
			for _, d := range tt.decisions {
				who, action, _ := strings.Cut(d, ":")
				e.act()
				e.must(e.decide(id, who, action, ""))
			}
			e.wantStatus(id, tt.status, tt.tasks...)
			e.wantEventsSince(id, from, tt.events)
		})
	}
}

// scenarioNodes: each node kind on one walk and the rules around them not covered by
// TestEngineRules — conditions on the applicant built-in and OR'ed groups, a cc node without
// read confirmation passing at once (cc.notified once), a cc node with form_field and role
// recipients, consecutive-approver auto-pass cascading through a sequential node.
func scenarioNodes(t *testing.T, e *eng) {
	t.Run("condition on applicantId and OR'ed groups", func(t *testing.T) {
		e := e.sub(t)
		code := e.flow("ncond", `{"id":"c","kind":"condition","position":{"x":0,"y":0},"data":{"name":"?","branches":[
				{"id":"me","label":"Me","priority":1,"conditionGroups":[{"conditions":[{"kind":"field","subject":"applicantId","operator":"eq","value":"app"},{"kind":"field","subject":"amount","operator":"lt","value":10}]},
					{"conditions":[{"kind":"field","subject":"reason","operator":"starts_with","value":"urgent"}]}]},
				{"id":"d","label":"Other","isDefault":true,"priority":2}]}},`+approvalNode("x", users("ux"))+`,`+approvalNode("y", users("uy")),
			"s>c", "c>x:me", "c>y:d", "x>end", "y>end")
		for _, c := range []struct {
			who  string
			form string
			want string
		}{
			{"app", `{"amount":5}`, "ux"}, {"app", `{"amount":50}`, "uy"}, {"other", `{"amount":5}`, "uy"},
			{"other", `{"amount":50,"reason":"urgent: x"}`, "ux"},
		} {
			e.wantStatus(e.start(user(c.who), code, c.form), "running", c.want+":pending")
		}
	})
	t.Run("cc nodes", func(t *testing.T) {
		e := e.sub(t)
		ctx := t.Context()
		st := e.srv.Security().Store()
		hr, err := st.Create(ctx, "hr1", "HR One", "long-enough-pass-1", []string{"hr"})
		if err != nil {
			t.Fatal(err)
		}
		code := e.flow("ncc", `{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"K","ccs":[{"kind":"form_field","formField":"reason"},{"kind":"role","ids":["hr"]},{"kind":"user","ids":["`+hr.ID+`"]}]}}`+
			`,`+approvalNode("a", users("u1")), "s>k", "k>a", "a>end")
		from := e.act()
		id := e.start(applicant, code, `{"reason":"c1"}`)
		e.wantStatus(id, "running", "u1:pending")
		var ccs []string
		if err := e.srv.DB().NewSelect().Table("apv_cc_record").Column("cc_user_id").Where("instance_id = ?", id).Order("cc_user_id").Scan(ctx, &ccs); err != nil {
			t.Fatal(err)
		}
		if want := []string{"c1", hr.ID}; strings.Join(ccs, ",") != strings.Join(want, ",") && strings.Join(ccs, ",") != want[1]+","+want[0] {
			t.Errorf("cc recipients %v, want c1 (form field) and hr1 (role and user, once)", ccs)
		}
		e.wantEventsSince(id, from, map[string]int{approval.EventInstanceCreated: 1, approval.EventCCNotified: 1, evCreated: 1})
	})
	t.Run("consecutive approver cascades through a sequential node", func(t *testing.T) {
		e := e.sub(t)
		code := e.flow("ncons", approvalNode("a", users("u2", "u3"))+`,`+
			approvalNode("b", users("u2", "u3", "u4")+`,"approvalMethod":"sequential","consecutiveApproverAction":"auto_pass"`), "s>a", "a>b", "b>end")
		id := e.start(applicant, code, `{}`)
		e.must(e.decide(id, "u2", "approve", ""))
		from := e.act()
		e.must(e.decide(id, "u3", "approve", ""))
		e.wantStatus(id, "running", "u2:approved", "u3:approved", "u2:approved", "u3:approved", "u4:pending")
		e.wantEventsSince(id, from, map[string]int{evApproved: 3, evCreated: 3})
		e.must(e.decide(id, "u4", "approve", ""))
		e.wantStatus(id, "approved")
	})
}
