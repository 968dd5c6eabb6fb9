package schema

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// Resource is the name of the resource this module mounts on /api.
const Resource = "sys/schema"

// rateLimit is the per-operation maximum of every sys/schema action per engine period (spec
// §4.1, wire-core §4).
const rateLimit = 60

// Permission is the permission token every sys/schema action requires (svc addition, issue #11:
// the table and column inventory is not for every authenticated user).
const Permission = "sys.schema.query"

//go:embed messages
var messageFiles embed.FS

// Messages returns the module's message catalog: messages/<lang>/schema.json.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// Options are the schema module's extension points; it has none yet. The type keeps the one
// constructor shape of every module (New(deps, opts)).
type Options struct{}

// New builds the schema module's Service over the primary data source. It does no I/O; an
// unsupported data source type is an error.
func New(deps app.Platform, _ Options) (*Service, error) {
	ins, err := newInspector(deps.DB)
	if err != nil {
		return nil, err
	}
	return &Service{ins: ins}, nil
}

// Module lists what the module adds to the server: the sys/schema resource.
func (s *Service) Module() app.Module {
	return app.Module{Name: "schema", Resources: []rpc.Resource{s.resource()}, Messages: Messages()}
}

// Service holds the handlers of sys/schema.
type Service struct {
	ins inspector
}

func (s *Service) resource() rpc.Resource {
	limit, perm := rpc.RateLimit(rateLimit, 0), rpc.RequiredPermission(Permission)
	return rpc.Resource{Name: Resource, Ops: []rpc.Op{
		rpc.Handle("list_tables", s.listTables, limit, perm),
		rpc.Handle("get_table_schema", s.getTableSchema, limit, perm),
		rpc.Handle("list_views", s.listViews, limit, perm),
	}}
}

// TableParams are the params of get_table_schema.
type TableParams struct {
	// Name is the table to describe (required).
	Name string `json:"name"`
}

// Validate requires Name (400/1400 naming the field otherwise).
func (p *TableParams) Validate() error {
	var c rpc.Check
	c.Required("name", p.Name != "")
	return c.Err()
}

// InspectTable describes the base table name of the primary database, or answers nil and no
// error when there is none (the approval module's business-binding check uses it through the
// composition root).
func (s *Service) InspectTable(ctx context.Context, name string) (*TableSchema, error) {
	t, err := s.ins.table(ctx, name)
	if errors.Is(err, ErrTableNotFound) {
		return nil, nil
	}
	return t, err
}

// listTables answers a bare array of the schema's base tables, by name.
func (s *Service) listTables(ctx context.Context, _ rpc.Call, _ rpc.NoParams) ([]Table, error) {
	tables, err := s.ins.tables(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema: list tables: %w", err)
	}
	return tables, nil
}

// getTableSchema describes one base table, or answers 2300.
func (s *Service) getTableSchema(ctx context.Context, _ rpc.Call, p TableParams) (*TableSchema, error) {
	t, err := s.ins.table(ctx, p.Name)
	if errors.Is(err, ErrTableNotFound) {
		return nil, ErrTableNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("schema: inspect table: %w", err)
	}
	sortByName(t)
	return t, nil
}

// listViews answers a bare array of the schema's views, by name.
func (s *Service) listViews(ctx context.Context, _ rpc.Call, _ rpc.NoParams) ([]View, error) {
	views, err := s.ins.views(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema: list views: %w", err)
	}
	return views, nil
}
