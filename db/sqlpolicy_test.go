package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

// TestInTxIsolation: InTx runs at READ COMMITTED on the server dialects, so a statement after a
// lock sees a row another transaction committed after this one's first read.
func TestInTxIsolation(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		exec(t, d, "CREATE TABLE iso (id INTEGER NOT NULL PRIMARY KEY)", "INSERT INTO iso (id) VALUES (1)")
		if d.Kind == config.SQLite {
			return // one writer: no other transaction can commit in between
		}
		err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if n := count(t, tx, "iso"); n != 1 {
				t.Errorf("first read = %d rows, want 1", n)
			}
			if _, err := d.ExecContext(ctx, "INSERT INTO iso (id) VALUES (2)"); err != nil { // autocommit, another session
				return err
			}
			if n := count(t, tx, "iso"); n != 2 {
				t.Errorf("read after another session's commit = %d rows, want 2 (read committed)", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestSQLiteWriterLock: InTx transactions of one process queue on the writer lock (a waiting one
// gives up when its context ends), and two DBs opened on one file share it.
func TestSQLiteWriterLock(t *testing.T) {
	t.Parallel()
	ds := svctest.DataSource(t, config.SQLite)
	open := func() *db.DB {
		d, err := db.Open(t.Context(), "primary", ds)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	d1, d2 := open(), open()
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- d1.InTx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := d2.InTx(ctx, func(ctx context.Context, tx bun.Tx) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("InTx on the same file while the writer lock is held = %v, want the context's deadline", err)
	}
	if waited := time.Since(start); waited >= 5*time.Second {
		t.Errorf("waited %v: the wait met busy_timeout, not the writer lock", waited)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := d2.InTx(t.Context(), func(ctx context.Context, tx bun.Tx) error { return nil }); err != nil {
		t.Errorf("InTx after the lock was released: %v", err)
	}
}

// TestInTxRetrying: a retryable failure runs the transaction again, up to TxAttempts; other
// errors end at once.
func TestInTxRetrying(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		calls := 0
		err := d.InTxRetrying(t.Context(), func(ctx context.Context, tx bun.Tx) error {
			calls++
			return errors.New("not retryable")
		})
		if err == nil || calls != 1 {
			t.Errorf("plain error: calls = %d, err = %v; want 1 call and the error", calls, err)
		}
		calls = 0
		victim := []error{&pgconn.PgError{Code: "40P01"}, &mysql.MySQLError{Number: 1213}}
		err = d.InTxRetrying(t.Context(), func(ctx context.Context, tx bun.Tx) error {
			calls++
			if calls <= len(victim) {
				return fmt.Errorf("wrapped: %w", victim[calls-1])
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("two deadlock victims: calls = %d, err = %v; want 3 calls and nil", calls, err)
		}
		calls = 0
		err = d.InTxRetrying(t.Context(), func(ctx context.Context, tx bun.Tx) error {
			calls++
			return &pgconn.PgError{Code: "40001"}
		})
		if !db.IsRetryable(err) || calls != db.TxAttempts {
			t.Errorf("always a serialization failure: calls = %d, err = %v; want %d calls", calls, err, db.TxAttempts)
		}
	})
}

func TestDialectSQL(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		exec(t, d, "CREATE TABLE kv (k VARCHAR(20) NOT NULL, part INTEGER NOT NULL, v VARCHAR(20) NOT NULL, "+
			"doc "+d.SQLType(db.TypeJSON)+" NULL, body "+d.SQLType(db.TypeText)+" NULL, "+
			"t0 "+d.SQLType(db.TypeTimestamp)+" NULL, t1 "+d.SQLType(db.TypeTimestamp)+" NULL, PRIMARY KEY (k, part))")
		type row struct {
			bun.BaseModel `bun:"table:kv"`
			K             string    `bun:"k,pk"`
			Part          int       `bun:"part,pk"`
			V             string    `bun:"v"`
			Doc           string    `bun:"doc"`
			Body          string    `bun:"body"`
			T0            time.Time `bun:"t0"`
			T1            time.Time `bun:"t1"`
		}
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		upsert := func(r *row) {
			t.Helper()
			if _, err := d.OnConflictUpdate(d.NewInsert().Model(r), []string{"k", "part"}, "v", "doc").Exec(ctx); err != nil {
				t.Fatalf("upsert: %v", err)
			}
		}
		upsert(&row{K: "a", Part: 1, V: "first", Doc: `{"env":"prod","x":"1"}`, Body: "b", T0: t0, T1: t0.Add(90*time.Second + 500*time.Millisecond)})
		upsert(&row{K: "a", Part: 1, V: "second", Doc: `{"env":"dev"}`, Body: "b", T0: t0, T1: t0})
		upsert(&row{K: "b", Part: 1, V: "other", Doc: `{"env":"prod"}`, Body: "c", T0: t0, T1: t0})
		var got row
		if err := d.NewSelect().Model(&got).Where("k = ?", "a").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if got.V != "second" || count(t, d, "kv") != 2 {
			t.Errorf("after upserts: v = %q, rows = %d; want second, 2", got.V, count(t, d, "kv"))
		}
		var keys []string
		if err := d.WhereJSONText(d.NewSelect().Model((*row)(nil)).Column("k"), "doc", "env", "prod").Scan(ctx, &keys); err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] != "b" {
			t.Errorf("WhereJSONText env=prod = %v, want [b]", keys)
		}
		keys = nil
		if err := d.WhereJSONText(d.NewSelect().Model((*row)(nil)).Column("k"), "doc", `env"`, "prod").Scan(ctx, &keys); err != nil || len(keys) != 0 {
			t.Errorf("WhereJSONText with a quote in the key = %v, %v; want nothing", keys, err)
		}
		exec(t, d, "UPDATE kv SET t1 = t0 WHERE k = 'b'")
		var secs float64
		if err := d.NewSelect().Model((*row)(nil)).ColumnExpr(d.SecondsBetween("t0", "t1")).Where("k = ?", "b").Scan(ctx, &secs); err != nil || secs != 0 {
			t.Errorf("SecondsBetween equal times = %v, %v; want 0", secs, err)
		}
		exec(t, d, "DELETE FROM kv WHERE k = 'b'")
		if _, err := d.NewInsert().Model(&row{K: "c", Part: 1, V: "t", Doc: "{}", T0: t0, T1: t0.Add(90*time.Second + 500*time.Millisecond)}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := d.NewSelect().Model((*row)(nil)).ColumnExpr(d.SecondsBetween("t0", "t1")).Where("k = ?", "c").Scan(ctx, &secs); err != nil || secs < 90.49 || secs > 90.51 {
			t.Errorf("SecondsBetween 90.5 s apart = %v, %v", secs, err)
		}
		if v, err := d.ServerVersion(ctx); err != nil || v == "" {
			t.Errorf("ServerVersion = %q, %v", v, err)
		}
		_, err := d.ExecContext(ctx, "SELECT nothere FROM kv")
		if !db.IsUndefinedObject(err) {
			t.Errorf("IsUndefinedObject(unknown column) = false for %v", err)
		}
		_, err = d.ExecContext(ctx, "SELECT 1 FROM nothere")
		if !db.IsUndefinedObject(err) {
			t.Errorf("IsUndefinedObject(unknown table) = false for %v", err)
		}
		rows, err := d.QueryInReadOnlyTx(ctx, "SELECT k FROM kv ORDER BY k", nil, 10, 1<<20)
		if err != nil || len(rows.Values) != 2 {
			t.Errorf("QueryInReadOnlyTx = %+v, %v; want 2 rows", rows, err)
		}
		if _, err := d.QueryInReadOnlyTx(ctx, "DELETE FROM kv", nil, 10, 1<<20); err == nil {
			t.Error("QueryInReadOnlyTx ran a DELETE")
		}
		if count(t, d, "kv") != 2 {
			t.Error("rows deleted through QueryInReadOnlyTx")
		}
	})
}

// TestListen: a notification sent through Notify reaches Listen on PostgreSQL; elsewhere Listen
// refuses.
func TestListen(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if !d.Notifies() {
			if err := d.Listen(ctx, "ch", func(string) {}); !errors.Is(err, db.ErrNoNotifications) {
				t.Errorf("Listen without notifications = %v, want ErrNoNotifications", err)
			}
			return
		}
		got := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- d.Listen(ctx, "svc test\"ch", func(p string) { got <- p }) }()
		deadline := time.After(10 * time.Second)
		for {
			if err := db.Notify(ctx, d, "svc test\"ch", "hello"); err != nil {
				t.Fatal(err)
			}
			select {
			case p := <-got:
				if p != "hello" {
					t.Errorf("payload = %q", p)
				}
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Listen after its context ended = %v, want nil", err)
				}
				return
			case <-time.After(50 * time.Millisecond): // the LISTEN may not be in place yet
			case <-deadline:
				t.Fatal("no notification within 10 s")
			}
		}
	})
}
