package db_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
)

// Portable SQL: the same text is valid on PostgreSQL, MySQL/MariaDB and SQLite.
const (
	createNotes = "CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY, body VARCHAR(200) NOT NULL);\n"
	seedNotes   = "-- two rows, two statements (split on MySQL);\nINSERT INTO notes (id, body)\n  VALUES (1, 'one');\nINSERT INTO notes (id, body) VALUES (2, 'two');\n"
	tagNotes    = "ALTER TABLE notes ADD COLUMN tag VARCHAR(20);\nUPDATE notes SET tag = 'x'"
)

// moduleFS returns a module's migration tree with the same files under every dialect directory.
func moduleFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, dir := range []string{"postgres", "mysql", "sqlite"} {
		for name, body := range files {
			fsys[dir+"/"+name] = &fstest.MapFile{Data: []byte(body)}
		}
	}
	return fsys
}

func notesModule() db.Migrations {
	return db.Migrations{Module: "notes", FS: moduleFS(map[string]string{
		"001_create_notes.sql": createNotes,
		"002_seed.sql":         seedNotes,
		"003_tag.sql":          tagNotes,
	})}
}

type applied struct {
	Module  string
	Version int
	Name    string
}

func appliedRows(t *testing.T, d *db.DB) []applied {
	t.Helper()
	rows, err := d.QueryContext(t.Context(), "SELECT module, version, name FROM svc_schema_migrations ORDER BY module, version")
	if err != nil {
		t.Fatalf("read svc_schema_migrations: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var out []applied
	for rows.Next() {
		var a applied
		if err := rows.Scan(&a.Module, &a.Version, &a.Name); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var notesApplied = []applied{{"notes", 1, "create_notes"}, {"notes", 2, "seed"}, {"notes", 3, "tag"}}

func TestMigrateAppliesInOrderAndRerunIsNoop(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		set := notesModule()
		pending, err := db.Pending(ctx, d, set)
		if err != nil {
			t.Fatalf("Pending before: %v", err)
		}
		want := []db.Migration{
			{Module: "notes", Version: 1, Name: "create_notes", File: string(d.Kind) + "/001_create_notes.sql"},
			{Module: "notes", Version: 2, Name: "seed", File: string(d.Kind) + "/002_seed.sql"},
			{Module: "notes", Version: 3, Name: "tag", File: string(d.Kind) + "/003_tag.sql"},
		}
		if diff := cmp.Diff(want, pending, cmpopts.IgnoreUnexported(db.Migration{})); diff != "" {
			t.Errorf("Pending before Migrate (-want +got):\n%s", diff)
		}
		for run := 1; run <= 2; run++ { // 001 has no IF NOT EXISTS: a second application would fail
			if err := db.Migrate(ctx, d, set); err != nil {
				t.Fatalf("Migrate run %d: %v", run, err)
			}
			if diff := cmp.Diff(notesApplied, appliedRows(t, d)); diff != "" {
				t.Errorf("run %d: applied (-want +got):\n%s", run, diff)
			}
			if got := count(t, d, "notes WHERE tag = 'x'"); got != 2 {
				t.Errorf("run %d: tagged notes = %d, want 2", run, got)
			}
		}
		if pending, err := db.Pending(ctx, d, set); err != nil || len(pending) != 0 {
			t.Errorf("Pending after = %v, %v; want none", pending, err)
		}
	})
}

func TestMigrateModulesAreIndependent(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		other := db.Migrations{Module: "audit", FS: moduleFS(map[string]string{
			"001_audit.sql": "CREATE TABLE audit (id INTEGER NOT NULL PRIMARY KEY)",
		})}
		if err := db.Migrate(ctx, d, other); err != nil {
			t.Fatalf("Migrate audit: %v", err)
		}
		if err := db.Migrate(ctx, d, notesModule(), other); err != nil {
			t.Fatalf("Migrate notes, audit: %v", err)
		}
		want := append([]applied{{"audit", 1, "audit"}}, notesApplied...)
		if diff := cmp.Diff(want, appliedRows(t, d)); diff != "" {
			t.Errorf("applied (-want +got):\n%s", diff)
		}
	})
}

func TestMigrateConcurrentRunsApplyOnce(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		const runners = 4
		var wg sync.WaitGroup
		errs := make([]error, runners)
		for i := range runners {
			wg.Go(func() { errs[i] = db.Migrate(t.Context(), d, notesModule()) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("runner %d: %v", i, err)
			}
		}
		if diff := cmp.Diff(notesApplied, appliedRows(t, d)); diff != "" {
			t.Errorf("applied (-want +got):\n%s", diff)
		}
		if got := count(t, d, "notes"); got != 2 {
			t.Errorf("seeded notes = %d, want 2 (seed applied once)", got)
		}
	})
}

func TestMigrateFailureKeepsEarlierFiles(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		files := map[string]string{
			"001_create_notes.sql": createNotes,
			"002_seed.sql":         seedNotes,
			"003_broken.sql":       "INSERT INTO no_such_table (id) VALUES (1);\n",
			"004_later.sql":        "CREATE TABLE later (id INTEGER NOT NULL PRIMARY KEY)",
		}
		err := db.Migrate(ctx, d, db.Migrations{Module: "notes", FS: moduleFS(files)})
		if err == nil {
			t.Fatal("Migrate succeeded, want the error of 003_broken.sql")
		}
		for _, part := range []string{`"primary"`, `"notes"`, string(d.Kind) + "/003_broken.sql"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not contain %s", err, part)
			}
		}
		if diff := cmp.Diff(notesApplied[:2], appliedRows(t, d)); diff != "" {
			t.Errorf("applied after failure (-want +got):\n%s", diff)
		}

		files["003_broken.sql"] = "INSERT INTO notes (id, body) VALUES (3, 'three');\n"
		fixed := db.Migrations{Module: "notes", FS: moduleFS(files)}
		pending, err := db.Pending(ctx, d, fixed)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != 2 || pending[0].Version != 3 || pending[1].Version != 4 {
			t.Errorf("Pending after failure = %+v, want versions 3 and 4", pending)
		}
		if err := db.Migrate(ctx, d, fixed); err != nil {
			t.Fatalf("Migrate after fix: %v", err)
		}
		if got := count(t, d, "notes"); got != 3 {
			t.Errorf("notes after fix = %d, want 3", got)
		}
	})
}

func TestMigrateRejectsInvalidFiles(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ok := "CREATE TABLE x1 (id INTEGER)"
		only := func(dir, name string) fstest.MapFS {
			return fstest.MapFS{dir + "/" + name: &fstest.MapFile{Data: []byte(ok)}}
		}
		set := func(files ...string) []db.Migrations {
			m := map[string]string{}
			for _, f := range files {
				m[f] = ok
			}
			return []db.Migrations{{Module: "bad", FS: moduleFS(m)}}
		}
		other := string(config.Postgres)
		if d.Kind == config.Postgres {
			other = string(config.SQLite)
		}
		tests := []struct {
			name string
			sets []db.Migrations
			want string
		}{
			{"gap", set("001_a.sql", "003_c.sql"), "003_c.sql: version 2 is missing"},
			{"not starting at 1", set("002_b.sql"), "version 1 is missing"},
			{"duplicate version", set("001_a.sql", "001_b.sql"), "have the same version 1"},
			{"duplicate with more digits", set("001_a.sql", "0001_b.sql"), "have the same version 1"},
			{"no prefix", set("001_a.sql", "init.sql"), "init.sql: want files named NNN_name.sql"},
			{"short prefix", set("1_init.sql"), "1_init.sql: want files named NNN_name.sql"},
			{"dash", set("001-init.sql"), "001-init.sql: want files named"},
			{"not sql", set("001_a.sql", "README.md"), "README.md: want files named"},
			{"subdirectory", set("001_a.sql", "old/002_b.sql"), "old: want files named"},
			{"missing dialect directory", []db.Migrations{{Module: "bad", FS: only(other, "001_a.sql")}}, "directory " + string(d.Kind) + "/"},
			{"module twice", []db.Migrations{notesModule(), notesModule()}, `module "notes" is listed twice`},
			{"no module name", []db.Migrations{{FS: moduleFS(map[string]string{"001_a.sql": ok})}}, "needs a module name"},
			{"no FS", []db.Migrations{{Module: "bad"}}, "needs a module name and an FS"},
		}
		for _, tt := range tests {
			// A valid module listed first proves nothing is applied before every set is checked.
			sets := append([]db.Migrations{{Module: "good", FS: moduleFS(map[string]string{"001_create_notes.sql": createNotes})}}, tt.sets...)
			err := db.Migrate(t.Context(), d, sets...)
			if !errors.Is(err, db.ErrInvalidMigrations) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: Migrate error = %v, want ErrInvalidMigrations containing %q", tt.name, err, tt.want)
			}
			if _, err := db.Pending(t.Context(), d, sets...); !errors.Is(err, db.ErrInvalidMigrations) {
				t.Errorf("%s: Pending error = %v, want ErrInvalidMigrations", tt.name, err)
			}
		}
		if _, err := d.ExecContext(t.Context(), "SELECT COUNT(*) FROM notes"); err == nil {
			t.Error("table notes exists: a set was applied although another was invalid")
		}
	})
}

func TestMigrateCreatesPostgresSchema(t *testing.T) {
	t.Parallel()
	ds := svctest.DataSource(t, config.Postgres)
	ds.Schema += "_Sub" // not created yet; mixed case checks quoting
	d, err := db.Open(t.Context(), config.PrimaryDataSource, ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	t.Cleanup(func() { _, _ = d.DB.DB.Exec(`DROP SCHEMA IF EXISTS "` + ds.Schema + `" CASCADE`) })
	if err := db.Migrate(t.Context(), d, notesModule()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var schema string
	if err := d.QueryRowContext(t.Context(), "SELECT table_schema FROM information_schema.tables WHERE table_name = 'notes'").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if schema != ds.Schema {
		t.Errorf("notes created in schema %q, want %q", schema, ds.Schema)
	}
}

// On an existing database with nothing pending — the common start — Migrate reads the versions
// in one query and takes no lock: it returns while another session holds the migration lock,
// where a run with a pending file waits for it. SQLite has no session lock (each file is its own
// immediate transaction), so only the server databases have something to hold.
func TestMigrateCurrentDatabaseTakesNoLock(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		if d.Kind == config.SQLite {
			return
		}
		ctx := t.Context()
		if err := db.Migrate(ctx, d, notesModule()); err != nil {
			t.Fatalf("first Migrate: %v", err)
		}
		conn, err := d.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		unlock, err := db.LockMigrationsForTest(ctx, d, conn)
		if err != nil {
			t.Fatalf("hold the migration lock: %v", err)
		}
		defer func() { _ = unlock(context.WithoutCancel(ctx)) }()

		current, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := db.Migrate(current, d, notesModule()); err != nil {
			t.Errorf("Migrate of a current database while the lock is held: %v", err)
		}
		more := notesModule()
		more.FS.(fstest.MapFS)[string(d.Kind)+"/004_more.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE more_notes (id INTEGER NOT NULL PRIMARY KEY)")}
		waiting, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel2()
		if err := db.Migrate(waiting, d, more); err == nil {
			t.Error("Migrate with a pending file did not wait for the held lock")
		}
		if n := len(appliedRows(t, d)); n != len(notesApplied) {
			t.Errorf("applied rows = %d, want %d (nothing applied while the lock was held)", n, len(notesApplied))
		}
	})
}
