// Package crud is the framework's CRUD convention over bun models, written once for every
// module that manages definitions through /api (integration, approval). LabelProblem and
// LabelFilter are the labels rule and its JSON filter the modules share. It is a
// platform package: it imports rpc and db, never a feature module.
//
// A Resource[M, *M, S, P] declares one table-backed resource: the model M (a bun model that
// embeds Audited: id, created_at/by, updated_at/by), the typed search struct S, the write params
// P, a Build function that validates params and returns the row, and optional BeforeDelete and
// View (masking) hooks. Ops returns the operations (wire-integration §5, the original's crud
// builders):
//
//   - find_page: filters of S, meta.page (1-based, default 1) and meta.size (default 15,
//     capped at 1000), meta.sort; answers {page, size, total, items}, items never null.
//   - find_all: the same filters and sort, at most FindAllLimit rows (default 10000).
//   - create: Build(p, nil), audit columns set, a UUIDv7 id; answers {id}.
//   - update: params carry id (none → 400/1400); the stored row is read in the transaction
//     (missing → 2001), Build(p, old) returns the new row; created_* are kept. No data.
//   - delete {id}: missing → 2001. No data.
//   - delete_many {pks}: what the original's client sends for bulk deletes; every row or none
//     in one transaction. Permission: the delete permission. No data.
//
// Scope restricts every query of a resource to what the caller may see (a tenant, an owner): the
// find operations and the row update and delete read, so a row outside it is not found (2001).
// Stamp runs before Build on create and update with the caller, to fill or pin params the caller
// may not choose. A module keeps only the operations its client uses by filtering Ops by action.
//
// Permissions are <Permission>.query (find_*), .create, .update and .delete; mutations are
// audited. A duplicate unique key answers rpc.ErrRecordAlreadyExists (2002), a foreign key
// rpc.ErrForeignKeyViolation (2003) (DBError).
//
// Search fields are read from params, each falling back to the same field in meta: the
// original reads them from meta, its client sends them in params (wire-integration §14). The
// framework's own meta keys (page, size, sort, …) are never search fields. The filter plan is
// built once with NewSearch from typed getters (Eq, EqPtr, Contains, Where): nothing is looked
// up by reflection per request. meta.sort is [{column, direction, nullsOrder}] (wire-core §9);
// columns must be declared Sortable by their JSON name (the snake_case name works too), any
// other column answers 400/1400; the id breaks ties. The default order is id DESC (UUIDv7 ids
// are time-ordered: newest first, the original's primary key descending).
//
// Audit times are Time: stored in UTC, rendered as "2006-01-02 15:04:05" in the server's zone
// (the original's timex.DateTime that its client reads).
//
// Success messages: create, update and delete (and delete_many) answer with the original's message
// keys crud_created / crud_updated / crud_deleted (rpc.SuccessMessage), translated in the
// server's language, because the original's client shows a mutation's message to the user.
package crud
