package crud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// widget is the test model.
type widget struct {
	bun.BaseModel `bun:"table:crud_widget"`
	crud.Audited
	Name    string `bun:"name" json:"name"`
	Size    int    `bun:"size" json:"size"`
	Enabled bool   `bun:"enabled" json:"enabled"`
}

type widgetSearch struct {
	Name    string `json:"name"`
	Size    int    `json:"size"`
	Enabled *bool  `json:"enabled"`
}

type widgetParams struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Size    int    `json:"size"`
	Enabled bool   `json:"enabled"`
}

// part references a widget, so deleting a used widget is a foreign-key violation.
func createTables(t *testing.T, d *db.DB) {
	t.Helper()
	ts := "TIMESTAMP"
	if d.Kind == config.MySQL {
		ts = "DATETIME(6)"
	}
	for _, stmt := range []string{
		`CREATE TABLE crud_widget (id VARCHAR(64) NOT NULL PRIMARY KEY, created_at ` + ts + ` NOT NULL, created_by VARCHAR(64) NOT NULL,
			updated_at ` + ts + ` NOT NULL, updated_by VARCHAR(64) NOT NULL, name VARCHAR(64) NOT NULL, size INT NOT NULL, enabled BOOLEAN NOT NULL,
			CONSTRAINT uk_crud_widget_name UNIQUE (name))`,
		`CREATE TABLE crud_part (id VARCHAR(64) NOT NULL PRIMARY KEY, widget_id VARCHAR(64) NOT NULL,
			CONSTRAINT fk_crud_part_widget FOREIGN KEY (widget_id) REFERENCES crud_widget (id))`,
	} {
		if _, err := d.ExecContext(context.Background(), stmt); err != nil {
			t.Fatalf("create table: %v", err)
		}
	}
}

type roles struct{}

func (roles) HasPermission(_ context.Context, p *rpc.Principal, token string) (bool, error) {
	return slices.Contains(p.Roles, token), nil
}

// headerAuth makes the principal from the X-Roles header.
type headerAuth struct{}

func (headerAuth) Name() string { return rpc.StrategyBearer }
func (headerAuth) Authenticate(_ context.Context, req rpc.AuthRequest) (*rpc.Principal, error) {
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: "u-1", Name: "u", Roles: strings.Split(req.Request.Header.Get("X-Roles"), ",")}, nil
}

func serve(t *testing.T, d *db.DB, now time.Time, mods ...func(*crud.Resource[widget, *widget, widgetSearch, widgetParams])) *httptest.Server {
	t.Helper()
	res := &crud.Resource[widget, *widget, widgetSearch, widgetParams]{
		Query: crud.Query[widget, widgetSearch]{Name: "test/widget", Permission: "test.widget", DB: d, FindAllLimit: 3,
			Search: crud.NewSearch(
				crud.Contains("name", func(s *widgetSearch) string { return s.Name }),
				crud.Eq("size", func(s *widgetSearch) int { return s.Size }),
				crud.EqPtr("enabled", func(s *widgetSearch) *bool { return s.Enabled }),
			).Sortable("name", "size")},
		Clock: func() time.Time { return now },
		ID:    func(p *widgetParams) string { return p.ID },
		Build: func(_ context.Context, _ bun.IDB, p *widgetParams, _ *widget) (*widget, error) {
			if p.Name == "" {
				return nil, rpc.ErrBadRequest.WithMessage("name is required")
			}
			return &widget{Name: p.Name, Size: p.Size, Enabled: p.Enabled}, nil
		},
	}
	for _, m := range mods {
		m(res)
	}
	e, err := rpc.NewEngine(rpc.EngineConfig{Permissions: roles{}, Messages: i18n.MustNew(i18n.English), Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RegisterStrategy(headerAuth{}); err != nil {
		t.Fatal(err)
	}
	r := res.Resource()
	r.Ops = append(r.Ops, res.FindOne())
	if err := e.Register(r); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(e)
	t.Cleanup(hs.Close)
	return hs
}

type answer struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func call(t *testing.T, hs *httptest.Server, roles, action, params, meta string) answer {
	t.Helper()
	body := fmt.Sprintf(`{"resource":"test/widget","action":%q,"version":"v1","params":%s,"meta":%s}`, action, params, meta)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Roles", roles)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestResource drives every operation of a CRUD resource on the three databases: paging
// defaults and caps, filters from params with meta as fallback, sort, the safety limit of
// find_all, {id} on create, update by id, delete, delete_many all-or-nothing, permissions and
// the 2001/2002/2003 codes.
func TestResource(t *testing.T) {
	t.Parallel()
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		createTables(t, d)
		now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
		hs := serve(t, d, now)
		const all = "test.widget.query,test.widget.create,test.widget.update,test.widget.delete"
		ids := map[string]string{}
		for i, n := range []string{"alpha", "beta", "gamma", "a_b", "delta"} {
			a := call(t, hs, all, "create", fmt.Sprintf(`{"name":%q,"size":%d,"enabled":%t}`, n, i, i%2 == 0), "{}")
			var c crud.Created
			if a.Code != 0 || json.Unmarshal(a.Data, &c) != nil || c.ID == "" || a.Message != "Created successfully" {
				t.Fatalf("create %s = %+v, want {id} and the created message", n, a)
			}
			ids[n] = c.ID
		}
		if _, err := d.ExecContext(context.Background(), "INSERT INTO crud_part (id, widget_id) VALUES ('p1', ?)", ids["beta"]); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, roles, action, params, meta string
			wantCode                          int
			wantMessage                       string   // the success message, when checked
			wantNames                         []string // items of find_page / find_all, in order
			wantTotal                         int64
			wantPage, wantSize                int
		}{
			{name: "find_page defaults newest first", roles: all, action: "find_page", params: `{}`, meta: `{}`,
				wantNames: []string{"delta", "a_b", "gamma", "beta", "alpha"}, wantTotal: 5, wantPage: 1, wantSize: 15},
			{name: "page and size from meta", roles: all, action: "find_page", params: `{}`, meta: `{"page":2,"size":2}`,
				wantNames: []string{"gamma", "beta"}, wantTotal: 5, wantPage: 2, wantSize: 2},
			{name: "size capped, page floored", roles: all, action: "find_page", params: `{}`, meta: `{"page":0,"size":5000}`,
				wantNames: []string{"delta", "a_b", "gamma", "beta", "alpha"}, wantTotal: 5, wantPage: 1, wantSize: 1000},
			{name: "bad meta values take defaults", roles: all, action: "find_page", params: `{}`, meta: `{"page":"x","size":-3}`,
				wantNames: []string{"delta", "a_b", "gamma", "beta", "alpha"}, wantTotal: 5, wantPage: 1, wantSize: 15},
			{name: "contains filter in params", roles: all, action: "find_page", params: `{"name":"ta"}`, meta: `{}`,
				wantNames: []string{"delta", "beta"}, wantTotal: 2, wantPage: 1, wantSize: 15},
			{name: "wildcards are literal", roles: all, action: "find_page", params: `{"name":"_"}`, meta: `{}`,
				wantNames: []string{"a_b"}, wantTotal: 1, wantPage: 1, wantSize: 15},
			{name: "filters fall back to meta", roles: all, action: "find_page", params: `{}`, meta: `{"enabled":true}`,
				wantNames: []string{"delta", "gamma", "alpha"}, wantTotal: 3, wantPage: 1, wantSize: 15},
			{name: "params win over meta", roles: all, action: "find_page", params: `{"size":1}`, meta: `{"size":15,"enabled":false}`,
				wantNames: []string{"beta"}, wantTotal: 1, wantPage: 1, wantSize: 15},
			{name: "sort from meta", roles: all, action: "find_page", params: `{}`, meta: `{"sort":[{"column":"name","direction":"ASC"}]}`,
				wantNames: []string{"a_b", "alpha", "beta", "delta", "gamma"}, wantTotal: 5, wantPage: 1, wantSize: 15},
			{name: "sort by snake and camel names", roles: all, action: "find_all", params: `{}`, meta: `{"sort":[{"column":"size","direction":"desc"}]}`,
				wantNames: []string{"delta", "a_b", "gamma"}},
			{name: "unknown sort column", roles: all, action: "find_page", params: `{}`, meta: `{"sort":[{"column":"password"}]}`, wantCode: rpc.CodeBadRequest},
			{name: "find_one first match", roles: all, action: "find_one", params: `{"name":"a"}`, meta: `{}`, wantNames: []string{"delta"}},
			{name: "find_one none", roles: all, action: "find_one", params: `{"name":"zzz"}`, meta: `{}`, wantCode: rpc.CodeRecordNotFound},
			{name: "find_all safety limit", roles: all, action: "find_all", params: `{}`, meta: `{}`, wantNames: []string{"delta", "a_b", "gamma"}},
			{name: "find_page needs query", roles: "test.widget.create", action: "find_page", params: `{}`, meta: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "create needs create", roles: "test.widget.query", action: "create", params: `{"name":"x"}`, meta: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "update needs update", roles: "test.widget.create", action: "update", params: `{"id":"x","name":"x"}`, meta: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "delete_many needs delete", roles: "test.widget.update", action: "delete_many", params: `{"pks":["x"]}`, meta: `{}`, wantCode: rpc.CodeAccessDenied},
			{name: "create duplicate", roles: all, action: "create", params: `{"name":"alpha"}`, meta: `{}`, wantCode: rpc.CodeRecordAlreadyExists},
			{name: "create invalid", roles: all, action: "create", params: `{}`, meta: `{}`, wantCode: rpc.CodeBadRequest},
			{name: "update without id", roles: all, action: "update", params: `{"name":"x"}`, meta: `{}`, wantCode: rpc.CodeBadRequest},
			{name: "update missing", roles: all, action: "update", params: `{"id":"nope","name":"x"}`, meta: `{}`, wantCode: rpc.CodeRecordNotFound},
			{name: "update to a taken name", roles: all, action: "update", params: `{"id":"` + ids["alpha"] + `","name":"beta"}`, meta: `{}`, wantCode: rpc.CodeRecordAlreadyExists},
			{name: "update", roles: all, action: "update", params: `{"id":"` + ids["alpha"] + `","name":"alpha2","size":9}`, meta: `{}`, wantMessage: "Updated successfully"},
			{name: "updated row", roles: all, action: "find_all", params: `{"size":9}`, meta: `{}`, wantNames: []string{"alpha2"}},
			{name: "delete referenced", roles: all, action: "delete", params: `{"id":"` + ids["beta"] + `"}`, meta: `{}`, wantCode: rpc.CodeForeignKeyViolation},
			{name: "delete missing", roles: all, action: "delete", params: `{"id":"nope"}`, meta: `{}`, wantCode: rpc.CodeRecordNotFound},
			{name: "delete without id", roles: all, action: "delete", params: `{}`, meta: `{}`, wantCode: rpc.CodeBadRequest},
			{name: "delete_many with a missing pk deletes none", roles: all, action: "delete_many", params: `{"pks":["` + ids["gamma"] + `","nope"]}`, meta: `{}`, wantCode: rpc.CodeRecordNotFound},
			{name: "delete_many with a referenced pk deletes none", roles: all, action: "delete_many", params: `{"pks":["` + ids["gamma"] + `","` + ids["beta"] + `"]}`, meta: `{}`, wantCode: rpc.CodeForeignKeyViolation},
			{name: "still there", roles: all, action: "find_page", params: `{"name":"gamma"}`, meta: `{}`, wantNames: []string{"gamma"}, wantTotal: 1, wantPage: 1, wantSize: 15},
			{name: "delete_many", roles: all, action: "delete_many", params: `{"pks":["` + ids["gamma"] + `","` + ids["delta"] + `"]}`, meta: `{}`, wantMessage: "Deleted successfully"},
			{name: "delete", roles: all, action: "delete", params: `{"id":"` + ids["a_b"] + `"}`, meta: `{}`, wantMessage: "Deleted successfully"},
			{name: "reads answer the plain ok", roles: all, action: "find_all", params: `{}`, meta: `{}`, wantMessage: "Success", wantNames: []string{"beta", "alpha2"}},
			{name: "what is left", roles: all, action: "find_page", params: `{}`, meta: `{}`, wantNames: []string{"beta", "alpha2"}, wantTotal: 2, wantPage: 1, wantSize: 15},
		}
		for _, tt := range tests {
			a := call(t, hs, tt.roles, tt.action, tt.params, tt.meta)
			if a.Code != tt.wantCode {
				t.Errorf("%s: code = %d (%s), want %d", tt.name, a.Code, a.Message, tt.wantCode)
				continue
			}
			if tt.wantMessage != "" && a.Message != tt.wantMessage {
				t.Errorf("%s: message = %q, want %q", tt.name, a.Message, tt.wantMessage)
			}
			if tt.wantNames == nil {
				continue
			}
			var rows []widget
			if tt.action == "find_page" {
				var p crud.Page[widget]
				if err := json.Unmarshal(a.Data, &p); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				if p.Total != tt.wantTotal || p.Page != tt.wantPage || p.Size != tt.wantSize {
					t.Errorf("%s: page/size/total = %d/%d/%d, want %d/%d/%d", tt.name, p.Page, p.Size, p.Total, tt.wantPage, tt.wantSize, tt.wantTotal)
				}
				rows = p.Items
			} else if tt.action == "find_one" {
				var w widget
				if err := json.Unmarshal(a.Data, &w); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				rows = []widget{w}
			} else if err := json.Unmarshal(a.Data, &rows); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var names []string
			for _, r := range rows {
				names = append(names, r.Name)
			}
			if !slices.Equal(names, tt.wantNames) {
				t.Errorf("%s: names = %v, want %v", tt.name, names, tt.wantNames)
			}
		}
		var got widget
		if err := d.NewSelect().Model(&got).Where("name = 'alpha2'").Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got.CreatedBy != "u-1" || got.UpdatedBy != "u-1" || !got.CreatedAt.Equal(now) || got.Size != 9 {
			t.Errorf("stored row = %+v, want audit by u-1 at %v and size 9", got, now)
		}
	})
}

// TestTimeJSON: audit times render as the original's local date-time and read back.
func TestTimeJSON(t *testing.T) {
	t.Parallel()
	in := crud.NewTime(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"` + in.Local().Format(time.DateTime) + `"`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	var out crud.Time
	if err := json.Unmarshal(b, &out); err != nil || !out.Equal(in.Time) {
		t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, out, err, in)
	}
	if b, _ := json.Marshal(crud.Time{}); string(b) != "null" {
		t.Errorf("zero time = %s, want null", b)
	}
}

// TestReadMeta covers the paging rules of wire-core §9.
func TestReadMeta(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		meta       string
		page, size int
	}{{`{}`, 1, 15}, {`{"page":3,"size":20}`, 3, 20}, {`{"page":-1,"size":0}`, 1, 15}, {`{"size":1001}`, 1, 1000}, {`{"page":"2","size":true}`, 1, 15}} {
		m := crud.ReadMeta(json.RawMessage(tt.meta))
		if m.Page != tt.page || m.Size != tt.size {
			t.Errorf("ReadMeta(%s) = %d/%d, want %d/%d", tt.meta, m.Page, m.Size, tt.page, tt.size)
		}
	}
}

// TestScopeAndStamp: Scope hides rows from find_page and makes them not found (2001) for update
// and delete; Stamp pins what the caller may not choose before Build.
func TestScopeAndStamp(t *testing.T) {
	t.Parallel()
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		createTables(t, d)
		restricted := func(c rpc.Call) bool { return !slices.Contains(c.Principal.Roles, "seeall") }
		hs := serve(t, d, time.Now(), func(r *crud.Resource[widget, *widget, widgetSearch, widgetParams]) {
			r.Scope = func(c rpc.Call, q *bun.SelectQuery) (*bun.SelectQuery, error) {
				if restricted(c) {
					q = q.Where("enabled = ?", true)
				}
				return q, nil
			}
			r.Stamp = func(_ context.Context, c rpc.Call, p *widgetParams) error {
				if restricted(c) {
					p.Enabled = true
				}
				return nil
			}
		})
		const perms = "test.widget.query,test.widget.create,test.widget.update,test.widget.delete"
		admin, user := perms+",seeall", perms
		ids := map[string]string{}
		for _, w := range []struct {
			name, roles string
			enabled     bool
		}{{"hidden", admin, false}, {"shown", admin, true}, {"stamped", user, false}} {
			a := call(t, hs, w.roles, "create", fmt.Sprintf(`{"name":%q,"size":1,"enabled":%t}`, w.name, w.enabled), "{}")
			var c crud.Created
			if a.Code != 0 || json.Unmarshal(a.Data, &c) != nil {
				t.Fatalf("create %s = %+v", w.name, a)
			}
			ids[w.name] = c.ID
		}
		total := func(roles string) int {
			var pg struct{ Total int }
			json.Unmarshal(call(t, hs, roles, "find_page", "{}", "{}").Data, &pg)
			return pg.Total
		}
		if got := total(user); got != 2 {
			t.Errorf("restricted find_page total = %d, want 2 (the hidden row out of scope, the stamped one enabled)", got)
		}
		if got := total(admin); got != 3 {
			t.Errorf("unrestricted find_page total = %d, want 3", got)
		}
		if a := call(t, hs, user, "update", fmt.Sprintf(`{"id":%q,"name":"x","size":2}`, ids["hidden"]), "{}"); a.Code != rpc.CodeRecordNotFound {
			t.Errorf("update out of scope = %d, want 2001", a.Code)
		}
		if a := call(t, hs, user, "delete", fmt.Sprintf(`{"id":%q}`, ids["hidden"]), "{}"); a.Code != rpc.CodeRecordNotFound {
			t.Errorf("delete out of scope = %d, want 2001", a.Code)
		}
		if a := call(t, hs, admin, "delete", fmt.Sprintf(`{"id":%q}`, ids["hidden"]), "{}"); a.Code != 0 {
			t.Errorf("delete in scope = %d (%s)", a.Code, a.Message)
		}
	})
}

// part is a model without the audit columns: the sort columns every search allows by default
// (createdAt, updatedAt) are not its columns.
type part struct {
	bun.BaseModel `bun:"table:crud_part"`
	ID            string `bun:"id,pk" json:"id"`
	WidgetID      string `bun:"widget_id" json:"widgetId"`
}

// TestSortOnlyColumnsOfTheModel: meta.sort naming a default sort column the model lacks is the
// caller's mistake (400/1400), not a failed query (500), on every database.
func TestSortOnlyColumnsOfTheModel(t *testing.T) {
	t.Parallel()
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		createTables(t, d)
		search := crud.NewSearch[widgetSearch]()
		for _, tc := range []struct {
			column string
			ok     bool
		}{{"id", true}, {"updatedAt", false}, {"created_at", false}, {"widgetId", false}} {
			q, err := search.Sort(d.NewSelect().Model((*part)(nil)), []crud.Order{{Column: tc.column, Direction: "desc"}})
			if !tc.ok {
				var e *rpc.Error
				if !errors.As(err, &e) || e.Code != rpc.CodeBadRequest {
					t.Errorf("sort by %s = %v, want 400/%d", tc.column, err, rpc.CodeBadRequest)
				}
				continue
			}
			var rows []part
			if err != nil {
				t.Fatalf("sort by %s: %v", tc.column, err)
			}
			if err := q.Scan(context.Background(), &rows); err != nil {
				t.Fatalf("sort by %s: query: %v", tc.column, err)
			}
		}
	})
}
