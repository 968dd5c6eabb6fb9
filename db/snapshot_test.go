package db_test

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// TestSnapshotIsOnePointWhileWriting: Snapshot (the online backup API in one step) of a database
// that a writer keeps changing holds one committed state — every writer transaction inserts a
// pair of rows (n, -n), so a copy that mixed two points would show an odd count or a sum other
// than 0 — passes SQLite's integrity check, holds at least what was committed before it started,
// and refuses a destination that exists.
func TestSnapshotIsOnePointWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := db.OpenFile(ctx, "snap-src", filepath.Join(dir, "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ExecContext(ctx, "CREATE TABLE pairs (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, pad BLOB)"); err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, 8<<10)
	insertPair := func(n int64) error {
		_, _ = rand.Read(pad)
		return d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO pairs (n, pad) VALUES (?, ?), (?, ?)", n, pad, -n, pad)
			return err
		})
	}
	for i := range int64(500) {
		if err := insertPair(i + 1); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	wg.Go(func() {
		for n := int64(1000); !stop.Load(); n++ {
			if err := insertPair(n); err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
		}
	})
	snapPath := filepath.Join(dir, "snap.db")
	err = d.Snapshot(ctx, snapPath)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if err := d.Snapshot(ctx, snapPath); err == nil {
		t.Error("Snapshot onto an existing file succeeded, want an error")
	}
	s, err := db.OpenFile(ctx, "snap", snapPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	var count, sum int64
	if err := s.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(n), 0) FROM pairs").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count%2 != 0 || sum != 0 {
		t.Errorf("snapshot count = %d, sum = %d: want an even count and sum 0 (one committed point)", count, sum)
	}
	if count < 1000 {
		t.Errorf("snapshot count = %d, want >= 1000 (the pairs committed before it started)", count)
	}
	var live int64
	if err := d.QueryRowContext(ctx, "SELECT COUNT(*) FROM pairs").Scan(&live); err != nil {
		t.Fatal(err)
	}
	if count > live {
		t.Errorf("snapshot count = %d > live count %d", count, live)
	}
	t.Logf("snapshot held %d rows; the writer committed %d pairs meanwhile", count, writes.Load())
}
