package token_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
)

// TestRevokerRetriesFailedWrite: a revocation whose write fails (here: the change log is
// renamed away, as a database outage would) answers the error, and is written in the background once the
// database takes it, so a logout during an outage still revokes the family for every node.
func TestRevokerRetriesFailedWrite(t *testing.T) {
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
			t.Fatal(err)
		}
		fams := token.NewTestFamilies(d, nil)
		now := time.Now().UTC().Truncate(time.Second)
		if err := token.TestCreate(fams, ctx, "fam-1", now); err != nil {
			t.Fatal(err)
		}
		// The outage: the change log is gone, so the revocation's transaction fails.
		if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change RENAME TO sys_security_change_away"); err != nil {
			t.Fatal(err)
		}
		if err := token.TestRevoke(fams, ctx, "fam-1", now); err == nil {
			t.Fatal("revoke without the change log succeeded")
		}
		if revoked, err := token.TestIsRevoked(fams, ctx, "fam-1"); err != nil || revoked {
			t.Fatalf("isRevoked after the failed write = %t, %v; want false (rolled back)", revoked, err)
		}
		if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change_away RENAME TO sys_security_change"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			revoked, err := token.TestIsRevoked(fams, ctx, "fam-1")
			if err != nil {
				t.Fatal(err)
			}
			if revoked {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the failed revocation was not written again within 10 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		var changes int
		if err := d.NewSelect().Table("sys_security_change").ColumnExpr("COUNT(*)").Where("kind = ? AND ref = ?", token.ChangeFamily, "fam-1").Scan(ctx, &changes); err != nil {
			t.Fatal(err)
		}
		if changes != 1 {
			t.Fatalf("%d change rows for the family, want 1 (the other nodes' polls read it)", changes)
		}
	})
}

// TestRevokerGathersUnderLoad: writers that each wait for their revocation and then spend a
// moment (an HTTP round trip) before the next are committed in batches, not one by one — a
// drain that starts right after the previous one ended gathers first — while a lone revocation
// after a quiet spell is committed at once, alone.
func TestRevokerGathersUnderLoad(t *testing.T) {
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var sizes []int
		fams := token.NewTestFamilies(d, func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() })
		now := time.Now().UTC().Truncate(time.Second)
		const writers, rounds = 32, 15
		for w := range writers {
			for i := range rounds {
				if err := token.TestCreate(fams, ctx, fmt.Sprintf("f-%d-%d", w, i), now); err != nil {
					t.Fatal(err)
				}
			}
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range rounds {
					if err := token.TestRevoke(fams, ctx, fmt.Sprintf("f-%d-%d", w, i), now); err != nil {
						t.Error(err)
						return
					}
					time.Sleep(1500 * time.Microsecond)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		got := sizes
		sizes = nil
		mu.Unlock()
		singles := 0
		for _, n := range got {
			if n == 1 {
				singles++
			}
		}
		t.Logf("%d revocations in %d batches, %d of one row", writers*rounds, len(got), singles)
		// One by one after each drain (the behaviour before the busy gather) read 77 batches,
		// 48 of one row, on SQLite; gathering reads about 30 on every database.
		if len(got) > writers*rounds/8 {
			t.Fatalf("%d revocations in %d batches, %d of one row; want at most %d batches (8 rows each on average): %v",
				writers*rounds, len(got), singles, writers*rounds/8, got)
		}

		time.Sleep(5 * token.RevokeBusy) // a quiet spell
		if err := token.TestCreate(fams, ctx, "lone", now); err != nil {
			t.Fatal(err)
		}
		if err := token.TestRevoke(fams, ctx, "lone", now); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(sizes) != 1 || sizes[0] != 1 {
			t.Fatalf("a lone revocation after a quiet spell was written in batches %v, want [1]", sizes)
		}
		if revoked, err := token.TestIsRevoked(fams, ctx, "lone"); err != nil || !revoked {
			t.Fatalf("isRevoked(lone) = %t, %v", revoked, err)
		}
	})
}
