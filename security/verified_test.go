package security_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestVerifiedTokenCacheKeepsEveryCheck: once a token has been verified (and cached), expiry and
// the user's token state still apply on later requests.
func TestVerifiedTokenCacheKeepsEveryCheck(t *testing.T) {
	e := newEnv(t)
	e.addUser(t, "alice", alicePassword, "admin")
	e.addUser(t, "bob", alicePassword, "admin")

	alice := e.login(t, "alice", alicePassword)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(alice.AccessToken)), 200, 0) // cached now
	e.clock.Advance(31 * time.Minute)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(alice.AccessToken)), 401, rpc.CodeTokenExpired)

	bob := e.login(t, "bob", alicePassword)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(bob.AccessToken)), 200, 0) // cached now
	e.clock.Advance(time.Second)
	if err := e.sec.Store().SetDisabled(context.Background(), "bob", true); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10 * time.Second) // past the per-node token-state cache
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(bob.AccessToken)), 401, rpc.CodeTokenInvalid)
}
