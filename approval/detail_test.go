package approval_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

var updateGolden = flag.Bool("update", false, "rewrite the testdata/*.golden.json files from the SQLite run")

const (
	resMy    = "approval/my"
	resAdmin = "approval/admin"
)

// detailFlow is the flow of the golden tests: start → A (u1, u2 in parallel, all must approve;
// transfer, add/remove assignee, rollback to any earlier node clearing the data, manual CC;
// reason editable, items hidden; u9 copied on approval) → amount > 100 ? B (u3; rollback to
// any earlier node keeping the data, opinion required, amount required) → H (handle by u10) :
// end.
func detailFlow(e *eng) string {
	return e.flow("gold", approvalNode("a", users("u1", "u2")+`,"isTransferAllowed":true,"isAddAssigneeAllowed":true,"addAssigneeTypes":["before","after","parallel"],`+
		`"isRemoveAssigneeAllowed":true,"isRollbackAllowed":true,"rollbackType":"any","rollbackDataStrategy":"clear","isManualCcAllowed":true,`+
		`"fieldPermissions":{"reason":"editable","items":"hidden"},"ccs":[{"kind":"user","ids":["u9"],"timing":"on_approve"}]`)+
		`,{"id":"c","kind":"condition","position":{"x":10,"y":20},"data":{"name":"Big?","branches":[
			{"id":"big","label":"Big","priority":1,"conditionGroups":[{"conditions":[{"kind":"field","subject":"amount","operator":"gt","value":100}]}]},
			{"id":"d","label":"Other","isDefault":true,"priority":2}]}}`+
		`,{"id":"b","kind":"approval","position":{"x":30,"y":40},"data":{"name":"B"`+users("u3")+`,"isRollbackAllowed":true,"rollbackType":"any","rollbackDataStrategy":"keep","isOpinionRequired":true,"fieldPermissions":{"amount":"required"}}}`+
		`,{"id":"h","kind":"handle","position":{"x":50,"y":60},"data":{"name":"H"`+users("u10")+`}}`,
		"s>a", "a>c", "c>b:big", "c>end:d", "b>h", "h>end")
}

// detailCase takes a fresh instance of detailFlow through a story; viewers are the users whose
// my.get_instance_detail the golden records.
type detailCase struct {
	name    string
	story   func(e *eng, id string)
	viewers []string
}

// detailCases are the stories of issue #24's acceptance: approve, reject, transfer,
// add-assignee, rollback keeping and clearing the data, withdraw and resubmit, terminate.
func detailCases() []detailCase {
	return []detailCase{
		{"approve", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u1", "approve", `,"opinion":"ok","attachments":["f1.pdf"],"formData":{"reason":"trip 2"}`))
			e.detailStep(e.decide(id, "u2", "approve", ""))
			e.detailStep(e.decide(id, "u3", "approve", `,"opinion":"fine","formData":{"amount":600}`))
			e.detailStep(e.decide(id, "u10", "handle", `,"opinion":"paid"`))
		}, []string{"app", "u1", "u3", "u9", "u10"}},
		{"reject", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u2", "reject", `,"opinion":"no"`))
		}, []string{"app", "u1", "u2"}},
		{"transfer", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u1", "transfer", `,"transferToId":"u4","opinion":"away"`))
			e.detailStep(e.call(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u4")+`","message":"please"}`))
		}, []string{"app", "u1", "u4"}},
		{"add_assignee", func(e *eng, id string) {
			e.detailStep(e.call(user("u1"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u1")+`","userIds":["u5"],"addType":"before"}`))
			e.detailStep(e.call(user("u2"), instR, "add_assignee", `{"taskId":"`+e.task(id, "u2")+`","userIds":["u6"],"addType":"parallel"}`))
			e.detailStep(e.call(user("u2"), instR, "remove_assignee", `{"taskId":"`+e.task(id, "u6")+`"}`))
		}, []string{"app", "u1", "u2", "u5"}},
		{"rollback_keep", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u1", "approve", `,"formData":{"reason":"changed at A"}`))
			e.detailStep(e.decide(id, "u2", "approve", ""))
			e.detailStep(e.decide(id, "u3", "rollback", `,"targetNodeId":"`+e.versionNode(id, "a")+`","opinion":"redo"`))
		}, []string{"app", "u1", "u3"}},
		{"rollback_clear", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u2", "approve", ""))
			e.detailStep(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+e.versionNode(id, "s")+`","opinion":"start over"`))
		}, []string{"app", "u1", "u2"}},
		{"withdraw_resubmit", func(e *eng, id string) {
			e.detailStep(e.call(applicant, instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["u7"]}`))
			e.detailStep(e.call(applicant, instR, "withdraw", `{"instanceId":"`+id+`","reason":"oops"}`))
			e.detailStep(e.call(applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"amount":50}}`))
			e.detailStep(e.decide(id, "u1", "approve", ""))
			e.detailStep(e.decide(id, "u2", "approve", ""))
		}, []string{"app", "u1", "u7"}},
		{"terminate", func(e *eng, id string) {
			e.detailStep(e.decide(id, "u1", "approve", ""))
			e.detailStep(e.call(alice, resAdmin, "terminate_instance", `{"instanceId":"`+id+`","reason":"stop"}`))
		}, []string{"app", "u2"}},
	}
}

// detailStep fails the test unless r succeeded, then lets a minute pass (stable, distinct times).
func (e *eng) detailStep(r svctest.Response) {
	e.t.Helper()
	e.must(r)
	e.srv.Clock.Advance(time.Minute)
}

// versionNode is the persistent id of designer node key in the instance's version.
func (e *eng) versionNode(instanceID, key string) string {
	e.t.Helper()
	var id string
	err := e.srv.DB().NewSelect().Table("apv_flow_node").Column("id").Where("? = ?", bun.Ident("key"), key).
		Where("flow_version_id = (SELECT flow_version_id FROM apv_instance WHERE id = ?)", instanceID).Scan(e.t.Context(), &id)
	if err != nil {
		e.t.Fatalf("node %s: %v", key, err)
	}
	return id
}

// goldenForm is the form every golden instance starts with.
const goldenForm = `{"amount":500,"reason":"trip","items":[{"desc":"taxi","price":12.5}]}`

// TestDetailGolden takes instances through the stories of detailCases on the three databases
// and compares admin.get_instance_detail and each viewer's my.get_instance_detail with
// testdata/detail_<story>.golden.json (ids, instance numbers and times replaced by placeholders
// in order of first appearance; the same file for every dialect). -update rewrites the files
// from the SQLite run.
func TestDetailGolden(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind, svctest.WithClock(svctest.NewClock(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))))
		code := detailFlow(e)
		for _, c := range detailCases() {
			id := e.start(applicant, code, goldenForm)
			e.srv.Clock.Advance(time.Minute)
			c.story(e, id)
			doc := map[string]json.RawMessage{"admin": e.okData(alice, resAdmin, "get_instance_detail", `{"instanceId":"`+id+`"}`)}
			for _, v := range c.viewers {
				doc["my:"+v] = e.okData(user(v), resMy, "get_instance_detail", `{"instanceId":"`+id+`"}`)
			}
			compareGolden(t, kind, "detail_"+c.name, doc)
		}
	})
}

// okData calls and fails the test unless the answer is code 0; it returns the data.
func (e *eng) okData(p *rpc.Principal, resource, action, params string) json.RawMessage {
	e.t.Helper()
	r := e.call(p, resource, action, params)
	if r.Code != 0 {
		e.t.Fatalf("%s.%s %s as %s: code %d %s", resource, action, params, p.ID, r.Code, r.Message)
	}
	return r.Data
}

// goldenVolatile matches what differs between runs: UUIDs, instance numbers and wire times.
var goldenVolatile = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Z0-9_]+-\d{14}-[0-9a-f]{8}|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}`)

// normaliseGolden indents doc and replaces each distinct goldenVolatile value by a placeholder numbered in
// order of first appearance (<id1>, <no1>, <time1>, ...).
func normaliseGolden(t *testing.T, doc any) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var generic any // PostgreSQL's jsonb reorders stored documents (formSchema): sort every object's keys
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	if b, err = json.MarshalIndent(generic, "", "  "); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	counts := map[string]int{}
	return append(goldenVolatile.ReplaceAllFunc(b, func(m []byte) []byte {
		if p, ok := seen[string(m)]; ok {
			return []byte(p)
		}
		kind := "id"
		switch {
		case bytes.Contains(m, []byte(" ")):
			kind = "time"
		case bytes.Count(m, []byte("-")) == 2:
			kind = "no"
		}
		counts[kind]++
		p := fmt.Sprintf("<%s%d>", kind, counts[kind])
		seen[string(m)] = p
		return []byte(p)
	}), '\n')
}

// compareGolden compares doc with testdata/name.golden.json (rewritten from SQLite by -update).
func compareGolden(t *testing.T, kind config.DBKind, name string, doc any) {
	t.Helper()
	got := normaliseGolden(t, doc)
	path := filepath.Join("testdata", name+".golden.json")
	if *updateGolden && kind == config.SQLite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test -run TestDetailGolden -update)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs on %s (-want +got):\n%s", path, kind, cmp.Diff(string(want), string(got)))
	}
}

// TestDetailAccess: who may read a detail (a bearer token; the applicant, a task holder, a CC
// recipient; 40701 for anyone else; 40101 across tenants and for unknown ids), the admin
// permission, and the viewer-scoped form data.
func TestDetailAccess(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		id := e.start(applicant, detailFlow(e), goldenForm)
		params := `{"instanceId":"` + id + `"}`
		e.refused(approval.ErrCodeAccessDenied, user("u8"), resMy, "get_instance_detail", params)
		e.refused(approval.ErrCodeInstanceNotFound, tenantUser("u1", "t2", "admin"), resMy, "get_instance_detail", params)
		e.refused(approval.ErrCodeInstanceNotFound, user("u1"), resMy, "get_instance_detail", `{"instanceId":"nope"}`)
		e.refused(rpc.CodeBadRequest, user("u1"), resMy, "get_instance_detail", `{}`)
		e.refused(rpc.CodeAccessDenied, tenantUser("vic", "t1", "viewer"), resAdmin, "get_instance_detail", params)
		e.refused(approval.ErrCodeInstanceNotFound, tenantUser("bob", "t2", "admin"), resAdmin, "get_instance_detail", params)
		for _, res := range []string{resMy, resAdmin} {
			if r := e.srv.Call(t, res, "get_instance_detail", map[string]any{"instanceId": id}); r.Code != rpc.CodeUnauthenticated {
				t.Errorf("%s without a token: code %d, want %d", res, r.Code, rpc.CodeUnauthenticated)
			}
		}
		e.ok(applicant, resMy, "get_instance_detail", params)
		e.ok(user("u1"), instR, "add_cc", `{"instanceId":"`+id+`","ccUserIds":["u7"]}`)
		u7 := e.ok(user("u7"), resMy, "get_instance_detail", params) // a CC recipient reads, acts on nothing
		if fmt.Sprint(u7["availableActions"]) != "[]" || u7["myTask"] != nil {
			t.Errorf("u7 (CC only): availableActions %v, myTask %v", u7["availableActions"], u7["myTask"])
		}
		u1 := e.ok(user("u1"), resMy, "get_instance_detail", params)
		want := map[string]any{"amount": "visible", "reason": "editable", "items": "hidden"}
		if got := u1["fieldPermissions"]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("u1 fieldPermissions = %v, want %v", got, want)
		}
		if form := u1["instance"].(map[string]any)["formData"].(map[string]any); form["items"] != nil || form["reason"] != "trip" {
			t.Errorf("u1 formData = %v, want items stripped", form)
		}
		admin := e.ok(root, resAdmin, "get_instance_detail", params)
		if form := admin["instance"].(map[string]any)["formData"].(map[string]any); form["items"] == nil {
			t.Errorf("admin formData = %v, want unfiltered", form)
		}
	})
}

// TestDetailStatements holds the detail's query bound (docs/approval.md, Reference, "Query bounds"): both details
// answer in approval.DetailStatements statements whatever the number of visits, tasks, logs and
// CC records, once the version's graph is cached.
func TestDetailStatements(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		c := &stmtCounter{}
		e := newEng(t, kind, svctest.WithQueryHook(c), svctest.WithConfig(func(cfg *config.Config) {
			cfg.Approval.TimeoutScanInterval, cfg.Approval.PreWarningScanInterval = 24*time.Hour, 24*time.Hour
			cfg.Approval.BusinessBinding.ScanInterval = 24 * time.Hour // its scans read apv_* too
		}))
		code := detailFlow(e)
		short := e.start(applicant, code, goldenForm)
		long := e.start(applicant, code, goldenForm)
		for range 5 { // every round adds visits of A and B, tasks, logs and CC records
			e.must(e.decide(long, "u1", "approve", ""))
			e.must(e.decide(long, "u2", "approve", ""))
			e.must(e.decide(long, "u3", "rollback", `,"targetNodeId":"`+e.versionNode(long, "a")+`","opinion":"again"`))
		}
		for _, id := range []string{short, long} {
			params := `{"instanceId":"` + id + `"}`
			for _, call := range []struct {
				as       *rpc.Principal
				resource string
			}{{user("u1"), resMy}, {alice, resAdmin}} {
				n := len(c.measure(func() { e.ok(call.as, call.resource, "get_instance_detail", params) }))
				if n != approval.DetailStatements {
					t.Errorf("%s.get_instance_detail ran %d statements, want %d", call.resource, n, approval.DetailStatements)
				}
			}
		}
	})
}
