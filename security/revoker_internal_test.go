package security

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// TestRevokerRetriesFailedWrite: a revocation whose write fails (here: the change log is
// renamed away, as a database outage would) answers the error, and is written in the background once the
// database takes it, so a logout during an outage still revokes the family for every node.
func TestRevokerRetriesFailedWrite(t *testing.T) {
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *Migrations()); err != nil {
			t.Fatal(err)
		}
		store := &familyStore{db: d}
		r := &revoker{families: store}
		now := time.Now().UTC().Truncate(time.Second)
		if err := store.create(ctx, family{ID: "fam-1", PrincipalID: "u1", CurrentJTI: "j1", Principal: "{}",
			CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		// The outage: the change log is gone, so the revocation's transaction fails.
		if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change RENAME TO sys_security_change_away"); err != nil {
			t.Fatal(err)
		}
		if err := r.revoke(ctx, "fam-1", revokeLogout, now); err == nil {
			t.Fatal("revoke without the change log succeeded")
		}
		if revoked, err := store.isRevoked(ctx, "fam-1"); err != nil || revoked {
			t.Fatalf("isRevoked after the failed write = %t, %v; want false (rolled back)", revoked, err)
		}
		if _, err := d.ExecContext(ctx, "ALTER TABLE sys_security_change_away RENAME TO sys_security_change"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			revoked, err := store.isRevoked(ctx, "fam-1")
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
		if err := d.NewSelect().Model((*changeRow)(nil)).ColumnExpr("COUNT(*)").Where("kind = ? AND ref = ?", changeFamily, "fam-1").Scan(ctx, &changes); err != nil {
			t.Fatal(err)
		}
		if changes != 1 {
			t.Fatalf("%d change rows for the family, want 1 (the other nodes' polls read it)", changes)
		}
	})
}
