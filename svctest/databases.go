package svctest

import (
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// EachDB runs fn as the subtests "sqlite", "postgres" and "mysql", each with a database of its
// own from NewDB: SQLite always, PostgreSQL when SVC_TEST_POSTGRES_DSN is set and MySQL/MariaDB
// when SVC_TEST_MYSQL_DSN is set (otherwise the subtest is skipped, or fails when
// SVC_TEST_REQUIRE_SERVICES=1). fn may call t.Parallel: nothing is shared between subtests.
func EachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Helper()
	testservice.EachDB(t, fn)
}

// NewDB opens DataSource(t, kind) as data source "primary" and closes it when the test ends
// (before the isolated database or schema is dropped).
func NewDB(t testing.TB, kind config.DBKind) *db.DB {
	t.Helper()
	return testservice.OpenDB(t, testservice.DataSource(t, kind))
}

// DataSource returns a data source of kind on storage that belongs to t alone, removed when the
// test ends, for opening with db.Open or booting whole servers:
//
//   - sqlite: a new file in t.TempDir();
//   - postgres: a new schema t_<random> in the database of SVC_TEST_POSTGRES_DSN (a URL), used
//     through the data source's schema (search_path), dropped with CASCADE at clean-up;
//   - mysql: a new database t_<random> on the server of SVC_TEST_MYSQL_DSN, dropped at clean-up.
//
// The clean-up is registered before the caller's, so handles the test opens on the data source
// are closed before the drop. A missing DSN skips the test, or fails it when
// SVC_TEST_REQUIRE_SERVICES=1.
func DataSource(t testing.TB, kind config.DBKind) config.DataSource {
	t.Helper()
	return testservice.DataSource(t, kind)
}
