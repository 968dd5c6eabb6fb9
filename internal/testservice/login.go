package testservice

import (
	"testing"

	"github.com/svc-framework/svc/config"
)

// ReadOnlyLogin returns ds with a login of its own that may only read: a uniquely named role or
// user created now on ds's server and dropped when the test ends (before ds's schema or
// database, whose clean-up was registered earlier). It is the least-privileged login the
// read-only query runner (db.ReadOnly) requires:
//
//   - postgres: CREATE ROLE r_<random> LOGIN (the test server trusts 127.0.0.1, so no password),
//     USAGE on ds's schema and SELECT on its tables, present and future (default privileges of
//     ds's login, which creates them);
//   - mysql: CREATE USER 'r_<random>' at '%', 'localhost' and '127.0.0.1' without a password,
//     with SELECT on ds's database only;
//   - sqlite: ds unchanged (a file has no logins).
func ReadOnlyLogin(t testing.TB, ds config.DataSource) config.DataSource {
	t.Helper()
	name := "r_" + Suffix(6)
	switch ds.Type {
	case config.Postgres:
		schema := `"` + ds.Schema + `"`
		isolateAll(t, ds, []string{
			"CREATE ROLE " + name + " LOGIN",
			"GRANT USAGE ON SCHEMA " + schema + " TO " + name,
			"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + name,
			"ALTER DEFAULT PRIVILEGES IN SCHEMA " + schema + " GRANT SELECT ON TABLES TO " + name,
		}, []string{"DROP OWNED BY " + name, "DROP ROLE IF EXISTS " + name})
	case config.MySQL:
		var create, drop []string
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			user := "'" + name + "'@'" + host + "'"
			create = append(create, "CREATE USER "+user, "GRANT SELECT ON `"+ds.Database+"`.* TO "+user)
			drop = append(drop, "DROP USER IF EXISTS "+user)
		}
		isolateAll(t, ds, create, drop)
	default:
		return ds
	}
	ds.User, ds.Password = name, ""
	return ds
}

// isolateAll runs the create statements on the server of admin now, and the drop statements at
// the end of the test.
func isolateAll(t testing.TB, admin config.DataSource, create, drop []string) {
	t.Helper()
	for _, stmt := range create {
		if err := adminExec(admin, stmt); err != nil {
			t.Fatalf("testservice: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range drop {
			if err := adminExec(admin, stmt); err != nil {
				t.Errorf("testservice: %v", err)
			}
		}
	})
}
