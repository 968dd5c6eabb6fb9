package approval

import (
	"context"
	"database/sql"
	"errors"

	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// queries is the read side of the engine: the lists, counts, metrics and instance details of
// approval/my and approval/admin (query_*.go). It reads what the commands (command_*.go) wrote
// and writes nothing; it shares the Service's database, clock and graph cache, and the checks
// it reports as a viewer's possible actions are the commands' own (rules.go), so the two sides
// cannot disagree. Module registers its operations.
type queries struct{ *Service }

// The list queries of approval/my and approval/admin (issue #24 item 5) answer in at most two
// statements whatever the page size: one SELECT of the page that joins the names of flows, nodes
// and categories — never a lookup per row — and, only when the page cannot tell the total, one
// COUNT over the filtered base table (joined only where a filter needs the joined table).

// scanPage answers the page p asks (default 20, at most 1000) of the rows q selects: q holds the
// base table and the filters, show adds the display joins, columns and order. The page is read
// first; a page that is neither full nor empty past the first ends the list, so its rows give the
// total and no COUNT runs — a user's pending list, the hot case, answers in one statement.
func scanPage[T any](ctx context.Context, q *bun.SelectQuery, p PageParams, show func(*bun.SelectQuery) *bun.SelectQuery) (*crud.Page[T], error) {
	page, size := p.bounds()
	offset := (page - 1) * size
	items := []T{}
	if err := show(q.Clone()).Limit(int64(size)).Offset(int64(offset)).Scan(ctx, &items); err != nil {
		return nil, err
	}
	total := int64(offset + len(items))
	if len(items) == size || (len(items) == 0 && page > 1) {
		n, err := q.Count(ctx)
		if err != nil {
			return nil, err
		}
		total = n
	}
	return &crud.Page[T]{Page: page, Size: size, Total: total, Items: items}, nil
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
