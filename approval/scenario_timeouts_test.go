package approval_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// TestScenarioTimeouts drives the scanners of wire-approval §8 on the fake clock: every
// timeout action (none, notify, auto_pass on approval and handle nodes, auto_reject,
// transfer_admin with and without an eligible admin), the deadline of a sequential task counted
// from its activation, pre-warnings (the window, hoursLeft, once per task, never after the
// deadline), urge cooldowns (the node's default of 30 minutes, the CC recipient refused, the
// 10-per-minute limit) and the cleanup of each retention key as configured.
func TestScenarioTimeouts(t *testing.T) {
	retentions := func(c *config.Config) {
		c.Approval.FormSnapshotRetention, c.Approval.UrgeRecordRetention, c.Approval.CCRecordRetention = day(2), day(1), day(3)
	}
	eachScenario(t, retentions, func(t *testing.T, e *eng) {
		apv := e.srv.Approval()
		clock := e.srv.Clock
		t.Run("actions", func(t *testing.T) { timeoutActions(e.sub(t), apv) })
		t.Run("sequential deadline from activation", func(t *testing.T) {
			e := e.sub(t)
			code := e.flow("tseqd", approvalNode("a", users("u1", "u2")+`,"approvalMethod":"sequential","timeoutHours":1,"timeoutAction":"auto_pass"`), "s>a", "a>end")
			id := e.start(applicant, code, `{}`)
			clock.Advance(30 * time.Minute)
			e.must(e.decide(id, "u1", "approve", ""))
			clock.Advance(45 * time.Minute)
			scan(t, "timeouts before u2's deadline", apv.ScanTimeouts, 0)
			clock.Advance(20 * time.Minute)
			scan(t, "timeouts", apv.ScanTimeouts, 1)
			e.wantStatus(id, "approved", "u1:approved", "u2:approved")
		})
		t.Run("pre-warnings", func(t *testing.T) {
			e := e.sub(t)
			code := e.flow("twarn", approvalNode("a", users("u1")+`,"timeoutHours":4,"timeoutAction":"notify","timeoutNotifyBeforeHours":2`), "s>a", "a>end")
			id := e.start(applicant, code, `{}`)
			late := e.start(applicant, code, `{}`)
			clock.Advance(119 * time.Minute)
			scan(t, "pre-warnings before the window", apv.ScanPreWarnings, 0)
			from := e.act()
			e.ok(applicant, "approval/admin", "terminate_instance", `{"instanceId":"`+late+`"}`)
			clock.Advance(time.Minute)
			scan(t, "pre-warnings", apv.ScanPreWarnings, 1)
			scan(t, "pre-warnings again", apv.ScanPreWarnings, 0)
			e.wantEventsSince(id, from, map[string]int{approval.EventTaskDeadlineWarning: 1})
			if h := hoursLeft(e, id); h != 1 {
				t.Errorf("hoursLeft = %d, want 1", h)
			}
			clock.Advance(2 * time.Hour)
			scan(t, "timeouts", apv.ScanTimeouts, 1)
			scan(t, "pre-warnings after the deadline", apv.ScanPreWarnings, 0)
			skipped := e.start(applicant, code, `{}`)
			clock.Advance(5 * time.Hour)
			scan(t, "pre-warnings past a deadline", apv.ScanPreWarnings, 0)
			scan(t, "timeouts", apv.ScanTimeouts, 1)
			for _, x := range []string{id, skipped} {
				e.ok(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+x+`"}`)
			}
		})
		t.Run("urges", func(t *testing.T) {
			e := e.sub(t)
			code := e.flow("turge", `{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"K","ccs":[{"kind":"user","ids":["r1"]}]}},`+
				approvalNode("a", users("u1", "rl")), "s>k", "k>a", "a>end")
			id := e.start(applicant, code, `{}`)
			urge := `{"taskId":"` + e.task(id, "u1") + `"}`
			e.ok(applicant, instR, "urge_task", urge)
			clock.Advance(29 * time.Minute)
			if r := e.call(applicant, instR, "urge_task", urge); r.Code != approval.ErrCodeUrgeCooldown || !strings.Contains(r.Message, "30") {
				t.Errorf("urge within the default cooldown: %d %s", r.Code, r.Message)
			}
			clock.Advance(time.Minute + time.Second)
			e.ok(applicant, instR, "urge_task", urge)
			e.refused(approval.ErrCodeAccessDenied, user("r1"), instR, "urge_task", urge)
			e.ok(user("rl"), instR, "urge_task", urge)
			for i := 0; i < 9; i++ {
				e.refused(approval.ErrCodeUrgeCooldown, user("rl"), instR, "urge_task", urge)
			}
			e.refused(rpc.CodeTooManyRequests, user("rl"), instR, "urge_task", urge)
			e.wantEvents(id, approval.EventTaskUrged, 3)
			e.ok(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`"}`)
		})
		t.Run("cleanup retentions", func(t *testing.T) { cleanupRetentions(e.sub(t), apv) })
	})
}

// timeoutActions plays one row per timeout action: the instance is started, the clock moved
// past the deadline, one scan times out exactly its task; leftovers are terminated so the next
// row's scan sees only its own.
func timeoutActions(e *eng, apv *approval.Service) {
	t := e.t
	handle := func(code, extra string) string {
		return e.flow(code, `{"id":"h","kind":"handle","position":{"x":0,"y":0},"data":{"name":"H"`+users("u1")+`,"timeoutHours":1`+extra+`}}`, "s>h", "h>end")
	}
	node := func(code, extra string, who ...string) string {
		return e.flow(code, approvalNode("a", users(who...)+`,"passRule":"any","timeoutHours":1`+extra), "s>a", "a>end")
	}
	rows := []struct {
		name   string
		flow   string
		status string
		tasks  []string
		events map[string]int
	}{
		{"none", node("tnone", "", "u1", "u2"), "running", []string{"u1:pending", "u2:pending"}, map[string]int{approval.EventTaskTimedOut: 2}},
		{"notify", node("tntf", `,"timeoutAction":"notify"`, "u1", "u2"), "running", []string{"u1:pending", "u2:pending"}, map[string]int{approval.EventTaskTimedOut: 2}},
		{"auto_pass", node("tpass", `,"timeoutAction":"auto_pass"`, "u1"), "approved", []string{"u1:approved"},
			map[string]int{approval.EventTaskTimedOut: 1, evApproved: 1, evCompleted: 1}},
		{"auto_pass on a handle node", handle("thpass", `,"timeoutAction":"auto_pass"`), "approved", []string{"u1:handled"},
			map[string]int{approval.EventTaskTimedOut: 1, evHandled: 1, evCompleted: 1}},
		{"auto_reject", node("trej", `,"timeoutAction":"auto_reject"`, "u1", "u2"), "rejected", []string{"u1:rejected", "u2:rejected"},
			map[string]int{approval.EventTaskTimedOut: 2, evRejected: 2, evCompleted: 1}},
		{"transfer_admin skips the overdue and live people", node("tadm", `,"approvalMethod":"sequential","timeoutAction":"transfer_admin","adminUserIds":["ad1","u2","u1"]`, "u1", "u2"), "running",
			[]string{"u1:transferred", "u2:waiting", "ad1:pending"},
			map[string]int{approval.EventTaskTimedOut: 1, evTransferred: 1, evCreated: 1}},
		{"transfer_admin without an eligible admin", handle("tadm0", `,"timeoutAction":"transfer_admin","adminUserIds":["u1"]`), "running",
			[]string{"u1:pending"}, map[string]int{approval.EventTaskTimedOut: 1}},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			id := e.start(applicant, tt.flow, `{}`)
			from := e.act()
			e.srv.Clock.Advance(time.Hour)
			n, err := apv.ScanTimeouts(context.Background())
			if err != nil || n != tt.events[approval.EventTaskTimedOut] {
				t.Errorf("ScanTimeouts = %d, %v; want %d", n, err, tt.events[approval.EventTaskTimedOut])
			}
			e.wantStatus(id, tt.status, tt.tasks...)
			e.wantEventsSince(id, from, tt.events)
			scan(t, "timeouts again", apv.ScanTimeouts, 0)
			if tt.status == "running" {
				e.ok(alice, "approval/admin", "terminate_instance", `{"instanceId":"`+id+`"}`)
			}
		})
	}
}

// hoursLeft is the hoursLeft of instance id's last deadline warning (-1 without one).
func hoursLeft(e *eng, id string) int {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	h := -1
	for i, typ := range e.rec.types {
		if typ == approval.EventTaskDeadlineWarning && e.rec.events[i].InstanceID == id && e.rec.events[i].HoursLeft != nil {
			h = *e.rec.events[i].HoursLeft
		}
	}
	return h
}

// cleanupRetentions checks each retention key on its own: urge records go after a day, form
// snapshots after two, read CC records after three; unread CC records stay.
func cleanupRetentions(e *eng, apv *approval.Service) {
	t := e.t
	ctx := context.Background()
	code := e.flow("tclean", `{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"K","ccs":[{"kind":"user","ids":["r1","r2"]}]}},`+
		approvalNode("a", users("u1")), "s>k", "k>a", "a>end")
	id := e.start(applicant, code, `{}`)
	e.ok(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u1")+`"}`)
	e.ok(user("r1"), instR, "mark_cc_read", `{"instanceId":"`+id+`"}`)
	count := func(table, extra string) int {
		q := e.srv.DB().NewSelect().Table(table).Where("instance_id = ?", id)
		if extra != "" {
			q = q.Where(extra)
		}
		n, err := q.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	for _, step := range []struct {
		after               time.Duration
		urges, snaps, reads int
	}{
		{23 * time.Hour, 1, 1, 1}, {2 * time.Hour, 0, 1, 1}, {day(1), 0, 0, 1}, {day(1), 0, 0, 0},
	} {
		e.srv.Clock.Advance(step.after)
		if _, err := apv.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		got := [3]int{count("apv_urge_record", ""), count("apv_form_snapshot", ""), count("apv_cc_record", "read_at IS NOT NULL")}
		if want := [3]int{step.urges, step.snaps, step.reads}; got != want {
			t.Errorf("after %v more: urges, snapshots, read ccs = %v, want %v", step.after, got, want)
		}
		if unread := count("apv_cc_record", "read_at IS NULL"); unread != 1 {
			t.Errorf("unread cc records = %d, want 1 (never pruned)", unread)
		}
	}
}

// day is n days.
func day(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
