package approval_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// bizDDL creates the host's business tables on each dialect: biz_order (single key id) and
// biz_line (composite key region, no), each with the binding's columns and an applies counter a
// trigger bumps on every UPDATE, so a test sees how often a record was written.
var bizDDL = map[config.DBKind][]string{
	config.SQLite: {
		`CREATE TABLE biz_order (id VARCHAR(64) NOT NULL PRIMARY KEY, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, started_at TIMESTAMP NULL, finished_at TIMESTAMP NULL, applies INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TRIGGER biz_order_applies AFTER UPDATE OF apv_status, apv_instance, started_at, finished_at ON biz_order BEGIN UPDATE biz_order SET applies = applies + 1 WHERE id = NEW.id; END`,
		`CREATE TABLE biz_line (region VARCHAR(8) NOT NULL, no INTEGER NOT NULL, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, PRIMARY KEY (region, no))`,
	},
	config.Postgres: {
		`CREATE TABLE biz_order (id VARCHAR(64) NOT NULL PRIMARY KEY, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, started_at TIMESTAMP NULL, finished_at TIMESTAMP NULL, applies INTEGER NOT NULL DEFAULT 0)`,
		`CREATE FUNCTION biz_order_applies() RETURNS trigger AS $$ BEGIN NEW.applies := OLD.applies + 1; RETURN NEW; END $$ LANGUAGE plpgsql`,
		`CREATE TRIGGER biz_order_applies BEFORE UPDATE ON biz_order FOR EACH ROW EXECUTE FUNCTION biz_order_applies()`,
		`CREATE TABLE biz_line (region VARCHAR(8) NOT NULL, no INTEGER NOT NULL, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, PRIMARY KEY (region, no))`,
	},
	config.MySQL: {
		`CREATE TABLE biz_order (id VARCHAR(64) NOT NULL PRIMARY KEY, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, started_at DATETIME(6) NULL, finished_at DATETIME(6) NULL, applies INT NOT NULL DEFAULT 0)`,
		`CREATE TRIGGER biz_order_applies BEFORE UPDATE ON biz_order FOR EACH ROW SET NEW.applies = OLD.applies + 1`,
		`CREATE TABLE biz_line (region VARCHAR(8) NOT NULL, no INT NOT NULL, apv_status VARCHAR(32) NULL, apv_instance VARCHAR(64) NULL, PRIMARY KEY (region, no))`,
	},
}

// biz is the business tables of one test database.
type biz struct {
	t  *testing.T
	db *db.DB
}

// newBiz creates the business tables and the biz_order records ids.
func newBiz(t *testing.T, d *db.DB, kind config.DBKind, ids ...string) *biz {
	t.Helper()
	for _, q := range bizDDL[kind] {
		if _, err := d.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	b := &biz{t: t, db: d}
	for _, id := range ids {
		b.exec("INSERT INTO biz_order (id) VALUES (?)", id)
	}
	b.exec("INSERT INTO biz_line (region, no) VALUES ('eu', 7)")
	return b
}

func (b *biz) exec(q string, args ...any) {
	b.t.Helper()
	if _, err := b.db.NewRaw(q, args...).Exec(context.Background()); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
}

// want checks biz_order record id: status, owner instance, whether started_at and finished_at
// are set, and how many times it was written.
func (b *biz) want(id, status, owner string, started, finished bool, applies int) {
	b.t.Helper()
	var row struct {
		Status   *string   `bun:"apv_status"`
		Instance *string   `bun:"apv_instance"`
		Started  crud.Time `bun:"started_at"`
		Finished crud.Time `bun:"finished_at"`
		Applies  int       `bun:"applies"`
	}
	if err := b.db.NewSelect().Table("biz_order").Column("apv_status", "apv_instance", "started_at", "finished_at", "applies").
		Where("id = ?", id).Scan(context.Background(), &row); err != nil {
		b.t.Fatal(err)
	}
	got := []any{deref(row.Status), deref(row.Instance), !row.Started.IsZero(), !row.Finished.IsZero(), row.Applies}
	exp := []any{status, owner, started, finished, applies}
	for i := range got {
		if got[i] != exp[i] {
			b.t.Errorf("biz_order %s = %v, want %v", id, got, exp)
			return
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// orderBinding is the create params' binding of a flow bound to biz_order.
const orderBinding = `"bindingMode":"business","businessBinding":{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"apv_status","instanceIdColumn":"apv_instance","startedAtColumn":"started_at","finishedAtColumn":"finished_at","statusMapping":{"approved":"done"}}`

// projectionOf reads the business projection of instance instanceID.
func projectionOf(t *testing.T, e *eng, instanceID string) approval.Projection {
	t.Helper()
	var p approval.Projection
	if err := e.srv.DB().NewSelect().Model(&p).Where("id = (?)", e.srv.DB().NewSelect().Table("apv_instance").
		Column("business_projection_id").Where("id = ?", instanceID)).Scan(context.Background()); err != nil {
		t.Fatalf("projection of %s: %v", instanceID, err)
	}
	return p
}

// nodeIDs maps the designer keys of flow code's nodes to their persistent ids.
func nodeIDs(t *testing.T, e *eng, code string) map[string]string {
	t.Helper()
	var nodes []approval.Node
	if err := e.srv.DB().NewSelect().Model(&nodes).Join("JOIN apv_flow_version AS v ON v.id = node.flow_version_id").
		Join("JOIN apv_flow AS f ON f.id = v.flow_id").Where("f.code = ?", code).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Key] = n.ID
	}
	return out
}

// hooks records lifecycle calls per instance and refuses a transition to failOn.
type hooks struct {
	mu     sync.Mutex
	calls  map[string][]string
	failOn string
}

func (h *hooks) OnInstanceCreated(_ context.Context, _ bun.IDB, inst *approval.Instance) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[inst.ID] = append(h.calls[inst.ID], "created")
	return nil
}

func (h *hooks) OnInstanceTransition(_ context.Context, _ bun.IDB, inst *approval.Instance, from, to string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if to == h.failOn {
		return errors.New("the host refuses " + to)
	}
	h.calls[inst.ID] = append(h.calls[inst.ID], from+">"+to)
	return nil
}

func (h *hooks) of(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.calls[id], " ")
}

// numbers, globals and refs are the host extensions of the synchronous test.
type numbers struct{ n atomic.Int64 }

func (g *numbers) Generate(_ context.Context, code string) (string, error) {
	return strings.ToUpper(code) + "-" + strconv.FormatInt(g.n.Add(1), 10), nil
}

type extras struct{}

func (extras) ResolveGlobals(_ context.Context, _ string, applicant approval.UserInfo, _ map[string]any) (map[string]any, error) {
	return map[string]any{"level": 3, "who": applicant.ID}, nil
}

func (extras) BusinessRef(_ context.Context, code string, _ approval.UserInfo, _ map[string]any) (string, error) {
	if code == "bz" {
		return "o4", nil
	}
	return "", nil
}

// TestBindingSynchronous: a business record follows its instance through start → rollback to
// start (returned) → resubmit → approve inside the approval transactions; a busy record is 40108;
// a final owner is superseded; an apply that fails (missing record, another owner in the fence
// column) rolls the command back with 40109; composite keys; the lifecycle hooks see every
// transition and a hook error rolls the command back; the instance number, globals and
// businessRef extension points.
func TestBindingSynchronous(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		h := &hooks{calls: map[string][]string{}}
		e := newEngWith(t, kind, approval.Options{LifecycleHooks: []approval.InstanceLifecycleHook{h},
			InstanceNoGenerator: &numbers{}, GlobalsResolver: extras{}, BusinessRefProvider: extras{}})
		b := newBiz(t, e.srv.DB(), kind, "o1", "o2", "o3", "o4")
		code := e.flowWith("bz", orderBinding, approvalNode("a", users("u1")+`,"rollbackType":"start"`), "s>a", "a>end")
		node := nodeIDs(t, e, code)
		inst := e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"o1","formData":{"amount":1}}`)
		id := inst["id"].(string)
		if inst["instanceNo"] != "BZ-1" || fmt.Sprint(inst["globals"]) != "map[level:3 who:app]" || inst["businessProjectionId"] == nil {
			t.Errorf("start answered %v", inst)
		}
		b.want("o1", "running", id, true, false, 1)
		e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+node["s"]+`"`))
		b.want("o1", "returned", id, true, true, 2)
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`"}`)
		b.want("o1", "running", id, true, false, 3)
		e.must(e.decide(id, "u1", "approve", ""))
		b.want("o1", "done", id, true, true, 4)
		if p := projectionOf(t, e, id); p.DesiredRevision != 4 || p.AppliedRevision != 4 || p.Status != "applied" || deref(p.AppliedOwnerInstanceID) != id {
			t.Errorf("projection %+v", p)
		}
		if got := h.of(id); got != "created running>returned returned>running running>approved" {
			t.Errorf("hooks of %s: %s", id, got)
		}

		// A running owner keeps its record (40108); a final one is superseded.
		id2 := e.start(applicant, code, `{"amount":1}`) // businessRef from the provider: o4
		b.want("o4", "running", id2, true, false, 1)
		e.refused(approval.ErrCodeBindingTargetBusy, user("u7"), instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"o4","formData":{"amount":1}}`)
		id3 := e.ok(user("u7"), instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"o1","formData":{"amount":1}}`)["id"].(string)
		b.want("o1", "running", id3, true, false, 5)
		if p := projectionOf(t, e, id3); p.OwnerInstanceID != id3 || p.DesiredRevision != 5 || p.AppliedRevision != 5 {
			t.Errorf("superseded projection %+v", p)
		}

		// Concurrent starts on one record: one owner, the others 40108.
		codes := make([]int, 4)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = e.srv.Call(t, instR, "start", map[string]any{"tenantId": "t1", "flowCode": "bz", "businessRef": "o3",
					"formData": map[string]any{"amount": 1}}, svctest.As(user("racer"))).Code
			}()
		}
		wg.Wait()
		if won := slices.Index(codes, 0); won < 0 || slices.ContainsFunc(codes, func(c int) bool { return c != 0 && c != approval.ErrCodeBindingTargetBusy }) ||
			len(slices.DeleteFunc(slices.Clone(codes), func(c int) bool { return c != 0 })) != 1 {
			t.Errorf("concurrent starts answered %v, want one 0 and 40108 for the rest", codes)
		}
		if n, _ := e.srv.DB().NewSelect().Table("apv_instance").Where("business_ref = ?", "o3").Count(context.Background()); n != 1 {
			t.Errorf("%d instances own o3", n)
		}

		// Failed applies roll the command back.
		e.refused(approval.ErrCodeInvalidBusinessRef, applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"missing","formData":{"amount":1}}`)
		if n, _ := e.srv.DB().NewSelect().Table("apv_instance").Where("business_ref = ?", "missing").Count(context.Background()); n != 0 {
			t.Errorf("%d instances of a refused start", n)
		}
		b.exec("UPDATE biz_order SET apv_instance = 'intruder' WHERE id = 'o4'")
		e.refused(approval.ErrCodeInvalidBusinessRef, user("u1"), instR, "process_task", `{"taskId":"`+e.task(id2, "u1")+`","action":"approve"}`)
		e.wantStatus(id2, "running", "u1:pending")
		b.exec("UPDATE biz_order SET apv_instance = ? WHERE id = 'o4'", id2)

		// A hook error rolls the command back.
		h.mu.Lock()
		h.failOn = approval.InstanceWithdrawn
		h.mu.Unlock()
		if r := e.call(applicant, instR, "withdraw", `{"instanceId":"`+id2+`"}`); r.Code == 0 {
			t.Error("withdraw succeeded although the hook refused it")
		}
		e.wantStatus(id2, "running", "u1:pending")
		b.want("o4", "running", id2, true, false, 3)
		if p := projectionOf(t, e, id2); p.DesiredRevision != 1 {
			t.Errorf("projection after a refused withdraw: %+v", p)
		}
		e.ok(alice, adminR, "terminate_instance", `{"instanceId":"`+id2+`","reason":"stop"}`)
		b.want("o4", "terminated", id2, true, true, 4)
		// running>approved: the approve the fence refused called the hook inside the transaction it
		// then rolled back.
		if got := h.of(id2); got != "created running>approved running>terminated" {
			t.Errorf("hooks of %s: %s", id2, got)
		}

		// Composite keys: a JSON object of exactly the key columns.
		e.flowWith("bl", `"bindingMode":"business","businessBinding":{"tableName":"biz_line","keyColumns":["region","no"],"statusColumn":"apv_status","instanceIdColumn":"apv_instance"}`,
			approvalNode("a", users("u1")), "s>a", "a>end")
		for _, ref := range []string{`"eu-7"`, `"{\"region\":\"eu\"}"`, `"{\"region\":\"eu\",\"no\":7,\"x\":1}"`, `"{\"region\":\"eu\",\"no\":[7]}"`} {
			e.refused(approval.ErrCodeInvalidBusinessRef, applicant, instR, "start", `{"tenantId":"t1","flowCode":"bl","businessRef":`+ref+`,"formData":{"amount":1}}`)
		}
		lid := e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bl","businessRef":"{\"no\":7,\"region\":\"eu\"}","formData":{"amount":1}}`)["id"].(string)
		var line struct {
			Status   string `bun:"apv_status"`
			Instance string `bun:"apv_instance"`
		}
		if err := e.srv.DB().NewSelect().Table("biz_line").Column("apv_status", "apv_instance").Scan(context.Background(), &line); err != nil || line.Status != "running" || line.Instance != lid {
			t.Errorf("biz_line = %+v, %v", line, err)
		}
	})
}
