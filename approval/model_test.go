package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/svctest"
)

// TestTypedModelRoundTrip: the persisted node model is typed with design's enumerations, and
// the rows store and scan back unchanged on the three databases — plain columns, a nullable
// one (rollbackDataStrategy, addAssigneeType), JSON ones (addAssigneeTypes, fieldPermissions)
// — and a typed value works as a query argument.
func TestTypedModelRoundTrip(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		d, ctx := newServer(t, kind).DB(), context.Background()
		for _, q := range []string{
			"INSERT INTO apv_flow_category (id, tenant_id, code, name) VALUES ('c1', 't', 'c', 'C')",
			"INSERT INTO apv_flow (id, tenant_id, category_id, code, name) VALUES ('f1', 't', 'c1', 'f', 'F')",
			"INSERT INTO apv_flow_version (id, flow_id, version, status) VALUES ('v1', 'f1', 1, 'draft')",
		} {
			if _, err := d.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		at := crud.NewTime(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC))
		clear := design.RollbackDataClear
		nodes := []approval.Node{
			{Audited: crud.Audited{ID: "n1", CreatedAt: at, UpdatedAt: at}, FlowVersionID: "v1", Key: "a", Kind: design.NodeApproval,
				Name: "A", ExecutionType: design.ExecutionManual, ApprovalMethod: design.MethodSequential, PassRule: design.PassRatio,
				PassRatio: approval.NewDecimal(50), EmptyAssigneeAction: design.EmptyTransferSpecified, FallbackUserIDs: []string{"u9"},
				AdminUserIDs: []string{}, SameApplicantAction: design.SameApplicantExclude, IsRollbackAllowed: true,
				RollbackType: design.RollbackSpecified, RollbackDataStrategy: &clear, RollbackTargetKeys: []string{"s"},
				AddAssigneeTypes: []design.AddAssigneeType{design.AddBefore, design.AddParallel},
				FieldPermissions: map[string]design.Permission{"amount": design.PermRequired, "memo": design.PermHidden},
				TimeoutAction:    design.TimeoutTransferAdmin, ConsecutiveApproverAction: design.ConsecutiveAutoPass},
			{Audited: crud.Audited{ID: "n2", CreatedAt: at, UpdatedAt: at}, FlowVersionID: "v1", Key: "k", Kind: design.NodeCC,
				Name: "K", ExecutionType: design.ExecutionManual, ApprovalMethod: design.MethodParallel, PassRule: design.PassAll,
				PassRatio: approval.NewDecimal(100), EmptyAssigneeAction: design.EmptyAutoPass, FallbackUserIDs: []string{},
				AdminUserIDs: []string{}, SameApplicantAction: design.SameApplicantSelfApprove, RollbackType: design.RollbackNone,
				AddAssigneeTypes: []design.AddAssigneeType{}, FieldPermissions: map[string]design.Permission{},
				TimeoutAction: design.TimeoutNone, ConsecutiveApproverAction: design.ConsecutiveNone},
		}
		field := "approver"
		assignee := approval.NodeAssignee{ID: "a1", NodeID: "n1", Kind: design.AssigneeFormField, IDs: []string{}, FormField: &field}
		cc := approval.NodeCC{ID: "cc1", NodeID: "n1", Kind: design.CCRole, IDs: []string{"r1"}, Timing: design.CCOnReject}
		for _, m := range []any{&nodes, &assignee, &cc} {
			if _, err := d.NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatalf("insert %T: %v", m, err)
			}
		}
		var gotNodes []approval.Node
		if err := d.NewSelect().Model(&gotNodes).Where("kind IN (?, ?)", design.NodeApproval, design.NodeCC).Order("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		ignore := cmpopts.IgnoreFields(approval.Node{}, "CreatedAt", "UpdatedAt") // time precision differs per database
		if diff := cmp.Diff(nodes, gotNodes, ignore, cmp.Comparer(func(a, b approval.Decimal) bool { return a.String() == b.String() })); diff != "" {
			t.Errorf("nodes (-stored +scanned):\n%s", diff)
		}
		var gotAssignee approval.NodeAssignee
		if err := d.NewSelect().Model(&gotAssignee).Where("kind = ?", design.AssigneeFormField).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(assignee, gotAssignee); diff != "" {
			t.Errorf("assignee (-stored +scanned):\n%s", diff)
		}
		var gotCC approval.NodeCC
		if err := d.NewSelect().Model(&gotCC).Where("timing = ?", design.CCOnReject).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cc, gotCC); diff != "" {
			t.Errorf("cc (-stored +scanned):\n%s", diff)
		}
	})
}
