package security_test

import (
	"context"
	"sync"
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
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(bob.AccessToken)), 401, rpc.CodeTokenInvalid)
}

// TestCachedPrincipalIsNotShared (issue #12): handlers that change their principal's roles and
// details do not affect other requests of the same token, which keep reading the token's
// values; under -race a shared slice or map would be reported.
func TestCachedPrincipalIsNotShared(t *testing.T) {
	type seen struct {
		Role   string `json:"role"`
		Detail any    `json:"detail"`
	}
	mutate := func(_ context.Context, c rpc.Call, _ rpc.NoParams) (bool, error) {
		c.Principal.Roles[0] = "mutated"
		c.Principal.Roles = append(c.Principal.Roles, "extra")
		c.Principal.Details.(map[string]any)["team"] = "mutated"
		return true, nil
	}
	read := func(_ context.Context, c rpc.Call, _ rpc.NoParams) (seen, error) {
		return seen{Role: c.Principal.Roles[0], Detail: c.Principal.Details.(map[string]any)["team"]}, nil
	}
	e := newEnv(t, withResources(rpc.Resource{Name: "test/principal", Ops: []rpc.Op{
		rpc.Handle("mutate", mutate), rpc.Handle("read", read)}}))
	tok := e.srv.Token(t, &rpc.Principal{Type: rpc.PrincipalUser, ID: "p-1", Name: "P", Roles: []string{"viewer"},
		Details: map[string]any{"team": "blue"}})

	const rounds = 20
	var wg sync.WaitGroup
	got := make([]seen, rounds)
	for i := range rounds {
		wg.Go(func() {
			if r := e.srv.Call(t, "test/principal", "mutate", nil, svctest.WithToken(tok)); r.Code != 0 {
				t.Errorf("mutate: %d/%d %s", r.Status, r.Code, r.Message)
			}
		})
		wg.Go(func() {
			r := e.srv.Call(t, "test/principal", "read", nil, svctest.WithToken(tok))
			if r.Code != 0 {
				t.Errorf("read: %d/%d %s", r.Status, r.Code, r.Message)
				return
			}
			r.DataAs(t, &got[i])
		})
	}
	wg.Wait()
	for i, g := range got {
		if g.Role != "viewer" || g.Detail != "blue" {
			t.Errorf("read %d saw role %q, detail %v; want viewer, blue", i, g.Role, g.Detail)
		}
	}
}
