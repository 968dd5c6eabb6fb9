package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
)

// TestTables checks the migration on the three databases: every apv_* table of wire-approval §3
// exists, and the constraints the engine relies on hold — one published version per flow and
// one live task per person and node (partial unique indexes, generated columns on MySQL), the
// delegation window and distinct people, the pass-ratio range.
func TestTables(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := newServer(t, kind)
		d, ctx := srv.DB(), context.Background()
		for _, table := range []string{"apv_flow_category", "apv_flow", "apv_flow_initiator", "apv_flow_version", "apv_flow_node",
			"apv_flow_node_assignee", "apv_flow_node_cc", "apv_flow_edge", "apv_instance", "apv_business_projection",
			"apv_node_visit", "apv_task", "apv_action_log", "apv_cc_record", "apv_delegation", "apv_form_snapshot",
			"apv_urge_record", "apv_form_table", "apv_form_table_column"} {
			if _, err := d.NewSelect().Table(table).Count(ctx); err != nil {
				t.Errorf("table %s: %v", table, err)
			}
		}
		now := time.Now().UTC()
		exec := func(q string, args ...any) error {
			_, err := d.ExecContext(ctx, d.NewRaw(q, args...).String())
			return err
		}
		mustExec := func(q string, args ...any) {
			t.Helper()
			if err := exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		mustExec("INSERT INTO apv_flow_category (id, tenant_id, code, name) VALUES ('c1', 't', 'c', 'C')")
		mustExec("INSERT INTO apv_flow (id, tenant_id, category_id, code, name) VALUES ('f1', 't', 'c1', 'f', 'F')")
		mustExec("INSERT INTO apv_flow_version (id, flow_id, version, status) VALUES ('v1', 'f1', 1, 'published')")
		mustExec("INSERT INTO apv_flow_version (id, flow_id, version, status) VALUES ('v2', 'f1', 2, 'draft')")
		if err := exec("UPDATE apv_flow_version SET status = 'published' WHERE id = 'v2'"); !db.IsUniqueViolation(err) {
			t.Errorf("second published version: %v, want a unique violation", err)
		}
		mustExec("UPDATE apv_flow_version SET status = 'archived' WHERE id = 'v1'")
		mustExec("UPDATE apv_flow_version SET status = 'published' WHERE id = 'v2'")
		if err := exec("INSERT INTO apv_flow_version (id, flow_id, version) VALUES ('v3', 'f1', 2)"); !db.IsUniqueViolation(err) {
			t.Errorf("duplicate version number: %v, want a unique violation", err)
		}
		mustExec(`INSERT INTO apv_flow_node (id, flow_version_id, ` + quote(kind, "key") + `, kind, name) VALUES ('n1', 'v2', 'a', 'approval', 'A')`)
		if err := exec(`INSERT INTO apv_flow_node (id, flow_version_id, ` + quote(kind, "key") + `, kind, name, pass_ratio) VALUES ('n2', 'v2', 'b', 'approval', 'B', 100.5)`); err == nil {
			t.Error("pass_ratio 100.5 accepted")
		}
		mustExec("INSERT INTO apv_instance (id, tenant_id, flow_id, flow_code, flow_version_id, title, instance_no, applicant_id) VALUES ('i1', 't', 'f1', 'f', 'v2', 'T', 'NO-1', 'u')")
		mustExec("INSERT INTO apv_node_visit (id, tenant_id, instance_id, node_id, sequence) VALUES ('vis1', 't', 'i1', 'n1', 1)")
		task := "INSERT INTO apv_task (id, tenant_id, instance_id, node_id, visit_id, assignee_id, status) VALUES (?, 't', 'i1', 'n1', 'vis1', 'bob', ?)"
		mustExec(task, "t1", "pending")
		if err := exec(task, "t2", "waiting"); !db.IsUniqueViolation(err) {
			t.Errorf("second live task of one person: %v, want a unique violation", err)
		}
		mustExec(task, "t3", "approved")
		mustExec(task, "t4", "transferred")
		if err := exec("INSERT INTO apv_task (id, tenant_id, instance_id, node_id, visit_id, assignee_id) VALUES ('t5', 't', 'i1', 'n1', 'vis1', ' ')"); err == nil {
			t.Error("blank assignee accepted")
		}
		dlg := "INSERT INTO apv_delegation (id, delegator_id, delegatee_id, starts_at, ends_at) VALUES (?, ?, ?, ?, ?)"
		if err := exec(dlg, "d1", "a", "b", now, now.Add(-time.Hour)); err == nil {
			t.Error("delegation ending before it starts accepted")
		}
		if err := exec(dlg, "d2", "a", "a", now, now.Add(time.Hour)); err == nil {
			t.Error("delegation to oneself accepted")
		}
		mustExec(dlg, "d3", "a", "b", now, now.Add(time.Hour))
		if err := exec("DELETE FROM apv_flow WHERE id = 'f1'"); !db.IsForeignKeyViolation(err) {
			t.Errorf("deleting a flow with versions: %v, want a foreign-key violation", err)
		}
	})
}

// quote quotes a column name that is a keyword in MySQL.
func quote(kind config.DBKind, name string) string {
	if kind == config.MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}
