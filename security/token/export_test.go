package token

import (
	"context"
	"time"

	"github.com/svc-framework/svc/db"
)

// Test hooks for the external tests of this package (package token_test), which import package
// security for the migrations of the tables (they are the security module's migration set).

// testFamilies is a family store over a database and the revoker that writes it.
type testFamilies struct {
	store *familyStore
	r     *revoker
}

// newTestFamilies returns the store and revoker of d; observe, when not nil, is called with the
// size of each batch the revoker writes.
func newTestFamilies(d *db.DB, observe func(batch int)) *testFamilies {
	s := &familyStore{db: d}
	return &testFamilies{store: s, r: &revoker{families: s, observe: observe}}
}

// create inserts a live family of principal u1 expiring in an hour.
func (f *testFamilies) create(ctx context.Context, id string, now time.Time) error {
	return f.store.create(ctx, family{ID: id, PrincipalID: "u1", CurrentJTI: "j1", Principal: "{}",
		CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(time.Hour)})
}

// RevokeBusy is how recently a drain must have ended for the next to gather first.
const RevokeBusy = revokeBusy

// NewTestFamilies, TestCreate, TestRevoke and TestIsRevoked expose the family store and the
// revoker to the external tests.
var (
	NewTestFamilies = newTestFamilies
	TestCreate      = (*testFamilies).create
	TestRevoke      = func(f *testFamilies, ctx context.Context, id string, now time.Time) error {
		return f.r.revoke(ctx, id, revokeLogout, now)
	}
	TestIsRevoked = func(f *testFamilies, ctx context.Context, id string) (bool, error) {
		return f.store.isRevoked(ctx, id)
	}
)
