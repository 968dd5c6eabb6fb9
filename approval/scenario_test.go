package approval_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// The scenario suite (issue #23's acceptance) plays the state tables of wire-approval §7 and
// the runtime rules of §8 through /api in the original client's shapes: TestScenarios runs its
// groups as sequential subtests on one server per database kind (TestScenarioTimeouts has its
// own). Every server runs on a
// fake clock that each act advances by a second, so the events an act causes are told apart by
// their occurredTime and counted exactly (see eventsSince).

// scenarioEpoch is where the scenario clocks start (UTC, whole seconds: every dialect stores it
// exactly).
var scenarioEpoch = time.Date(2030, 6, 15, 9, 0, 0, 0, time.UTC)

// newScenario is newEng on a fake clock at scenarioEpoch, with cfg applied to the config.
func newScenario(t *testing.T, kind config.DBKind, cfg func(*config.Config)) *eng {
	t.Helper()
	opts := []svctest.Option{svctest.WithClock(svctest.NewClock(scenarioEpoch))}
	if cfg != nil {
		opts = append(opts, svctest.WithConfig(cfg))
	}
	return newEng(t, kind, opts...)
}

// TestScenarios runs the scenario groups in order on one server per database kind (their
// flows, people and instances are their own; delegation_max_depth is 3 for scenarioAssignees).
// The timeout scenarios have a server of their own: their scans and days-long clock moves see
// every instance of a server.
func TestScenarios(t *testing.T) {
	groups := []struct {
		name string
		fn   func(t *testing.T, e *eng)
	}{
		{"instance transitions", scenarioInstanceTransitions}, {"task transitions", scenarioTaskTransitions},
		{"pass rules", scenarioPassRules}, {"nodes", scenarioNodes}, {"assignees", scenarioAssignees},
		{"add and remove", scenarioAddRemove}, {"rollback", scenarioRollback}, {"start", scenarioStart},
		{"access", scenarioAccess}, {"event payloads", scenarioEventPayloads},
	}
	eachScenario(t, func(c *config.Config) { c.Approval.DelegationMaxDepth = 3 }, func(t *testing.T, e *eng) {
		for _, g := range groups {
			t.Run(g.name, func(t *testing.T) { g.fn(t, e.sub(t)) })
		}
	})
}

// eachScenario runs fn in parallel on a new scenario server (newScenario with cfg) per database
// kind.
func eachScenario(t *testing.T, cfg func(*config.Config), fn func(t *testing.T, e *eng)) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		fn(t, newScenario(t, kind, cfg))
	})
}

// sub is e reporting to the subtest t.
func (e *eng) sub(t *testing.T) *eng {
	c := *e
	c.t = t
	return &c
}

// act advances the clock by a second and returns the new instant: the events of what follows
// carry it (or later) as occurredTime.
func (e *eng) act() time.Time {
	e.srv.Clock.Advance(time.Second)
	return e.srv.Clock.Now().UTC()
}

// since counts the events of instance id that occurred at or after from, by type.
func (r *evRecorder) since(id string, from time.Time) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for i, typ := range r.types {
		if r.events[i].InstanceID == id && !r.events[i].OccurredTime.Before(from) {
			out[typ]++
		}
	}
	return out
}

// wantEventsSince checks that the events of instance id from instant from are exactly want
// (type → count): every transition's event once, nothing else. Delivery after the commit may
// trail the answer, so it waits (bounded) until as many have arrived.
func (e *eng) wantEventsSince(id string, from time.Time, want map[string]int) {
	e.t.Helper()
	total := 0
	for _, n := range want {
		total += n
	}
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	var got map[string]int
	svctest.Eventually(e.t, 3*time.Second, func() bool { got = e.rec.since(id, from); return sum(got) >= total },
		fmt.Sprintf("events of %s: want %v", id, sorted(want)))
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
		e.t.Errorf("events = %v, want %v", sorted(got), sorted(want))
	}
}

// sorted renders a count map in key order, zero counts left out.
func sorted(m map[string]int) []string {
	var out []string
	for k, v := range m {
		if v != 0 {
			out = append(out, fmt.Sprintf("%s×%d", strings.TrimPrefix(k, "approval."), v))
		}
	}
	sort.Strings(out)
	return out
}

// nodeIDs maps the designer keys of flow code's published nodes to their persistent ids (what
// rollback's targetNodeId carries).
func (e *eng) nodeIDs(code string) map[string]string {
	e.t.Helper()
	var nodes []approval.Node
	if err := e.srv.DB().NewSelect().Model(&nodes).Join("JOIN apv_flow_version AS v ON v.id = node.flow_version_id").
		Join("JOIN apv_flow AS f ON f.id = v.flow_id").Where("f.code = ?", code).Where("v.status = ?", approval.VersionPublished).
		Scan(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Key] = n.ID
	}
	return out
}

// column reads one column of instance id ("" for NULL).
func (e *eng) column(id, col string) string {
	e.t.Helper()
	var v *string
	if err := e.srv.DB().NewSelect().Table("apv_instance").Column(col).Where("id = ?", id).Scan(context.Background(), &v); err != nil {
		e.t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return *v
}

// taskOf is the id of assignee's most recent task on the instance, whatever its status.
func (e *eng) taskOf(id, assignee string) string {
	e.t.Helper()
	var tid string
	if err := e.srv.DB().NewSelect().Table("apv_task").Column("id").Where("instance_id = ?", id).Where("assignee_id = ?", assignee).
		OrderExpr("created_at DESC").Limit(1).Scan(context.Background(), &tid); err != nil {
		e.t.Fatalf("no task of %s on %s: %v (tasks %v)", assignee, id, err, e.tasks(id))
	}
	return tid
}

// taskParams is process_task's params for taskID with action and extra JSON fields.
func taskParams(taskID, action, extra string) string {
	return `{"taskId":"` + taskID + `","action":"` + action + `"` + extra + `}`
}

// delegation creates an active delegation from → to in [starts, ends) with an optional scope
// (`,"flowId":"…"` or `,"flowCategoryId":"…"`), as the super-admin.
func (e *eng) delegation(from, to, starts, ends, scope string) {
	e.t.Helper()
	e.ok(root, delR, "create", `{"delegatorId":"`+from+`","delegateeId":"`+to+`","startsAt":"`+starts+`","endsAt":"`+ends+`","isActive":true`+scope+`}`)
}
