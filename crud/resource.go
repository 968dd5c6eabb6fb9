package crud

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// Query is the read side of a table-backed resource: find_page, find_all and find_one over
// the model M searched by S. Resource embeds it; a read-only resource (a log) uses it alone.
type Query[M any, S any] struct {
	// Name is the resource name ("integration/contract").
	Name string
	// Permission is the token prefix: the find operations need <Permission>.query.
	Permission string
	// DB is the database the table lives in.
	DB *db.DB
	// Search is the filter plan.
	Search *Search[S]
	// FindAllLimit is the safety limit of find_all (default DefaultFindAllLimit).
	FindAllLimit int
	// View turns a stored row into its answer (masking secrets); nil answers the row.
	View func(row *M) *M
	// Scope restricts every query of the resource to the rows the caller may see (tenancy,
	// ownership): the find operations and the row update and delete read, so a row outside the
	// scope is not found (2001). nil sees every row; an error fails the call.
	Scope func(c rpc.Call, q *bun.SelectQuery) (*bun.SelectQuery, error)
}

// Resource is one CRUD resource over the bun model M (a struct embedding Audited; PM is *M)
// searched by S and written from params P (wire-integration §5, the original's crud builders).
// Declare it once at module build; Ops returns the typed operations.
type Resource[M any, PM interface {
	*M
	Model
}, S any, P any] struct {
	Query[M, S]
	// Clock stamps the audit times.
	Clock func() time.Time
	// Build validates params and returns the row to write: old is nil on create, the stored row
	// on update (read in the write's transaction). Audit columns are set by the resource.
	Build func(ctx context.Context, tx bun.IDB, p *P, old PM) (PM, error)
	// ID returns the id params address on update.
	ID func(p *P) string
	// Stamp runs before Build on create and update with the caller: it fills or pins params
	// the caller may not choose (the tenant, the owner) and checks what only the caller decides
	// (references the caller may see). nil changes nothing.
	Stamp func(ctx context.Context, c rpc.Call, p *P) error
	// BeforeDelete runs in the delete's transaction before a row goes; an error aborts.
	BeforeDelete func(ctx context.Context, tx bun.IDB, row PM) error
}

// IDParams are the params of delete: {id}.
type IDParams struct {
	ID string `json:"id"`
}

// PKsParams are the params of delete_many: {pks: [id, …]}, what the original's client sends for
// a bulk delete (wire-integration §14).
type PKsParams struct {
	PKs []string `json:"pks"`
}

// Created is the answer of create: the primary-key map {id} (wire-integration §5).
type Created struct {
	ID string `json:"id"`
}

// ErrIDRequired answers an update or delete without an id (400/1400).
var ErrIDRequired = rpc.ErrBadRequest.WithMessage("id is required")

// FindPage is the find_page operation.
func (r *Query[M, S]) FindPage() rpc.Op {
	return rpc.Handle("find_page", r.findPage, rpc.RequiredPermission(r.Permission+".query"))
}

// FindAll is the find_all operation.
func (r *Query[M, S]) FindAll() rpc.Op {
	return rpc.Handle("find_all", r.findAll, rpc.RequiredPermission(r.Permission+".query"))
}

// FindOne is the find_one operation: the first row the search and order give; none is
// rpc.ErrRecordNotFound (2001).
func (r *Query[M, S]) FindOne() rpc.Op {
	return rpc.Handle("find_one", r.findOne, rpc.RequiredPermission(r.Permission+".query"))
}

// QueryOps are find_page and find_all.
func (r *Query[M, S]) QueryOps() []rpc.Op { return []rpc.Op{r.FindPage(), r.FindAll()} }

// Ops are find_page, find_all, create, update, delete and delete_many; mutations are audited.
func (r *Resource[M, PM, S, P]) Ops() []rpc.Op {
	return append(r.QueryOps(),
		rpc.Handle("create", r.create, rpc.RequiredPermission(r.Permission+".create"), rpc.Audit(), rpc.SuccessMessage(MessageCreated)),
		rpc.Handle("update", r.update, rpc.RequiredPermission(r.Permission+".update"), rpc.Audit(), rpc.SuccessMessage(MessageUpdated)),
		rpc.Handle("delete", r.delete, rpc.RequiredPermission(r.Permission+".delete"), rpc.Audit(), rpc.SuccessMessage(MessageDeleted)),
		rpc.Handle("delete_many", r.deleteMany, rpc.RequiredPermission(r.Permission+".delete"), rpc.Audit(), rpc.SuccessMessage(MessageDeleted)),
	)
}

// Resource returns the rpc resource with every operation of Ops.
func (r *Resource[M, PM, S, P]) Resource() rpc.Resource {
	return rpc.Resource{Name: r.Name, Ops: r.Ops()}
}

// Select returns a query over the table filtered by s (meta as fallback) and ordered by
// meta.sort or the default order.
func (r *Query[M, S]) Select(rows *[]M, s *S, meta json.RawMessage, m Meta) (*bun.SelectQuery, error) {
	q := r.Search.Apply(r.DB.NewSelect().Model(rows), s, meta)
	return r.Search.Sort(q, m.Sort)
}

// SelectFor is Select over the call's meta, restricted by Scope to what the caller of c may see.
func (r *Query[M, S]) SelectFor(c rpc.Call, rows *[]M, s *S, m Meta) (*bun.SelectQuery, error) {
	q, err := r.Select(rows, s, c.Meta, m)
	if err != nil || r.Scope == nil {
		return q, err
	}
	return r.Scope(c, q)
}

func (r *Query[M, S]) findPage(ctx context.Context, c rpc.Call, s S) (*Page[M], error) {
	m := ReadMeta(c.Meta)
	var rows []M
	q, err := r.SelectFor(c, &rows, &s, m)
	if err != nil {
		return nil, err
	}
	total, err := q.Limit(int64(m.Size)).Offset(int64((m.Page - 1) * m.Size)).ScanAndCount(ctx)
	if err != nil {
		return nil, err
	}
	return &Page[M]{Page: m.Page, Size: m.Size, Total: int64(total), Items: r.views(rows)}, nil
}

func (r *Query[M, S]) findAll(ctx context.Context, c rpc.Call, s S) ([]M, error) {
	var rows []M
	q, err := r.SelectFor(c, &rows, &s, ReadMeta(c.Meta))
	if err != nil {
		return nil, err
	}
	limit := r.FindAllLimit
	if limit <= 0 {
		limit = DefaultFindAllLimit
	}
	if err := q.Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, err
	}
	return r.views(rows), nil
}

// views applies View to every row; items are never null.
func (r *Query[M, S]) views(rows []M) []M {
	if rows == nil {
		rows = []M{}
	}
	if r.View != nil {
		for i := range rows {
			rows[i] = *r.View(&rows[i])
		}
	}
	return rows
}

func (r *Query[M, S]) findOne(ctx context.Context, c rpc.Call, s S) (*M, error) {
	var rows []M
	q, err := r.SelectFor(c, &rows, &s, ReadMeta(c.Meta))
	if err != nil {
		return nil, err
	}
	if err := q.Limit(1).Scan(ctx); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, rpc.ErrRecordNotFound
	}
	return &r.views(rows)[0], nil
}

func (r *Resource[M, PM, S, P]) create(ctx context.Context, c rpc.Call, p P) (*Created, error) {
	if err := r.stamp(ctx, c, &p); err != nil {
		return nil, err
	}
	row, err := r.Build(ctx, r.DB, &p, nil)
	if err != nil {
		return nil, err
	}
	a, now := row.Audit(), NewTime(r.Clock())
	a.ID, a.CreatedAt, a.UpdatedAt = rpc.NewID(), now, now
	a.CreatedBy, a.UpdatedBy = by(c), by(c)
	if _, err := r.DB.NewInsert().Model(row).Exec(ctx); err != nil {
		return nil, DBError(err)
	}
	return &Created{ID: a.ID}, nil
}

func (r *Resource[M, PM, S, P]) update(ctx context.Context, c rpc.Call, p P) (*struct{}, error) {
	id := r.ID(&p)
	if id == "" {
		return nil, ErrIDRequired
	}
	if err := r.stamp(ctx, c, &p); err != nil {
		return nil, err
	}
	return nil, r.DB.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		old, err := r.scoped(ctx, c, tx, id)
		if err != nil {
			return err
		}
		prior := *old.Audit()
		row, err := r.Build(ctx, tx, &p, old)
		if err != nil {
			return err
		}
		a := row.Audit()
		*a = prior
		a.UpdatedAt, a.UpdatedBy = NewTime(r.Clock()), by(c)
		if _, err := tx.NewUpdate().Model(row).WherePK().Exec(ctx); err != nil {
			return DBError(err)
		}
		return nil
	})
}

func (r *Resource[M, PM, S, P]) delete(ctx context.Context, c rpc.Call, p IDParams) (*struct{}, error) {
	if p.ID == "" {
		return nil, ErrIDRequired
	}
	return nil, r.deleteIDs(ctx, c, []string{p.ID})
}

func (r *Resource[M, PM, S, P]) deleteMany(ctx context.Context, c rpc.Call, p PKsParams) (*struct{}, error) {
	if len(p.PKs) == 0 {
		return nil, rpc.ErrBadRequest.WithMessage("pks is required")
	}
	return nil, r.deleteIDs(ctx, c, p.PKs)
}

// stamp runs Stamp when set.
func (r *Resource[M, PM, S, P]) stamp(ctx context.Context, c rpc.Call, p *P) error {
	if r.Stamp == nil {
		return nil
	}
	return r.Stamp(ctx, c, p)
}

// deleteIDs deletes every row of ids in one transaction: all of them or, when one is missing
// (2001) or still referenced (2003), none.
func (r *Resource[M, PM, S, P]) deleteIDs(ctx context.Context, c rpc.Call, ids []string) error {
	return r.DB.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		for _, id := range ids {
			row, err := r.scoped(ctx, c, tx, id)
			if err != nil {
				return err
			}
			if r.BeforeDelete != nil {
				if err := r.BeforeDelete(ctx, tx, row); err != nil {
					return err
				}
			}
			if _, err := tx.NewDelete().Model(row).WherePK().Exec(ctx); err != nil {
				return DBError(err)
			}
		}
		return nil
	})
}

// Get reads the row with id; a missing row is rpc.ErrRecordNotFound (2001).
func (r *Resource[M, PM, S, P]) Get(ctx context.Context, id string) (PM, error) {
	return r.get(ctx, r.DB, id)
}

func (r *Resource[M, PM, S, P]) get(ctx context.Context, idb bun.IDB, id string) (PM, error) {
	return r.read(ctx, idb.NewSelect(), id)
}

// scoped reads the row with id as the caller of c may see it: outside Scope it is not found.
func (r *Resource[M, PM, S, P]) scoped(ctx context.Context, c rpc.Call, idb bun.IDB, id string) (PM, error) {
	q := idb.NewSelect()
	if r.Scope != nil {
		var err error
		if q, err = r.Scope(c, q); err != nil {
			return nil, err
		}
	}
	return r.read(ctx, q, id)
}

func (r *Resource[M, PM, S, P]) read(ctx context.Context, q *bun.SelectQuery, id string) (PM, error) {
	row := PM(new(M))
	err := q.Model(row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rpc.ErrRecordNotFound
	}
	return row, err
}

// DBError maps a constraint violation to its business code: a duplicate unique key is
// rpc.ErrRecordAlreadyExists (2002), a foreign key rpc.ErrForeignKeyViolation (2003); other
// errors are returned as they are.
func DBError(err error) error {
	switch {
	case db.IsUniqueViolation(err):
		return rpc.ErrRecordAlreadyExists.Wrap(err)
	case db.IsForeignKeyViolation(err):
		return rpc.ErrForeignKeyViolation.Wrap(err)
	}
	return err
}

// by is the audit name of the caller: the principal id, "system" when there is none.
func by(c rpc.Call) string {
	if c.Principal == nil || c.Principal.ID == "" {
		return "system"
	}
	return c.Principal.ID
}

// Message keys of the success envelopes of create, update and delete (wire-integration §5; the
// platform catalog holds their texts).
const (
	MessageCreated = "crud_created"
	MessageUpdated = "crud_updated"
	MessageDeleted = "crud_deleted"
)
