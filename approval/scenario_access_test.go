package approval_test

import (
	"strings"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/rpc"
)

// scenarioAccess gives every engine command (approval/instance and the engine's
// approval/admin commands) its access rows: a caller without the permission (1100), a caller
// of another tenant (the instance or task is not found), a caller whose details name no tenant
// (40701), an unknown id, and the params limits of §6.4 (400/1400). Nothing of the instance
// moves.
func scenarioAccess(t *testing.T, e *eng) {
	code := e.flow("acc", approvalNode("a", users("u1", "u2")), "s>a", "a>end")
	id := e.start(applicant, code, `{}`)
	task := e.task(id, "u1")
	noRights, stranger := tenantUser("u1", "t1", "nothing"), tenantUser("u1", "t2", "admin")
	many := func(n int, s string) string { return `["` + strings.Repeat(s+`","`, n-1) + s + `"]` }
	type row struct {
		resource, action, params string
		instanceLevel            bool
	}
	ops := []row{
		{instR, "process_task", `{"taskId":"$t","action":"approve"}`, false},
		{instR, "withdraw", `{"instanceId":"$i"}`, true},
		{instR, "resubmit", `{"instanceId":"$i"}`, true},
		{instR, "add_cc", `{"instanceId":"$i","ccUserIds":["x"]}`, true},
		{instR, "mark_cc_read", `{"instanceId":"$i"}`, true},
		{instR, "add_assignee", `{"taskId":"$t","addType":"parallel","userIds":["x"]}`, false},
		{instR, "remove_assignee", `{"taskId":"$t"}`, false},
		{instR, "urge_task", `{"taskId":"$t"}`, false},
		{"approval/admin", "terminate_instance", `{"instanceId":"$i"}`, true},
		{"approval/admin", "reassign_task", `{"taskId":"$t","newAssigneeId":"x"}`, false},
	}
	fill := func(p, inst, tk string) string { return strings.NewReplacer("$i", inst, "$t", tk).Replace(p) }
	for _, op := range ops {
		t.Run(op.action, func(t *testing.T) {
			e := e.sub(t)
			notFound := approval.ErrCodeTaskNotFound
			if op.instanceLevel {
				notFound = approval.ErrCodeInstanceNotFound
			}
			e.refused(rpc.CodeAccessDenied, noRights, op.resource, op.action, fill(op.params, id, task))
			e.refused(notFound, stranger, op.resource, op.action, fill(op.params, id, task))
			e.refused(approval.ErrCodeAccessDenied, broken, op.resource, op.action, fill(op.params, id, task))
			e.refused(notFound, alice, op.resource, op.action, fill(op.params, "nope", "nope"))
			e.refused(rpc.CodeBadRequest, alice, op.resource, op.action, `{}`)
		})
	}
	t.Run("limits", func(t *testing.T) {
		e := e.sub(t)
		long := func(n int) string { return strings.Repeat("x", n) }
		for _, c := range []struct{ resource, action, params string }{
			{instR, "process_task", `{"taskId":"` + task + `","action":"approve","opinion":"` + long(2001) + `"}`},
			{instR, "process_task", `{"taskId":"` + task + `","action":"approve","attachments":` + many(21, "f") + `}`},
			{instR, "process_task", `{"taskId":"` + task + `","action":"approve","attachments":["` + long(513) + `"]}`},
			{instR, "withdraw", `{"instanceId":"` + id + `","reason":"` + long(2001) + `"}`},
			{instR, "add_cc", `{"instanceId":"` + id + `","ccUserIds":[]}`},
			{instR, "add_cc", `{"instanceId":"` + id + `","ccUserIds":` + many(51, "c") + `}`},
			{instR, "add_assignee", `{"taskId":"` + task + `","addType":"parallel","userIds":` + many(51, "a") + `}`},
			{instR, "add_assignee", `{"taskId":"` + task + `","userIds":["a"]}`},
			{instR, "urge_task", `{"taskId":"` + task + `","message":"` + long(501) + `"}`},
			{instR, "start", `{"tenantId":"t1","flowCode":"acc","businessRef":"` + long(513) + `"}`},
			{"approval/admin", "terminate_instance", `{"instanceId":"` + id + `","reason":"` + long(2001) + `"}`},
			{"approval/admin", "reassign_task", `{"taskId":"` + task + `","newAssigneeId":"  "}`},
		} {
			e.refused(rpc.CodeBadRequest, user("u1"), c.resource, c.action, c.params)
		}
		e.wantStatus(id, "running", "u1:pending", "u2:pending")
	})
}
