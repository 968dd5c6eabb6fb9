package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// exec runs statements on d and fails the test on the first error.
func exec(t *testing.T, d *db.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := d.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func count(t *testing.T, d bun.IDB, table string) int {
	t.Helper()
	var n int
	if err := d.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestConstraintViolations(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		exec(t, d,
			"CREATE TABLE parent (id INTEGER NOT NULL PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE)",
			"CREATE TABLE child (id INTEGER NOT NULL PRIMARY KEY, parent_id INTEGER NOT NULL, FOREIGN KEY (parent_id) REFERENCES parent (id))",
			"INSERT INTO parent (id, email) VALUES (1, 'a@example.com')",
			"INSERT INTO child (id, parent_id) VALUES (1, 1)",
		)
		run := func(q string) error {
			_, err := d.ExecContext(t.Context(), q)
			if err == nil {
				t.Fatalf("%s succeeded, want a constraint error", q)
			}
			return fmt.Errorf("store: %w", err) // callers see wrapped errors
		}
		tests := []struct {
			name         string
			err          error
			unique, fkey bool
		}{
			{"duplicate unique column", run("INSERT INTO parent (id, email) VALUES (2, 'a@example.com')"), true, false},
			{"duplicate primary key", run("INSERT INTO parent (id, email) VALUES (1, 'b@example.com')"), true, false},
			{"child without parent", run("INSERT INTO child (id, parent_id) VALUES (2, 99)"), false, true},
			{"delete referenced parent", run("DELETE FROM parent WHERE id = 1"), false, true},
			{"syntax error", run("INSERT INTO nowhere VALUES (1)"), false, false},
			{"nil", nil, false, false},
			{"other error", errors.New("duplicate entry"), false, false},
		}
		for _, tt := range tests {
			if got := db.IsUniqueViolation(tt.err); got != tt.unique {
				t.Errorf("%s: IsUniqueViolation(%v) = %v, want %v", tt.name, tt.err, got, tt.unique)
			}
			if got := db.IsForeignKeyViolation(tt.err); got != tt.fkey {
				t.Errorf("%s: IsForeignKeyViolation(%v) = %v, want %v", tt.name, tt.err, got, tt.fkey)
			}
		}
	})
}

func TestInTx(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		exec(t, d, "CREATE TABLE items (id INTEGER NOT NULL PRIMARY KEY)")
		insert := func(id int) func(ctx context.Context, tx bun.Tx) error {
			return func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO items (id) VALUES (?)", id)
				return err
			}
		}
		if err := d.InTx(ctx, insert(1)); err != nil {
			t.Fatalf("InTx commit: %v", err)
		}
		errBoom := errors.New("boom")
		err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if err := insert(2)(ctx, tx); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InTx error = %v, want %v", err, errBoom)
		}
		func() {
			defer func() { _ = recover() }()
			_ = d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				_ = insert(3)(ctx, tx)
				panic("handler bug")
			})
		}()
		if got := count(t, d, "items"); got != 1 {
			t.Errorf("rows after commit, error and panic = %d, want 1", got)
		}
	})
}

func TestSkipLocked(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		exec(t, d, "CREATE TABLE jobs (id INTEGER NOT NULL PRIMARY KEY)", "INSERT INTO jobs (id) VALUES (1), (2)")
		claim := func(tx bun.Tx) int {
			var ids []int
			q := d.ForUpdateSkipLocked(tx.NewSelect().Table("jobs").Column("id").Order("id").Limit(1))
			if err := q.Scan(ctx, &ids); err != nil {
				t.Fatalf("claim: %v", err)
			}
			if len(ids) == 0 {
				return 0
			}
			return ids[0]
		}
		if d.Kind == config.SQLite {
			if got := d.SkipLocked(); got != "" {
				t.Errorf("SkipLocked() = %q, want empty on sqlite", got)
			}
			// One writer at a time: the claim is exclusive because the transaction is.
			if err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				if got := claim(tx); got != 1 {
					t.Errorf("claim = %d, want 1", got)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return
		}
		if got, want := d.SkipLocked(), "FOR UPDATE SKIP LOCKED"; got != want {
			t.Errorf("SkipLocked() = %q, want %q", got, want)
		}
		tx1, err := d.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx1.Rollback() }()
		tx2, err := d.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx2.Rollback() }()
		if got := claim(tx1); got != 1 {
			t.Errorf("first claim = %d, want 1", got)
		}
		var raw int
		if err := tx2.QueryRowContext(ctx, "SELECT id FROM jobs ORDER BY id LIMIT 1 "+d.SkipLocked()).Scan(&raw); err != nil || raw != 2 {
			t.Errorf("raw claim while the first is held = %d, %v; want 2, nil", raw, err)
		}
		tx3, err := d.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx3.Rollback() }()
		if got := claim(tx3); got != 0 {
			t.Errorf("claim with both rows held = %d, want none", got)
		}
	})
}

// TestSQLiteConcurrentWriters checks the pool strategy: concurrent writers, inside transactions
// that read before they write and outside transactions, queue on the write lock instead of
// failing with SQLITE_BUSY.
func TestSQLiteConcurrentWriters(t *testing.T) {
	t.Parallel()
	d := svctest.NewDB(t, config.SQLite)
	exec(t, d, "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, worker INTEGER NOT NULL, seq INTEGER NOT NULL)")
	const workers, inserts = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*inserts)
	for w := range workers {
		wg.Go(func() {
			for i := range inserts {
				var err error
				if i%2 == 0 {
					err = d.InTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
						var n int
						if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE worker = ?", w).Scan(&n); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, "INSERT INTO events (worker, seq) VALUES (?, ?)", w, n)
						return err
					})
				} else {
					_, err = d.ExecContext(t.Context(), "INSERT INTO events (worker, seq) VALUES (?, ?)", w, -i)
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d insert %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := count(t, d, "events"); got != workers*inserts {
		t.Errorf("rows = %d, want %d", got, workers*inserts)
	}
}
