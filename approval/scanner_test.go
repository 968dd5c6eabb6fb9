package approval_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// scan runs fn and checks how many rows it reports.
func scan(t *testing.T, name string, fn func(context.Context) (int, error), want int) {
	t.Helper()
	n, err := fn(context.Background())
	if err != nil || n != want {
		t.Errorf("%s = %d, %v; want %d", name, n, err, want)
	}
}

// TestScanners: timeouts with each action on a fake clock, pre-warnings once per task, the
// retention cleanup, and a decision racing two timeout scanners.
func TestScanners(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		clock := svctest.NewClock(time.Now().UTC().Truncate(time.Second))
		e := newEng(t, kind, svctest.WithClock(clock))
		apv := e.srv.Approval()
		code := e.flow("to", approvalNode("a", users("u1")+`,"timeoutHours":1,"timeoutAction":"auto_pass"`)+`,`+
			approvalNode("b", users("u2")+`,"timeoutHours":2,"timeoutAction":"auto_reject","timeoutNotifyBeforeHours":1`), "s>a", "a>b", "b>end")
		id := e.start(applicant, code, `{}`)
		scan(t, "timeouts before the deadline", apv.ScanTimeouts, 0)
		clock.Advance(61 * time.Minute)
		scan(t, "timeouts", apv.ScanTimeouts, 1)
		e.wantStatus(id, "running", "u1:approved", "u2:pending")
		scan(t, "pre-warnings outside the window", apv.ScanPreWarnings, 0)
		clock.Advance(70 * time.Minute)
		scan(t, "pre-warnings", apv.ScanPreWarnings, 1)
		scan(t, "pre-warnings again", apv.ScanPreWarnings, 0)
		clock.Advance(time.Hour)
		scan(t, "timeouts b", apv.ScanTimeouts, 1)
		e.wantStatus(id, "rejected", "u1:approved", "u2:rejected")
		e.wantEvents(id, approval.EventTaskTimedOut, 2, approval.EventTaskDeadlineWarning, 1, approval.EventInstanceCompleted, 1)

		// transfer_admin and notify.
		adm := e.flow("adm", approvalNode("a", users("u1")+`,"timeoutHours":1,"timeoutAction":"transfer_admin","adminUserIds":["ad1","ad2","u1"]`), "s>a", "a>end")
		ntf := e.flow("ntf", approvalNode("a", users("u1")+`,"timeoutHours":1,"timeoutAction":"notify"`), "s>a", "a>end")
		id1, id2 := e.start(applicant, adm, `{}`), e.start(applicant, ntf, `{}`)
		clock.Advance(61 * time.Minute)
		scan(t, "timeouts adm+ntf", apv.ScanTimeouts, 2)
		e.wantStatus(id1, "running", "u1:transferred", "ad1:pending", "ad2:pending")
		e.wantStatus(id2, "running", "u1:pending")
		scan(t, "timeouts again", apv.ScanTimeouts, 0)
		e.must(e.decide(id2, "u1", "approve", ""))
		e.wantStatus(id2, "approved")

		// A decision racing two timeout scanners: one transition wins, events once.
		rej := e.flow("race2", approvalNode("a", users("u1")+`,"timeoutHours":1,"timeoutAction":"auto_reject"`), "s>a", "a>end")
		for i := 0; i < 5; i++ {
			id := e.start(applicant, rej, `{}`)
			task := e.task(id, "u1")
			clock.Advance(61 * time.Minute)
			var wg sync.WaitGroup
			var code int
			wg.Add(3)
			go func() {
				defer wg.Done()
				code = e.srv.Call(t, instR, "process_task", map[string]any{"taskId": task, "action": "approve"}, svctest.As(user("u1"))).Code
			}()
			for j := 0; j < 2; j++ {
				go func() { defer wg.Done(); _, _ = apv.ScanTimeouts(context.Background()) }()
			}
			wg.Wait()
			switch st := e.status(id); {
			case st == "approved" && code == 0:
				e.wantEvents(id, approval.EventTaskTimedOut, 0, approval.EventInstanceCompleted, 1, approval.EventTaskApproved, 1)
			case st == "rejected" && (code == approval.ErrCodeInstanceCompleted || code == approval.ErrCodeTaskNotPending):
				e.wantEvents(id, approval.EventTaskTimedOut, 1, approval.EventInstanceCompleted, 1, approval.EventTaskRejected, 1, approval.EventTaskApproved, 0)
			default:
				t.Errorf("race %d: status %s, decision code %d, tasks %v", i, st, code, e.tasks(id))
			}
		}

		// Cleanup: snapshots and urge records past retention, read CC records only.
		ccf := e.flow("ccx", `{"id":"k","kind":"cc","position":{"x":0,"y":0},"data":{"name":"K","ccs":[{"kind":"user","ids":["r1","r2"]}]}}`+`,`+approvalNode("a", users("u1")), "s>k", "k>a", "a>end")
		id = e.start(applicant, ccf, `{}`)
		e.ok(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u1")+`"}`)
		e.ok(user("r1"), instR, "mark_cc_read", `{"instanceId":"`+id+`"}`)
		clock.Advance(100 * 24 * time.Hour)
		ctx := context.Background()
		before, _ := e.srv.DB().NewSelect().Table("apv_form_snapshot").Count(ctx)
		n, err := apv.Cleanup(ctx)
		if err != nil || int64(n) != before+2 {
			t.Errorf("cleanup = %d, %v; want %d snapshots + 1 urge + 1 read cc", n, err, before)
		}
		left, _ := e.srv.DB().NewSelect().Table("apv_cc_record").Where("instance_id = ?", id).Count(ctx)
		if left != 1 {
			t.Errorf("cc records left = %d, want the unread one", left)
		}
	})
}
