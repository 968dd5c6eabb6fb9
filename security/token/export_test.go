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

// newTestFamilies returns the store and revoker of d.
func newTestFamilies(d *db.DB) *testFamilies {
	s := &familyStore{db: d}
	return &testFamilies{store: s, r: &revoker{families: s}}
}

// create inserts a live family of principal u1 expiring in an hour.
func (f *testFamilies) create(ctx context.Context, id string, now time.Time) error {
	return f.store.create(ctx, family{ID: id, PrincipalID: "u1", CurrentJTI: "j1", Principal: "{}",
		CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(time.Hour)})
}

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
