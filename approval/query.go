package approval

import (
	"context"
	"database/sql"
	"errors"

	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// The list queries of approval/my and approval/admin (issue #24 item 5) answer in a fixed number
// of statements whatever the page size: one COUNT over the filtered base table (joined only
// where a filter needs the joined table) and one SELECT of the page that joins the names of
// flows, nodes and categories — never a lookup per row.

// scanPage answers the page p asks (default 20, at most 1000) of the rows q selects: q holds the
// base table and the filters, show adds the display joins, columns and order. Two statements:
// q's count, then the page.
func scanPage[T any](ctx context.Context, q *bun.SelectQuery, p PageParams, show func(*bun.SelectQuery) *bun.SelectQuery) (*crud.Page[T], error) {
	page, size := p.bounds()
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	items := []T{}
	if err := show(q).Limit(int64(size)).Offset(int64((page-1)*size)).Scan(ctx, &items); err != nil {
		return nil, err
	}
	return &crud.Page[T]{Page: page, Size: size, Total: int64(total), Items: items}, nil
}

// notFoundAs maps sql.ErrNoRows to notFound and passes every other error through.
func notFoundAs(err, notFound error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return notFound
	}
	return err
}

// containsLike is the LIKE pattern of "contains keyword" with '!' as the escape character.
func containsLike(keyword string) string { return "%" + crud.EscapeLike(keyword) + "%" }
