package approval_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// designReport is validate_design's answer as the console reads it.
type designReport struct {
	Problems []struct {
		Rule, NodeID, BranchID, EdgeID, Field, Message string
	} `json:"problems"`
	FormFields []struct{ Key string } `json:"formFields"`
}

// TestValidateDesign: svc's own approval/flow validate_design reports every rule deploy
// refuses (each ruleCase names its rule), reports nothing for what deploy accepts, answers a
// broken form document as a problem, needs approval.flow.deploy and writes nothing.
func TestValidateDesign(t *testing.T) {
	t.Parallel()
	srv := newFlowServer(t, config.SQLite, &recorder{})
	validate := func(def any, form string) (designReport, int) {
		t.Helper()
		b, _ := json.Marshal(def)
		var p any
		if err := json.Unmarshal([]byte(`{"flowDefinition":`+string(b)+`,"formSchema":`+form+`}`), &p); err != nil {
			t.Fatal(err)
		}
		r := srv.Call(t, flowR, "validate_design", p, svctest.As(alice))
		var rep designReport
		if r.Code == 0 {
			if err := json.Unmarshal(r.Data, &rep); err != nil {
				t.Fatal(err)
			}
		}
		return rep, r.Code
	}
	rep, code := validate(baseFlow(), formDoc)
	if code != 0 || len(rep.Problems) != 0 || len(rep.FormFields) != 3 {
		t.Fatalf("valid flow: code %d, report %+v; want no problems and 3 form fields", code, rep)
	}
	for _, rc := range ruleCases {
		d := baseFlow()
		rc.mutate(d)
		rep, code := validate(d, formDoc)
		found := false
		for _, p := range rep.Problems {
			found = found || (p.Rule == rc.rule && p.Message != "" && !strings.HasPrefix(p.Message, "approval_design_"))
		}
		if code != 0 || !found {
			t.Errorf("rule %s: code %d, problems %+v; want the rule with its text", rc.rule, code, rep.Problems)
		}
	}
	// a rule on a node names the node (the designer marks it there)
	d := baseFlow()
	dataOf(d, "a")["passRule"] = "ratio"
	dataOf(d, "a")["passRatio"] = 0
	if rep, _ := validate(d, formDoc); len(rep.Problems) != 1 || rep.Problems[0].NodeID != "a" || rep.Problems[0].Rule != "pass_ratio_range" {
		t.Errorf("pass ratio 0: problems %+v, want pass_ratio_range at node a", rep.Problems)
	}
	if rep, code := validate(baseFlow(), `{"version":2,"presentations":{"pc":{"children":[{"id":"X","type":"switch","key":"ok","label":"OK"}]}}}`); code != 0 || len(rep.Problems) != 1 || rep.Problems[0].Rule == "" {
		t.Errorf("switch widget: code %d, problems %+v; want one form problem", code, rep.Problems)
	}
	r := srv.Call(t, flowR, "validate_design", map[string]any{"flowDefinition": baseFlow()}, svctest.As(viewer))
	if r.Code != rpc.CodeAccessDenied {
		t.Errorf("viewer: code %d, want %d", r.Code, rpc.CodeAccessDenied)
	}
	if r := srv.Call(t, flowR, "validate_design", map[string]any{}, svctest.As(alice)); r.Code != rpc.CodeBadRequest {
		t.Errorf("no flowDefinition: code %d, want %d", r.Code, rpc.CodeBadRequest)
	}
	n, err := srv.DB().NewSelect().Table("apv_flow_version").Count(context.Background())
	if err != nil || n != 0 {
		t.Errorf("versions after validate_design = %d %v, want 0", n, err)
	}
}

// designerFixture is the parity fixture: a flow definition and form document in the shape the
// original's designer saves (every node kind, every assignee kind, string passRatio, an edge
// with data), shared with the console's round-trip test (console/web/src/designer).
func designerFixture(t *testing.T) (def map[string]any, form json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile("testdata/designer_flow.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		FlowDefinition map[string]any `json:"flowDefinition"`
		FormSchema     json.RawMessage
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.FlowDefinition, f.FormSchema
}

// TestDesignerFixtureEditedAtOneNode: the parity fixture deploys as it is, and edited at one
// node (what the console's designer sends after changing node a2) deploys into a version whose
// stored definition differs from the fixture at that node only, on every database.
func TestDesignerFixtureEditedAtOneNode(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newFlowServer(t, kind, &recorder{})
		ids := map[string]string{}
		run(t, srv, []step{
			{name: "cat", resource: catR, action: "create", params: `{"tenantId":"t1","code":"c","name":"C","sortOrder":0,"isActive":true}`},
			{name: "flow", resource: flowR, action: "create", params: `{"tenantId":"t1","code":"fx","name":"Fixture","categoryId":"$cat$","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`},
		}, ids)
		deploy := func(def map[string]any, form json.RawMessage) map[string]any {
			t.Helper()
			r := srv.Call(t, flowR, "deploy", map[string]any{"flowId": ids["flow"], "flowDefinition": def, "formSchema": form}, svctest.As(alice))
			if r.Code != 0 {
				t.Fatalf("deploy: %d %s", r.Code, r.Message)
			}
			var v struct {
				FlowSchema map[string]any `json:"flowSchema"`
			}
			if err := json.Unmarshal(r.Data, &v); err != nil {
				t.Fatal(err)
			}
			return v.FlowSchema
		}
		orig, form := designerFixture(t)
		if got := deploy(orig, form); !reflect.DeepEqual(got, orig) {
			t.Fatalf("stored definition differs from the fixture:\n got %v\nwant %v", got, orig)
		}
		edited, _ := designerFixture(t)
		dataOf(edited, "a2")["passRule"] = "all"
		dataOf(edited, "a2")["timeoutHours"] = float64(12)
		stored := deploy(edited, form)
		var changed []string
		for i, n := range stored["nodes"].([]any) {
			if !reflect.DeepEqual(n, orig["nodes"].([]any)[i]) {
				changed = append(changed, n.(map[string]any)["id"].(string))
			}
		}
		if strings.Join(changed, ",") != "a2" || !reflect.DeepEqual(stored["edges"], orig["edges"]) || len(stored) != len(orig) {
			t.Errorf("changed nodes = %v (edges equal %v); want only a2", changed, reflect.DeepEqual(stored["edges"], orig["edges"]))
		}
		if got := dataOf(stored, "a2")["passRule"]; got != "all" {
			t.Errorf("a2 passRule = %v, want all", got)
		}
	})
}
