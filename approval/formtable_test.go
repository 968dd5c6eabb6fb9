package approval_test

import (
	"context"
	"testing"

	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestTableStorage: a version deployed with storageMode table gets its generated tables at
// publish (main with a column per field, a child per detail-table field, recorded in
// apv_form_table/apv_form_table_column); start and resubmit replace the instance's rows; keys
// that cannot be columns are refused with 40014.
func TestTableStorage(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEng(t, kind)
		e.storage = `,"storageMode":"table"`
		code := e.flow("tbl", approvalNode("a", users("u1")+`,"rollbackType":"start"`), "s>a", "a>end")
		ctx := context.Background()
		var tables []approval.FormTable
		if err := e.srv.DB().NewSelect().Model(&tables).Order("source_field_key").Scan(ctx); err != nil || len(tables) != 2 {
			t.Fatalf("form tables %+v, %v", tables, err)
		}
		main, child := tables[0].PhysicalTableName, tables[1].PhysicalTableName
		if tables[1].SourceFieldKey != "items" || len(main) > 63 || len(child) > 63 {
			t.Errorf("form tables %+v", tables)
		}
		if n, _ := e.srv.DB().NewSelect().Model((*approval.FormTableColumn)(nil)).Count(ctx); n != 4 {
			t.Errorf("%d form table columns, want amount, reason, desc, price", n)
		}
		id := e.start(applicant, code, `{"amount":12.5,"reason":"trip","items":[{"desc":"train","price":30},{"desc":"hotel","price":80.25}]}`)
		var row struct {
			Amount float64 `bun:"amount"`
			Reason string  `bun:"reason"`
		}
		if err := e.srv.DB().NewSelect().Table(main).Column("amount", "reason").Where("instance_id = ?", id).Scan(ctx, &row); err != nil || row.Amount != 12.5 || row.Reason != "trip" {
			t.Errorf("main row %+v, %v", row, err)
		}
		wantItems := func(descs ...string) {
			t.Helper()
			var got []string
			if err := e.srv.DB().NewSelect().Table(child).Column("desc").Where("instance_id = ?", id).Order("row_index").Scan(ctx, &got); err != nil || len(got) != len(descs) {
				t.Errorf("child rows %v, %v; want %v", got, err, descs)
				return
			}
			for i := range descs {
				if got[i] != descs[i] {
					t.Errorf("child rows %v, want %v", got, descs)
				}
			}
		}
		wantItems("train", "hotel")
		node := nodeIDs(t, e, code)
		e.must(e.decide(id, "u1", "rollback", `,"targetNodeId":"`+node["s"]+`"`))
		e.ok(applicant, instR, "resubmit", `{"instanceId":"`+id+`","formData":{"items":[{"desc":"plane","price":200}]}}`)
		wantItems("plane")
		if n, _ := e.srv.DB().NewSelect().Table(main).Where("instance_id = ?", id).Count(ctx); n != 1 {
			t.Errorf("%d main rows after resubmit", n)
		}

		// Keys that cannot be columns.
		f := e.ok(alice, flowR, "create", `{"tenantId":"t1","code":"bad","name":"Bad","categoryId":"`+e.cat+`","bindingMode":"standalone","isAllInitiationAllowed":true,"instanceTitleTemplate":""}`)
		bad := `{"version":2,"presentations":{"pc":{"children":[{"id":"F1","type":"textfield","key":"id","label":"Id"}]}}}`
		e.refused(approval.ErrCodeInvalidStorageMode, alice, flowR, "deploy", `{"flowId":"`+f["id"].(string)+`","storageMode":"table","formSchema":`+bad+
			`,"flowDefinition":{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"S"}},{"id":"end","kind":"end","position":{"x":0,"y":0},"data":{"name":"E"}}],"edges":[{"id":"e","source":"s","target":"end"}]}}`)
	})
}
