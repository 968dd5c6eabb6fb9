package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/svctest"
)

// logBuffer is a slog handler's destination that tests read while the server writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records are the JSON log records whose msg is msg.
func (b *logBuffer) records(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(b.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// escapeEng is a synchronous-binding engine on a fake clock whose log the test reads.
type escapeEng struct {
	*eng
	clock *svctest.Clock
	log   *logBuffer
	fails *failures
}

func newEscapeEng(t *testing.T, kind config.DBKind, lang string) *escapeEng {
	t.Helper()
	clock := svctest.NewClock(time.Now().UTC().Truncate(time.Second))
	lb, f := &logBuffer{}, &failures{}
	logger := slog.New(slog.NewJSONHandler(lb, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newEngWith(t, kind, approval.Options{}, svctest.WithClock(clock), svctest.WithConfig(func(c *config.Config) {
		c.I18n.Language = lang
		c.Approval.BusinessBinding.ScanInterval = time.Hour // the test scans itself
	}), svctest.WithOptions(svc.WithLogger(logger), svc.WithModule(f.module)))
	return &escapeEng{eng: e, clock: clock, log: lb, fails: f}
}

// wantRecordRefusal checks that r is 40109 with the catalogue's message of lang, free of the
// host's table and column names, and that the server logged the cause under r's request id.
func (e *escapeEng) wantRecordRefusal(r svctest.Response, lang string) {
	e.t.Helper()
	want := i18n.MustNew(lang, approval.Messages()).T("approval_business_record_unavailable", nil)
	if r.Code != approval.ErrCodeInvalidBusinessRef || r.Message != want {
		e.t.Errorf("answer %d %q, want 40109 %q", r.Code, r.Message, want)
	}
	for _, internal := range []string{"biz_order", "apv_instance", "apv_status", "{", "  "} {
		if strings.Contains(r.Message, internal) {
			e.t.Errorf("message %q shows %q", r.Message, internal)
		}
	}
	id := r.Header.Get("X-Request-Id")
	for _, rec := range e.log.records("approval: request refused") {
		if rec["request_id"] == id && strings.Contains(rec["cause"].(string), "biz_order") && rec["code"] == float64(40109) {
			return
		}
	}
	e.t.Errorf("no log record of request %s naming the record", id)
}

// TestBindingMissingRecord (issue #48 item 1): with synchronous binding, an instance whose host
// record was deleted refuses approve, reject and withdraw with 40109 — the catalogue's message,
// the record in the server log under the request id — and the administrator's terminate always
// ends it: the failed write is recorded on the projection (failed, last_error, in
// find_business_projections and get_metrics, binding_failed published with the terminate), the
// worker retries it with backoff, and once the host re-creates the record (instance column empty)
// or writes the instance back, retry_business_projection and the next scan apply it. A host table
// that is gone altogether (a database error, which aborts the transaction on PostgreSQL without
// the savepoint) does not stop the terminate either.
func TestBindingMissingRecord(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEscapeEng(t, kind, i18n.English)
		b := newBiz(t, e.srv.DB(), kind, "o1", "o2")
		e.flowWith("bz", orderBinding, approvalNode("a", users("u1")), "s>a", "a>end")
		start := func(ref string) string {
			return e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"`+ref+`","formData":{"amount":1}}`)["id"].(string)
		}

		// A start on an unknown record: 40109 from the catalogue, nothing created.
		e.wantRecordRefusal(e.call(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"PO-404","formData":{"amount":1}}`), i18n.English)

		id := start("o1")
		b.want("o1", "running", id, true, false, 1)
		b.exec("DELETE FROM biz_order WHERE id = 'o1'")
		e.wantRecordRefusal(e.decide(id, "u1", "approve", ""), i18n.English)
		e.wantRecordRefusal(e.decide(id, "u1", "reject", `,"opinion":"no"`), i18n.English)
		e.wantRecordRefusal(e.call(applicant, instR, "withdraw", `{"instanceId":"`+id+`"}`), i18n.English)
		e.wantStatus(id, "running", "u1:pending")

		e.ok(alice, adminR, "terminate_instance", `{"instanceId":"`+id+`","reason":"record gone"}`)
		e.wantStatus(id, "terminated", "u1:canceled")
		p := projectionOf(t, e.eng, id)
		if p.Status != approval.ProjectionFailed || p.AttemptCount != 1 || p.DesiredRevision != 2 || p.AppliedRevision != 1 ||
			p.DesiredStatus != approval.InstanceTerminated || !strings.Contains(deref(p.LastError), "biz_order") ||
			!p.NextAttemptAt.Equal(e.clock.Now().Add(time.Second)) {
			t.Errorf("projection after the terminate: %+v", p)
		}
		svctest.Eventually(t, 5*time.Second, func() bool { return e.fails.count() > 0 }, "binding_failed delivered") // after the commit
		if f := e.fails.last(); e.fails.count() != 1 || f.InstanceID != id || f.Status != approval.InstanceTerminated ||
			f.Trigger != "completed" || f.BusinessTable != "biz_order" {
			t.Errorf("binding_failed events: %d, last %+v", e.fails.count(), f)
		}
		if n := len(e.log.records("approval: business record not written; the instance ends anyway")); n != 1 {
			t.Errorf("%d log records of the failed write, want 1", n)
		}
		run(t, e.srv, []step{
			{name: "failed projection listed", resource: adminR, action: "find_business_projections", params: `{"status":"failed"}`, as: alice,
				check: all(length("items", 1), want("items.0.ownerInstanceId", id, "items.0.desiredStatus", "terminated", "items.0.attemptCount", 1.0))},
			{name: "metrics count it", resource: adminR, action: "get_metrics", params: `{}`, as: alice,
				check: want("pendingBindingFailures", 1.0, "businessProjectionCounts.failed", 1.0, "pendingBusinessProjections", 1.0)},
		}, map[string]string{})

		w := e.srv.Approval()
		if st, err := w.Stats(context.Background()); err != nil || st.Projections[approval.ProjectionFailed] != 1 {
			t.Errorf("Stats projections %v (%v), want one failed", st.Projections, err)
		}

		// The worker retries with backoff while the record is missing.
		scan := func(applied int) {
			t.Helper()
			if n, err := w.ScanProjections(context.Background()); err != nil || n != applied {
				t.Errorf("scan applied %d (%v), want %d", n, err, applied)
			}
		}
		scan(0) // not due yet
		e.clock.Advance(time.Second)
		scan(0)
		if p := projectionOf(t, e.eng, id); p.Status != approval.ProjectionFailed || p.AttemptCount != 2 {
			t.Errorf("projection after a failed retry: %+v", p)
		}

		// The host re-creates the record with an empty instance column; the admin retries.
		b.exec("INSERT INTO biz_order (id) VALUES ('o1')")
		e.ok(alice, adminR, "retry_business_projection", `{"projectionId":"`+p.ID+`"}`)
		scan(1)
		b.want("o1", "terminated", id, true, true, 1)
		if p := projectionOf(t, e.eng, id); p.Status != approval.ProjectionApplied || p.AppliedRevision != 2 {
			t.Errorf("projection after the repair: %+v", p)
		}

		// A record another instance took: terminate ends the instance; writing the instance's id
		// back is the other repair, and the worker's own next attempt applies it.
		id2 := start("o2")
		b.exec("UPDATE biz_order SET apv_instance = 'intruder' WHERE id = 'o2'")
		e.ok(alice, adminR, "terminate_instance", `{"instanceId":"`+id2+`"}`)
		e.wantStatus(id2, "terminated", "u1:canceled")
		b.exec("UPDATE biz_order SET apv_instance = ? WHERE id = 'o2'", id2)
		e.clock.Advance(time.Second)
		scan(1)
		b.want("o2", "terminated", id2, true, true, 4)

		// The host's table is gone: the database refuses the write, the terminate still ends the
		// instance (the write is rolled back to its savepoint).
		e.flowWith("bl", `"bindingMode":"business","businessBinding":{"tableName":"biz_line","keyColumns":["region","no"],"statusColumn":"apv_status","instanceIdColumn":"apv_instance"}`,
			approvalNode("a", users("u1")), "s>a", "a>end")
		lid := e.ok(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bl","businessRef":"{\"region\":\"eu\",\"no\":7}","formData":{"amount":1}}`)["id"].(string)
		b.exec("DROP TABLE biz_line")
		e.ok(alice, adminR, "terminate_instance", `{"instanceId":"`+lid+`"}`)
		e.wantStatus(lid, "terminated", "u1:canceled")
		if p := projectionOf(t, e.eng, lid); p.Status != approval.ProjectionFailed || p.LastError == nil {
			t.Errorf("projection of a dropped table: %+v", p)
		}
	})
}

// TestBusinessRefMessages (issue #48 item 2): every 40109 answer's message is the catalogue's in
// the server's language, naming none of the host's tables or columns: a start on an unknown
// record and a malformed composite businessRef, in English and Chinese.
func TestBusinessRefMessages(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{i18n.English, i18n.Chinese} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			e := newEscapeEng(t, config.SQLite, lang)
			newBiz(t, e.srv.DB(), config.SQLite)
			e.flowWith("bz", orderBinding, approvalNode("a", users("u1")), "s>a", "a>end")
			e.flowWith("bl", `"bindingMode":"business","businessBinding":{"tableName":"biz_line","keyColumns":["region","no"],"statusColumn":"apv_status","instanceIdColumn":"apv_instance"}`,
				approvalNode("a", users("u1")), "s>a", "a>end")
			e.wantRecordRefusal(e.call(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bz","businessRef":"PO-404","formData":{"amount":1}}`), lang)
			cat := i18n.MustNew(lang, approval.Messages())
			want := cat.T("approval_business_ref_malformed", nil)
			for _, ref := range []string{`"eu-7"`, `"{\"region\":\"eu\"}"`, `"{\"region\":\"eu\",\"no\":7,\"x\":1}"`} {
				r := e.call(applicant, instR, "start", `{"tenantId":"t1","flowCode":"bl","businessRef":`+ref+`,"formData":{"amount":1}}`)
				if r.Code != approval.ErrCodeInvalidBusinessRef || r.Message != want || strings.Contains(r.Message, "region") || strings.Contains(r.Message, "biz_line") {
					t.Errorf("start on %s: %d %q, want 40109 %q", ref, r.Code, r.Message, want)
				}
			}
			if lang == i18n.Chinese && want == i18n.MustNew(i18n.English, approval.Messages()).T("approval_business_ref_malformed", nil) {
				t.Error("the zh-CN message is the English one")
			}
			// A designer's binding refusal: the catalogue's sentence with what the designer named.
			r := e.call(alice, flowR, "create", `{"tenantId":"t1","code":"bad","name":"Bad","categoryId":"`+e.cat+`","bindingMode":"business",`+
				`"businessBinding":{"tableName":"biz_order","keyColumns":["id"],"statusColumn":"nope","instanceIdColumn":"apv_instance"}}`)
			if w := cat.T("approval_binding_schema_invalid", map[string]string{"detail": "biz_order.nope (statusColumn)"}); r.Code != approval.ErrCodeBindingSchemaInvalid || r.Message != w {
				t.Errorf("create with a missing column: %d %q, want 40018 %q", r.Code, r.Message, w)
			}
		})
	}
}
