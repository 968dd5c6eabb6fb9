package approval_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestHistoryIgnoresClocks: an instance's history follows the order of its commands, not the
// clock readings they carry (issue #45: one node's clock off). Every command runs an hour
// earlier than the one before; find_action_logs, the detail's timeline (its activities and the
// withdraw milestone) and the form a keep rollback restores (the target's latest snapshot)
// still follow the command order.
func TestHistoryIgnoresClocks(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		clock := svctest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
		e := newEng(t, kind, svctest.WithClock(clock))
		code := e.flow("skew", approvalNode("a", users("u1")+`,"fieldPermissions":{"reason":"editable"}`)+`,`+
			approvalNode("b", users("u2")+`,"rollbackType":"any","rollbackDataStrategy":"keep"`), "s>a", "a>b", "b>end")
		node := nodeIDs(t, e, code)
		back := func() { clock.Advance(-time.Hour) }

		id := e.start(applicant, code, `{"reason":"first"}`) // a's first snapshot: "first"
		back()
		e.must(e.decide(id, "u1", "approve", `,"formData":{"reason":"by u1"}`))
		back()
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+node["s"]+`","opinion":"to start"`))
		back()
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"reason":"again"}}`) // a's second snapshot: "again"
		back()
		e.must(e.decide(id, "u1", "approve", `,"formData":{"reason":"by u1 again"}`))
		back()
		e.must(e.decide(id, "u2", "rollback", `,"targetNodeId":"`+node["a"]+`","opinion":"to a"`))
		if form := e.column(id, "form_data"); !strings.Contains(form, `"again"`) {
			t.Errorf("keep rollback restored %s, want a's latest snapshot (reason again)", form)
		}
		back()
		e.ok(applicant, instR, "withdraw", `{"instanceId":"`+id+`","reason":"done"}`)

		want := "submit,approve,rollback,resubmit,approve,rollback,withdraw"
		var logs struct {
			Items []struct {
				Action string `json:"action"`
			} `json:"items"`
		}
		if err := json.Unmarshal(e.okData(alice, resAdmin, "find_action_logs", `{"instanceId":"`+id+`"}`), &logs); err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(logs.Items))
		for i, l := range logs.Items {
			got[i] = l.Action
		}
		if strings.Join(got, ",") != want {
			t.Errorf("find_action_logs = %v, want %s", got, want)
		}

		// The timeline: visits in sequence, each with its activities, the withdraw milestone
		// after the round it ended.
		var detail struct {
			Timeline []struct {
				Kind         string  `json:"kind"`
				NodeID       *string `json:"nodeId"`
				Participants []struct {
					Status string `json:"status"`
				} `json:"participants"`
				Activities []struct {
					Action string `json:"action"`
				} `json:"activities"`
			} `json:"timeline"`
		}
		if err := json.Unmarshal(e.okData(alice, resAdmin, "get_instance_detail", `{"instanceId":"`+id+`"}`), &detail); err != nil {
			t.Fatal(err)
		}
		names := map[string]string{}
		for k, v := range node {
			names[v] = k
		}
		var path []string
		for _, en := range detail.Timeline {
			s := en.Kind
			if en.NodeID != nil {
				s = names[*en.NodeID]
			}
			for _, p := range en.Participants {
				s += ":" + p.Status
			}
			for _, a := range en.Activities {
				s += "+" + a.Action
			}
			path = append(path, s)
		}
		wantPath := "s+submit a:approved b:rolled_back+rollback s+resubmit a:approved b:rolled_back+rollback a:canceled withdraw+withdraw"
		if strings.Join(path, " ") != wantPath {
			t.Errorf("timeline = %s\nwant       %s", strings.Join(path, " "), wantPath)
		}
		e.wantEvents(id, approval.EventInstanceWithdrawn, 1)
	})
}
