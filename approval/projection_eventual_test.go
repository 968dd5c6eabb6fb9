package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/svctest"
)

// failures counts approval.instance.binding_failed events (of both nodes: the node whose worker
// fails publishes it).
type failures struct {
	mu     sync.Mutex
	events []approval.BindingFailedEvent
}

func (f *failures) module(d app.Deps) (app.Module, error) {
	_, err := d.Events.Subscribe(approval.EventInstanceBindingFailed, func(_ context.Context, env *event.Envelope) error {
		var e approval.BindingFailedEvent
		b, _ := json.Marshal(env.Payload)
		_ = json.Unmarshal(b, &e)
		f.mu.Lock()
		f.events = append(f.events, e)
		f.mu.Unlock()
		return nil
	})
	return app.Module{Name: "failures"}, err
}

func (f *failures) last() approval.BindingFailedEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[len(f.events)-1]
}

func (f *failures) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}

// twoNodes is an eventual-binding scenario: two servers (two nodes of the service) on one
// database and one fake clock; their background workers scan hourly, the test scans itself.
type twoNodes struct {
	*eng
	clock  *svctest.Clock
	w1, w2 *approval.Service
	fails  *failures
}

func newTwoNodes(t *testing.T, kind config.DBKind) *twoNodes {
	t.Helper()
	ds := svctest.DataSource(t, kind)
	clock := svctest.NewClock(time.Now().UTC().Truncate(time.Second))
	shared := svctest.WithConfig(func(c *config.Config) {
		c.DataSources[config.PrimaryDataSource] = ds
		c.Approval.BusinessBinding.Consistency = config.ConsistencyEventual
		c.Approval.BusinessBinding.ScanInterval = time.Hour
	})
	f := &failures{}
	e := newEngWith(t, kind, approval.Options{}, shared, svctest.WithClock(clock), svctest.WithOptions(svc.WithModule(f.module)))
	other := svctest.New(t, svctest.WithDB(kind), shared, svctest.WithClock(clock), svctest.WithConfig(func(c *config.Config) {
		c.Event.Transports.TxMemory.Enabled = true
		c.Event.Routing = []config.EventRoute{{Pattern: "approval.*", Transports: []string{config.TransportTxMemory}}}
	}), svctest.WithOptions(svc.WithApproval(approval.Options{}), svc.WithModule(f.module)))
	return &twoNodes{eng: e, clock: clock, w1: e.srv.Approval(), w2: other.Approval(), fails: f}
}

// scan runs both nodes' workers at once and returns how many projections they applied.
func (n *twoNodes) scan() int {
	n.t.Helper()
	var wg sync.WaitGroup
	got := make([]int, 2)
	for i, w := range []*approval.Service{n.w1, n.w2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := w.ScanProjections(context.Background())
			if err != nil {
				n.t.Errorf("scan: %v", err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	return got[0] + got[1]
}

func (n *twoNodes) wantScan(applied int) {
	n.t.Helper()
	if got := n.scan(); got != applied {
		n.t.Errorf("scan applied %d, want %d", got, applied)
	}
}

// TestBindingEventual: with eventual consistency the record follows start → rollback to start →
// resubmit → approve through the worker; two nodes scanning at once apply each revision once; a
// worker that dies after its claim leaves the row to another after the lease, and its late apply
// writes nothing; a stale owner never overwrites a newer one; an apply the CAS fence refuses backs
// off (1 s, 2 s …) with approval.instance.binding_failed each time, and the admin lists and
// retries it.
func TestBindingEventual(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		n := newTwoNodes(t, kind)
		e := n.eng
		b := newBiz(t, e.srv.DB(), kind, "o1", "m1", "m2", "m3", "m4", "m5", "c1", "s1")
		code := e.flowWith("bz", orderBinding, approvalNode("a", users("u1")+`,"rollbackType":"start"`), "s>a", "a>end")
		node := nodeIDs(t, e, code)
		start := func(ref string) string {
			return e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"`+ref+`","formData":{"amount":1}}`)["id"].(string)
		}
		id := start("o1")
		b.want("o1", "", "", false, false, 0)
		n.wantScan(1)
		b.want("o1", "running", id, true, false, 1)
		n.wantScan(0)
		e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+node["s"]+`"`))
		n.wantScan(1)
		b.want("o1", "returned", id, true, true, 2)
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`"}`)
		n.wantScan(1)
		b.want("o1", "running", id, true, false, 3)
		e.must(e.decide(id, "u1", "approve", ""))
		n.wantScan(1)
		b.want("o1", "done", id, true, true, 4)
		if p := projectionOf(t, e, id); p.DesiredRevision != 4 || p.AppliedRevision != 4 || p.Status != "applied" || p.Consistency != "eventual" {
			t.Errorf("projection %+v", p)
		}

		// Two nodes, many records: each revision once.
		var many []string
		for _, ref := range []string{"m1", "m2", "m3", "m4", "m5"} {
			many = append(many, start(ref))
		}
		n.wantScan(5)
		for i, ref := range []string{"m1", "m2", "m3", "m4", "m5"} {
			b.want(ref, "running", many[i], true, false, 1)
		}

		// A worker dies after its claim: the lease keeps the row from the other node until it
		// runs out; the dead worker's late apply writes nothing.
		cid := start("c1")
		pid := projectionOf(t, e, cid).ID
		claimed, err := n.w1.ClaimProjections(context.Background())
		if err != nil || len(claimed) != 1 || claimed[0] != pid {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		crashMidApply(t, e.srv.DB(), "c1")
		if got, _ := n.w2.ScanProjections(context.Background()); got != 0 {
			t.Errorf("the other node applied a leased row")
		}
		n.clock.Advance(61 * time.Second)
		if got, _ := n.w2.ScanProjections(context.Background()); got != 1 {
			t.Errorf("the other node did not take the row after the lease: %d", got)
		}
		if ok, err := n.w1.ApplyProjection(context.Background(), pid); ok || err != nil {
			t.Errorf("late apply of the dead worker = %v, %v", ok, err)
		}
		b.want("c1", "running", cid, true, false, 1)

		// A stale owner: X approved (not applied yet, claimed by a slow worker), Y supersedes
		// it; the slow worker's apply comes after Y's and writes nothing.
		x := start("s1")
		n.wantScan(1)
		e.must(e.decide(x, "u1", "approve", ""))
		spid := projectionOf(t, e, x).ID
		if claimed, _ := n.w1.ClaimProjections(context.Background()); len(claimed) != 1 {
			t.Fatalf("slow claim = %v", claimed)
		}
		y := start("s1")
		if got, _ := n.w2.ScanProjections(context.Background()); got != 1 {
			t.Errorf("the new owner's revision was not applied: %d", got)
		}
		if ok, err := n.w1.ApplyProjection(context.Background(), spid); ok || err != nil {
			t.Errorf("slow apply = %v, %v", ok, err)
		}
		b.want("s1", "running", y, true, false, 2)
		bindingFailures(t, n, b, y, spid)
	})
}

// crashMidApply writes a record inside a transaction that never commits (a worker dying
// mid-apply).
func crashMidApply(t *testing.T, d *db.DB, id string) {
	t.Helper()
	tx, err := d.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.NewRaw("UPDATE biz_order SET apv_status = 'half' WHERE id = ?", id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}

// bindingFailures: the host wrote another owner into record s1, so the CAS fence refuses y's
// approval: failed with backoff 1 s then 2 s, approval.instance.binding_failed each time; the
// admin finds it, fixes the record and retries.
func bindingFailures(t *testing.T, n *twoNodes, b *biz, y, pid string) {
	e := n.eng
	b.exec("UPDATE biz_order SET apv_instance = 'intruder' WHERE id = 's1'")
	e.must(e.decide(y, "u1", "approve", ""))
	wantFailed := func(attempts int, wait time.Duration) {
		t.Helper()
		n.wantScan(0)
		p := projectionOf(t, e, y)
		next := n.clock.Now().UTC().Add(wait)
		if p.Status != "failed" || p.AttemptCount != attempts || !strings.Contains(deref(p.LastError), "intruder") && !strings.Contains(deref(p.LastError), "owned by another") ||
			p.NextAttemptAt.Sub(next).Abs() > time.Millisecond {
			t.Errorf("after %d failures: %+v (next attempt want %v)", attempts, p, next)
		}
		svctest.Eventually(t, 3*time.Second, func() bool { return n.fails.count() == attempts }, "binding_failed events")
	}
	wantFailed(1, time.Second)
	n.wantScan(0) // not due before the backoff
	n.clock.Advance(time.Second)
	wantFailed(2, 2*time.Second)
	if ev := n.fails.last(); ev.Trigger != "completed" || ev.Status != "approved" || ev.BusinessTable != "biz_order" || ev.InstanceID != y || ev.ErrorMessage == "" {
		t.Errorf("binding_failed %+v", ev)
	}
	b.want("s1", "running", "intruder", true, false, 3)

	run(t, e.srv, withIDNames([]step{
		{name: "failed ones", resource: adminR, action: "find_business_projections", params: `{"status":"failed","page":1,"pageSize":10}`,
			check: all(length("items", 1), want("total", 1, "items.0.projectionId", pid, "items.0.ownerInstanceId", y,
				"items.0.appliedOwnerInstanceId", y, "items.0.businessTable", "biz_order", "items.0.recordKey.id", "s1",
				"items.0.consistency", "eventual", "items.0.desiredStatus", "approved", "items.0.attemptCount", 2, "items.0.status", "failed"))},
		{name: "other tenant sees none", as: bob, resource: adminR, action: "find_business_projections", params: `{}`, check: want("total", 0)},
		{name: "other tenant cannot retry", as: bob, resource: adminR, action: "retry_business_projection", params: `{"projectionId":"` + pid + `"}`, wantCode: approval.ErrCodeBindingProjectionNotFound},
		{name: "unknown", resource: adminR, action: "retry_business_projection", params: `{"projectionId":"nope"}`, wantCode: approval.ErrCodeBindingProjectionNotFound},
		{name: "all", as: root, resource: adminR, action: "find_business_projections", params: `{"tenantId":"t1"}`, check: want("total", 8)},
	}, map[string]string{}), map[string]string{})
	b.exec("UPDATE biz_order SET apv_instance = ? WHERE id = 's1'", y)
	e.ok(alice, adminR, "retry_business_projection", `{"projectionId":"`+pid+`"}`)
	n.wantScan(1)
	b.want("s1", "done", y, true, true, 5)
}

// TestBindingWorker: the approval-binding worker runs on its own every scan_interval.
func TestBindingWorker(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind, svctest.WithConfig(func(c *config.Config) {
			c.Approval.BusinessBinding.Consistency = config.ConsistencyEventual
			c.Approval.BusinessBinding.ScanInterval = 20 * time.Millisecond
		}))
		b := newBiz(t, e.srv.DB(), kind, "w1")
		e.flowWith("bz", orderBinding, approvalNode("a", users("u1")), "s>a", "a>end")
		id := e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"w1","formData":{"amount":1}}`)["id"].(string)
		svctest.Eventually(t, 5*time.Second, func() bool { return projectionOf(t, e, id).Status == approval.ProjectionApplied }, "the worker applies the start")
		b.want("w1", "running", id, true, false, 1)
	})
}
