package schema_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/svctest"
)

// newServer boots the default boot chain on a fresh database of kind, with the role admin
// granting every permission and the role dba granting sys.schema.query.
func newServer(t *testing.T, kind config.DBKind) *svctest.Server {
	t.Helper()
	return svctest.New(t, svctest.WithDB(kind), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}, "dba": {schema.Permission}}
	}))
}

// admin is an authenticated caller with every permission.
func admin() svctest.CallOption { return svctest.As(svctest.User("admin", "admin")) }

func TestSchemaAPI(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := newServer(t, kind)
		loadFixture(t, srv.DB())
		want := golden(t, srv.DB())
		admin := admin()
		dba := svctest.As(svctest.User("dba", "dba"))
		nobody := svctest.As(svctest.User("nobody"))

		tests := []struct {
			name        string
			action      string
			params      any
			as          []svctest.CallOption
			wantStatus  int
			wantCode    int
			wantMessage string
			want        any // the data; nil means JSON null
		}{
			{"list tables", "list_tables", nil, []svctest.CallOption{admin}, 200, 0, "", want["list_tables"]},
			{"customer: partial and expression unique keys, comments", "get_table_schema",
				map[string]any{"name": "fx_customer"}, []svctest.CallOption{admin}, 200, 0, "", want["fx_customer"]},
			{"order: composite key, cascade, check, index", "get_table_schema",
				map[string]any{"name": "fx_order"}, []svctest.CallOption{admin}, 200, 0, "", want["fx_order"]},
			{"order line: composite foreign key", "get_table_schema",
				map[string]any{"name": "fx_order_line"}, []svctest.CallOption{admin}, 200, 0, "", want["fx_order_line"]},
			{"list views", "list_views", nil, []svctest.CallOption{admin}, 200, 0, "", want["list_views"]},
			{"unknown table", "get_table_schema", map[string]any{"name": "fx_missing"},
				[]svctest.CallOption{admin}, 200, schema.CodeTableNotFound, "Table not found", nil},
			{"a view is not a table", "get_table_schema", map[string]any{"name": "fx_open_order"},
				[]svctest.CallOption{admin}, 200, schema.CodeTableNotFound, "Table not found", nil},
			{"name is a parameter, not SQL", "get_table_schema", map[string]any{"name": "fx_order' OR '1'='1"},
				[]svctest.CallOption{admin}, 200, schema.CodeTableNotFound, "Table not found", nil},
			{"name required", "get_table_schema", map[string]any{}, []svctest.CallOption{admin}, 400, rpc.CodeBadRequest, "", nil},
			{"list tables needs bearer", "list_tables", nil, nil, 401, rpc.CodeUnauthenticated, "", nil},
			{"get table schema needs bearer", "get_table_schema", map[string]any{"name": "fx_order"}, nil, 401, rpc.CodeUnauthenticated, "", nil},
			{"list views needs bearer", "list_views", nil, nil, 401, rpc.CodeUnauthenticated, "", nil},
			// issue #11: the inventory needs sys.schema.query
			{"list tables needs the permission", "list_tables", nil, []svctest.CallOption{nobody}, 403, rpc.CodeAccessDenied, "", nil},
			{"get table schema needs the permission", "get_table_schema", map[string]any{"name": "fx_order"}, []svctest.CallOption{nobody}, 403, rpc.CodeAccessDenied, "", nil},
			{"list views needs the permission", "list_views", nil, []svctest.CallOption{nobody}, 403, rpc.CodeAccessDenied, "", nil},
			{"the permission alone suffices", "list_tables", nil, []svctest.CallOption{dba}, 200, 0, "", want["list_tables"]},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp := srv.Call(t, schema.Resource, tt.action, tt.params, tt.as...)
				if resp.Status != tt.wantStatus || resp.Code != tt.wantCode {
					t.Fatalf("status, code = %d, %d (%s), want %d, %d", resp.Status, resp.Code, resp.Message, tt.wantStatus, tt.wantCode)
				}
				if tt.wantMessage != "" && resp.Message != tt.wantMessage {
					t.Errorf("message = %q, want %q", resp.Message, tt.wantMessage)
				}
				if tt.wantCode != 0 {
					if string(resp.Data) != "null" {
						t.Errorf("data = %s, want null", resp.Data)
					}
					return
				}
				var got any
				resp.DataAs(t, &got)
				if tt.action != "get_table_schema" {
					got = fixtureOnly(got)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("data mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestSchemaRateLimit: every action admits 60 calls per engine period and principal, then
// answers 429/1401 (spec §4.1, wire-core §4).
func TestSchemaRateLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t, config.SQLite)
	for _, action := range []string{"list_tables", "get_table_schema", "list_views"} {
		t.Run(action, func(t *testing.T) {
			as := svctest.As(svctest.User("limit-"+action, "admin"))
			params := map[string]any{"name": "fx_missing"}
			for i := 1; i <= 60; i++ {
				resp := srv.Call(t, schema.Resource, action, params, as)
				if resp.Status != http.StatusOK {
					t.Fatalf("call %d: status %d, code %d", i, resp.Status, resp.Code)
				}
				if got := resp.Header.Get("X-RateLimit-Limit"); got != "60" {
					t.Fatalf("call %d: X-RateLimit-Limit = %q, want 60", i, got)
				}
			}
			resp := srv.Call(t, schema.Resource, action, params, as)
			if resp.Status != http.StatusTooManyRequests || resp.Code != rpc.CodeTooManyRequests {
				t.Errorf("call 61: status, code = %d, %d, want 429, %d", resp.Status, resp.Code, rpc.CodeTooManyRequests)
			}
		})
	}
}

// TestTableSchemaJSONNames pins the omitempty rules of wire-core §8.1 on a table with nothing
// optional: no schema-level keys beyond name, schema and columns.
func TestTableSchemaJSONNames(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(schema.TableSchema{Name: "t", Columns: []schema.Column{{Name: "c", Type: "int"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"t","columns":[{"name":"c","type":"int","nullable":false}]}`
	if string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}
