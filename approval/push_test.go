package approval_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// fakeNotifier records pushes as "type>user,user".
type fakeNotifier struct {
	mu  sync.Mutex
	got []string
}

func (f *fakeNotifier) PushToUsers(_ context.Context, typ string, _ any, users ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, typ+">"+strings.Join(users, ","))
	return nil
}

func (f *fakeNotifier) has(s string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.got {
		if g == s {
			return true
		}
	}
	return false
}

// TestEnginePush: task creation, urges and CC deliveries reach the recipients through the push
// Notifier, with the event type as the message type.
func TestEnginePush(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		n := &fakeNotifier{}
		e := newEng(t, kind, svctest.WithOptions(svc.WithApproval(approval.Options{Notifier: n})))
		code := e.flow("push", approvalNode("a", users("u1", "u2")+`,"ccs":[{"kind":"user","ids":["c1"],"timing":"always"}]`), "s>a", "a>end")
		id := e.start(applicant, code, `{}`)
		e.ok(applicant, instR, "urge_task", `{"taskId":"`+e.task(id, "u2")+`"}`)
		e.must(e.decide(id, "u1", "approve", ""))
		e.must(e.decide(id, "u2", "approve", ""))
		for _, want := range []string{"approval.task.created>u1", "approval.task.created>u2", "approval.task.urged>u2", "approval.cc.notified>c1"} {
			svctest.Eventually(t, 3*time.Second, func() bool { return n.has(want) }, "push "+want)
		}
	})
}
