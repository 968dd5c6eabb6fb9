package token_test

import (
	"context"
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
		fams := token.NewTestFamilies(d)
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
