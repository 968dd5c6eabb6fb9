package crud

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Paging limits of find_page (wire-core §9: meta.page 1-based, <1 → 1; meta.size <1 → the
// default 15, capped at 1000).
const (
	DefaultPageSize = 15
	MaxPageSize     = 1000
)

// DefaultFindAllLimit is the safety limit of find_all: at most this many rows are answered.
const DefaultFindAllLimit = 10000

// Page is a find_page result: {page, size, total, items}, items never null.
type Page[T any] struct {
	Page  int   `json:"page"`
	Size  int   `json:"size"`
	Total int64 `json:"total"`
	Items []T   `json:"items"`
}

// Order is one entry of meta.sort (wire-core §9): a column, "asc" or "desc" (any case), and
// where NULLs go (0 the database's default, 1 first, 2 last).
type Order struct {
	Column     string `json:"column"`
	Direction  string `json:"direction"`
	NullsOrder int    `json:"nullsOrder"`
}

// Meta is what the CRUD operations read from the envelope's meta.
type Meta struct {
	Page int     `json:"page"`
	Size int     `json:"size"`
	Sort []Order `json:"sort"`
}

// ReadMeta decodes meta leniently: a malformed value of page, size or sort takes the defaults,
// as the original's decoder does, and page and size are clamped (wire-core §9).
func ReadMeta(meta json.RawMessage) Meta {
	var m Meta
	if json.Unmarshal(meta, &m) != nil {
		var loose struct {
			Page json.RawMessage `json:"page"`
			Size json.RawMessage `json:"size"`
			Sort json.RawMessage `json:"sort"`
		}
		_ = json.Unmarshal(meta, &loose) // meta is an object by the engine's check
		m = Meta{}
		_ = json.Unmarshal(loose.Page, &m.Page)
		_ = json.Unmarshal(loose.Size, &m.Size)
		_ = json.Unmarshal(loose.Sort, &m.Sort)
	}
	m.Page = max(m.Page, 1)
	if m.Size <= 0 {
		m.Size = DefaultPageSize
	}
	m.Size = min(m.Size, MaxPageSize)
	return m
}

// Filter is one search condition of a typed search struct S, built once at registration by
// Eq, EqPtr, Contains or Where. set reports whether the search carries a value for it; apply
// adds the condition.
type Filter[S any] struct {
	set   func(s *S) bool
	apply func(q *bun.SelectQuery, s *S) *bun.SelectQuery
}

// Eq filters column = value; the zero value of V means "no filter".
func Eq[S any, V comparable](column string, get func(s *S) V) Filter[S] {
	var zero V
	return Filter[S]{
		set:   func(s *S) bool { return get(s) != zero },
		apply: func(q *bun.SelectQuery, s *S) *bun.SelectQuery { return q.Where("? = ?", bun.Ident(column), get(s)) },
	}
}

// EqPtr filters column = *value; a nil pointer means "no filter" (booleans such as isEnabled).
func EqPtr[S any, V any](column string, get func(s *S) *V) Filter[S] {
	return Filter[S]{
		set:   func(s *S) bool { return get(s) != nil },
		apply: func(q *bun.SelectQuery, s *S) *bun.SelectQuery { return q.Where("? = ?", bun.Ident(column), *get(s)) },
	}
}

// Contains filters column containing the text literally (LIKE with its wildcards escaped); an
// empty text means "no filter".
func Contains[S any](column string, get func(s *S) string) Filter[S] {
	return Filter[S]{
		set: func(s *S) bool { return get(s) != "" },
		apply: func(q *bun.SelectQuery, s *S) *bun.SelectQuery {
			return q.Where("? LIKE ? ESCAPE '!'", bun.Ident(column), "%"+EscapeLike(get(s))+"%")
		},
	}
}

// Keyword filters rows where any of columns contains the text, ignoring letter case the same way
// on every dialect (LOWER on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's and
// MySQL's usual collations are not); an empty text means "no filter". It is the console's search
// box over several columns at once (a user name or a display name).
func Keyword[S any](get func(s *S) string, columns ...string) Filter[S] {
	return Filter[S]{
		set: func(s *S) bool { return get(s) != "" },
		apply: func(q *bun.SelectQuery, s *S) *bun.SelectQuery {
			pattern := "%" + EscapeLike(strings.ToLower(get(s))) + "%"
			return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				for _, c := range columns {
					q = q.WhereOr("LOWER(?) LIKE ? ESCAPE '!'", bun.Ident(c), pattern)
				}
				return q
			})
		},
	}
}

// Where is a filter of its own: set reports whether s carries it, apply adds it.
func Where[S any](set func(s *S) bool, apply func(q *bun.SelectQuery, s *S) *bun.SelectQuery) Filter[S] {
	return Filter[S]{set: set, apply: apply}
}

// EscapeLike escapes LIKE wildcards with '!', an escape character that needs no quoting in any
// of the three dialects (SQLite has no default one).
func EscapeLike(s string) string {
	return strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(s)
}

// Search is the filter plan of a search struct S, built once: its filters, the columns meta.sort
// may name and the default order.
type Search[S any] struct {
	filters []Filter[S]
	sorts   map[string]string
	order   string
}

// NewSearch builds the plan of S from its filters. The default order is "id DESC" (UUIDv7
// ids are time-ordered, so newest first, the original's primary-key-descending default).
func NewSearch[S any](filters ...Filter[S]) *Search[S] {
	s := &Search[S]{filters: filters, sorts: map[string]string{}, order: "id DESC"}
	return s.Sortable("id", "createdAt", "updatedAt")
}

// Sortable allows meta.sort to name the columns, each given by its JSON (camelCase) name; the
// snake_case column name is accepted too.
func (s *Search[S]) Sortable(names ...string) *Search[S] {
	for _, n := range names {
		col := snake(n)
		s.sorts[n], s.sorts[col] = col, col
	}
	return s
}

// SortAs allows meta.sort to name a column by a JSON name that is not its snake_case form
// ("uploadedAt" for started_at).
func (s *Search[S]) SortAs(name, column string) *Search[S] {
	s.sorts[name], s.sorts[column] = column, column
	return s
}

// OrderBy replaces the default order (an SQL ORDER BY list of trusted column names).
func (s *Search[S]) OrderBy(order string) *Search[S] { s.order = order; return s }

// Apply adds the filters of params, each falling back to the same filter in meta (the original
// reads search fields from meta; its client sends them in params — wire-integration §14).
func (s *Search[S]) Apply(q *bun.SelectQuery, params *S, meta json.RawMessage) *bun.SelectQuery {
	fallback := metaSearch[S](meta)
	for _, f := range s.filters {
		switch {
		case f.set(params):
			q = f.apply(q, params)
		case fallback != nil && f.set(fallback):
			q = f.apply(q, fallback)
		}
	}
	return q
}

// metaKeys are the meta keys of the framework itself, never search fields (wire-core §9).
var metaKeys = []string{"page", "size", "sort", "format", "labelColumn", "valueColumn", "descriptionColumn", "metaColumns"}

// metaSearch decodes the search fields meta carries besides the framework's own keys, or nil
// when it carries none (the usual case: the real client sends only paging in meta).
func metaSearch[S any](meta json.RawMessage) *S {
	if len(meta) <= 2 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil
	}
	for _, k := range metaKeys {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m) // re-encoding decoded raw values cannot fail
	s := new(S)
	if json.Unmarshal(b, s) != nil {
		return nil
	}
	return s
}

// Sort adds meta.sort, or the default order when it is empty; the id breaks ties so pages are
// stable. A column not declared Sortable, or declared but not a column of the query's model (the
// default createdAt/updatedAt on a table without them), answers 400/1400.
func (s *Search[S]) Sort(q *bun.SelectQuery, orders []Order) (*bun.SelectQuery, error) {
	if len(orders) == 0 {
		return q.OrderExpr(s.order), nil
	}
	var table *schema.Table
	if m, ok := q.GetModel().(bun.TableModel); ok {
		table = m.Table()
	}
	for _, o := range orders {
		col, ok := s.sorts[o.Column]
		if ok && table != nil {
			ok = table.HasField(col)
		}
		if !ok {
			return nil, rpc.ErrBadRequest.WithMessage(fmt.Sprintf("sort column %q is not sortable", o.Column))
		}
		switch o.NullsOrder {
		case 1:
			q = q.OrderExpr("(? IS NULL) DESC", bun.Ident(col))
		case 2:
			q = q.OrderExpr("(? IS NULL) ASC", bun.Ident(col))
		}
		dir := "ASC"
		if strings.EqualFold(o.Direction, "desc") {
			dir = "DESC"
		}
		q = q.OrderExpr("? "+dir, bun.Ident(col))
	}
	return q.OrderExpr("id DESC"), nil
}

// snake turns a camelCase name into snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
