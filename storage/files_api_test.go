package storage_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage"
	"github.com/svc-framework/svc/svctest"
)

// upload stores content under name as p through the upload lifecycle and returns the key.
func upload(t *testing.T, srv *svctest.Server, p *rpc.Principal, name, contentType string, content []byte, public bool) string {
	t.Helper()
	as := svctest.As(p)
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": name, "size": len(content), "contentType": contentType, "public": public}, as)
	if r.Code != 0 {
		t.Fatalf("init_upload %s: %d %s", name, r.Code, r.Message)
	}
	var plan storage.InitUploadResult
	r.DataAs(t, &plan)
	r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: name, Content: bytes.NewReader(content)}}, as)
	if r.Code != 0 {
		t.Fatalf("upload_part %s: %d %s", name, r.Code, r.Message)
	}
	if r = srv.Call(t, "sys/storage", "complete_upload", map[string]any{"claimId": plan.ClaimID}, as); r.Code != 0 {
		t.Fatalf("complete_upload %s: %d %s", name, r.Code, r.Message)
	}
	return plan.Key
}

// filePage is find_page's data.
type filePage struct {
	Page, Size int
	Total      int64
	Items      []storage.FileView
}

// TestFileRegistryOperations runs find_page and delete of sys/storage/file on every database:
// search by keyword, status, content type, uploader and public flag, paging and sort, the queued
// delete shown as deleting until the worker ran, 2001 for unknown and deleted keys, the
// permission refusals and the audit record of delete.
func TestFileRegistryOperations(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		log := &svctest.Audits{}
		srv := svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
			c.Storage.Provider = config.StorageMemory
			c.Storage.AllowPublicUploads = true
			c.Security.Roles = map[string][]string{"ops": {"sys.storage.file.*"}, "lister": {storage.QueryPermission}}
		}), svctest.WithOptions(svc.WithAuditSink(log)))
		ops, lister, alice, bob := svctest.User("ops", "ops"), svctest.User("lister", "lister"), svctest.User("alice"), svctest.User("bob")
		report := upload(t, srv, alice, "Quarterly Report.pdf", "application/pdf", []byte("pdf bytes"), false)
		photo := upload(t, srv, alice, "Holiday.PNG", "image/png", []byte("png bytes, longer"), false)
		logo := upload(t, srv, bob, "Logo.png", "image/png", []byte("logo"), true)

		find := func(t *testing.T, as *rpc.Principal, params, meta any) filePage {
			t.Helper()
			r := srv.Call(t, "sys/storage/file", "find_page", params, svctest.As(as), svctest.WithMeta(meta))
			if r.Status != 200 || r.Code != 0 {
				t.Fatalf("find_page %v: %d/%d %s", params, r.Status, r.Code, r.Message)
			}
			var p filePage
			r.DataAs(t, &p)
			return p
		}
		keys := func(p filePage) []string {
			out := []string{}
			for _, f := range p.Items {
				out = append(out, f.Key)
			}
			return out
		}

		t.Run("find_page", func(t *testing.T) {
			all := find(t, lister, map[string]any{}, nil)
			if all.Total != 3 || !cmp.Equal(keys(all), []string{logo, photo, report}) {
				t.Errorf("all = %d %v, want newest first", all.Total, keys(all))
			}
			f := all.Items[2]
			if f.OriginalFilename != "Quarterly Report.pdf" || f.ContentType != "application/pdf" || f.Size != 9 || f.Public ||
				f.Status != storage.FileStatusUploaded || f.UploadedBy != "alice" || f.Deleting || f.ClaimedAt != nil {
				t.Errorf("report = %+v", f)
			}
			for _, tt := range []struct {
				name   string
				params map[string]any
				meta   map[string]any
				want   []string
			}{
				{"keyword ignores case", map[string]any{"keyword": "REPORT"}, nil, []string{report}},
				{"keyword in the key", map[string]any{"keyword": strings.ToUpper(photo[len(photo)-8:])}, nil, []string{photo}},
				{"keyword wildcard is literal", map[string]any{"keyword": "_"}, nil, []string{}},
				{"content type prefix", map[string]any{"contentType": "image/"}, nil, []string{logo, photo}},
				{"uploader", map[string]any{"uploadedBy": "alice"}, nil, []string{photo, report}},
				{"public", map[string]any{"public": true}, nil, []string{logo}},
				{"page 2 of 2", map[string]any{}, map[string]any{"page": 2, "size": 2}, []string{report}},
				{"by size", map[string]any{}, map[string]any{"sort": []map[string]any{{"column": "size", "direction": "desc"}}}, []string{photo, report, logo}},
				{"by name", map[string]any{}, map[string]any{"sort": []map[string]any{{"column": "originalFilename"}}}, []string{photo, logo, report}},
			} {
				if got := keys(find(t, lister, tt.params, tt.meta)); !cmp.Equal(got, tt.want) {
					t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
				}
			}
			r := srv.Call(t, "sys/storage/file", "find_page", map[string]any{"status": "gone"}, svctest.As(lister))
			if r.Status != 400 || r.Code != rpc.CodeBadRequest {
				t.Errorf("bad status filter = %d/%d", r.Status, r.Code)
			}
		})

		t.Run("permissions", func(t *testing.T) {
			for _, c := range []struct {
				action string
				as     *rpc.Principal
				params any
			}{
				{"find_page", alice, map[string]any{}},
				{"delete", alice, map[string]any{"key": report}},
				{"delete", lister, map[string]any{"key": report}},
			} {
				r := srv.Call(t, "sys/storage/file", c.action, c.params, svctest.As(c.as))
				if r.Status != 403 || r.Code != rpc.CodeAccessDenied {
					t.Errorf("%s as %s = %d/%d, want 403/1100", c.action, c.as.ID, r.Status, r.Code)
				}
			}
			if r := srv.Call(t, "sys/storage/file", "find_page", map[string]any{}); r.Status != 401 {
				t.Errorf("find_page without a token = %d", r.Status)
			}
		})

		t.Run("delete", func(t *testing.T) {
			if r := srv.Call(t, "sys/storage/file", "delete", map[string]any{"key": report}, svctest.As(ops)); r.Code != 0 {
				t.Fatalf("delete: %d %s", r.Code, r.Message)
			}
			if p := find(t, lister, map[string]any{"keyword": "report"}, nil); len(p.Items) != 1 || !p.Items[0].Deleting {
				t.Errorf("after delete, before the worker: %+v", p.Items)
			}
			if err := srv.Storage().ProcessDeletes(context.Background()); err != nil {
				t.Fatal(err)
			}
			if p := find(t, lister, map[string]any{}, nil); !cmp.Equal(keys(p), []string{logo, photo}) {
				t.Errorf("after the worker = %v", keys(p))
			}
			gone := find(t, lister, map[string]any{"status": storage.FileStatusDeleted}, nil)
			if len(gone.Items) != 1 || gone.Items[0].Key != report || gone.Items[0].DeletedAt == nil || gone.Items[0].DeleteReason != storage.ReasonDeleted {
				t.Errorf("deleted = %+v", gone.Items)
			}
			for _, key := range []string{report, "2026/01/01/unknown.bin"} {
				if r := srv.Call(t, "sys/storage/file", "delete", map[string]any{"key": key}, svctest.As(ops)); r.Code != rpc.CodeRecordNotFound {
					t.Errorf("delete %s = %d, want 2001", key, r.Code)
				}
			}
			if r := srv.Call(t, "sys/storage/file", "delete", map[string]any{}, svctest.As(ops)); r.Status != 400 {
				t.Errorf("delete without key = %d", r.Status)
			}
			var audited []string
			for _, r := range log.Records() {
				if r.OK {
					audited = append(audited, r.Resource+" "+r.Action)
				}
			}
			if !cmp.Equal(audited, []string{"sys/storage/file delete"}) {
				t.Errorf("audited = %v", audited)
			}
		})
	})
}
