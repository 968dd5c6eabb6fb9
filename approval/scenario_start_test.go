package approval_test

import (
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/security"
)

// scenarioStart: the start refusals of wire-approval §8 not covered elsewhere — an inactive
// flow (40002, while its running instances go on), a flow with nothing published (40003) —
// and the initiation rule (40103) with initiators by user, role and department; a resubmit with
// invalid form data (40401) leaves the instance where it was.
func scenarioStart(t *testing.T, e *eng) {
	ctx := t.Context()
	bare := e.ok(alice, flowR, "create", `{"tenantId":"t1","code":"sbare","name":"Bare","categoryId":"`+e.cat+`","bindingMode":"standalone","isAllInitiationAllowed":true}`)["id"].(string)
	e.refused(approval.ErrCodeFlowNotActive, applicant, instR, "start", `{"tenantId":"t1","flowCode":"sbare","formData":{"amount":1}}`)
	e.ok(alice, flowR, "toggle_active", `{"flowId":"`+bare+`","isActive":true}`)
	e.refused(approval.ErrCodeNoPublishedVersion, applicant, instR, "start", `{"tenantId":"t1","flowCode":"sbare","formData":{"amount":1}}`)

	code := e.flow("sact", approvalNode("a", users("u1")), "s>a", "a>end")
	id := e.start(applicant, code, `{}`)
	e.ok(alice, flowR, "toggle_active", `{"flowId":"`+e.flowID(code)+`","isActive":false}`)
	e.refused(approval.ErrCodeFlowNotActive, applicant, instR, "start", `{"tenantId":"t1","flowCode":"sact","formData":{"amount":1}}`)
	e.must(e.decide(id, "u1", "approve", ""))
	e.wantStatus(id, "approved")

	st := e.srv.Security().Store()
	member, err := st.Create(ctx, "member", "Member", "long-enough-pass-1", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	dir := security.NewDirectory(e.srv.DB(), nil)
	dept, err := dir.AddDepartment(ctx, "ops", "Ops", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.SetUserDepartment(ctx, member.ID, "ops"); err != nil {
		t.Fatal(err)
	}
	gated := e.flow("sgate", approvalNode("a", users("u1")), "s>a", "a>end")
	e.ok(alice, flowR, "update", `{"flowId":"`+e.flowID(gated)+`","name":"Gated","bindingMode":"standalone","instanceTitleTemplate":"{{.flowName}}","isAllInitiationAllowed":false,
			"initiators":[{"kind":"user","ids":["app"]},{"kind":"role","ids":["starter"]},{"kind":"department","ids":["`+dept.ID+`"]}]}`)
	for _, c := range []struct {
		name string
		as   string
		code int
	}{
		{"listed user", "app", 0}, {"role", "starter", 0}, {"department", member.ID, 0}, {"anyone else", "u7", approval.ErrCodeNotAllowedInitiate},
	} {
		p := user(c.as)
		if c.name == "role" {
			p = tenantUser("u8", "t1", "admin", "starter")
		}
		if r := e.call(p, instR, "start", `{"tenantId":"t1","flowCode":"sgate","formData":{"amount":1}}`); r.Code != c.code {
			t.Errorf("%s: code %d (%s), want %d", c.name, r.Code, r.Message, c.code)
		}
	}

	id = e.start(applicant, gated, `{}`)
	e.ok(applicant, instR, "withdraw", `{"instanceId":"`+id+`"}`)
	e.refused(approval.ErrCodeFormValidationFailed, applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"amount":"many"}}`)
	e.refused(approval.ErrCodeNotApplicant, user("u1"), instR, "resubmit", `{"instanceId":"`+id+`"}`)
	e.wantStatus(id, "withdrawn", "u1:canceled")
}
