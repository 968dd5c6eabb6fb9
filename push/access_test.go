package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// closeBound is how soon a socket must follow a change of its user made on another node (issue
// #31 item 8): the change feed's bound (security/doc.go).
const closeBound = time.Second

// tokenKinds are the two token types a socket can be authenticated with.
var tokenKinds = []struct {
	name string
	opts []svctest.Option
}{{"jwt", nil}, {"opaque", []svctest.Option{opaqueTokens}}}

// createUser creates a built-in user with roles on srv and logs it in, returning the access
// token, the user id and the user name.
func createUser(t *testing.T, srv *svctest.Server, roles ...string) (token, userID, name string) {
	t.Helper()
	token, userID, name = login(t, srv)
	if len(roles) > 0 {
		if err := srv.Security().Store().SetRoles(context.Background(), name, roles); err != nil {
			t.Fatalf("SetRoles: %v", err)
		}
	}
	return token, userID, name
}

// cliStore is the built-in store as `svc user` opens it: the same database, no cache, no change
// feed of its own; servers learn of its changes through the change log.
func cliStore(srv *svctest.Server) *security.Store {
	return security.OpenStore(srv.DB(), srv.Config().Security, security.HashParams{}, nil)
}

// TestUserChangeClosesSockets (issue #31 item 8): a change that makes /api refuse a token —
// the user disabled (by the CLI's code path) or its password changed (on node A) — closes the
// token's socket on node B with 4401 "session invalid" within one second, for JWTs and opaque
// sessions alike; /api refuses the token too, so the socket ends with it.
func TestUserChangeClosesSockets(t *testing.T) {
	t.Parallel()
	changes := []struct {
		name   string
		change func(a *svctest.Server, clock *svctest.Clock, name string) error
	}{
		{"disable by the CLI", func(a *svctest.Server, _ *svctest.Clock, name string) error {
			return cliStore(a).SetDisabled(context.Background(), name, true)
		}},
		{"password change on node A", func(a *svctest.Server, clock *svctest.Clock, name string) error {
			clock.Advance(2 * time.Second) // a token issued in the change's second stays valid
			return a.Security().Store().SetPassword(context.Background(), name, "Other-Horse-42")
		}},
	}
	for _, tk := range tokenKinds {
		for _, ch := range changes {
			t.Run(tk.name+"/"+ch.name, func(t *testing.T) {
				clock := svctest.NewClock(time.Now())
				a, b := twoNodes(t, append([]svctest.Option{svctest.WithClock(clock)}, tk.opts...)...)
				tok, _, name := createUser(t, a)
				onB := dial(t, b, tok)
				connections(t, b, 1)
				if err := ch.change(a, clock, name); err != nil {
					t.Fatalf("change: %v", err)
				}
				onB.wantClose(t, closeBound, push.CloseSessionInvalid, push.ReasonSessionInvalid)
				if r := b.Call(t, svctest.ResourceAuth, "get_user_info", nil, svctest.WithToken(tok)); r.Code == 0 {
					t.Error("/api on node B still accepts the token whose socket was closed")
				}
			})
		}
	}
}

// TestRoleRemovalStopsRolePushes (issue #31 item 8): removing a role from a user on node A
// re-evaluates the user's socket on node B: it stays open (the token still works on /api, with
// the new roles) but within one second stops receiving pushes to the removed role, and starts
// receiving those of a role it was given.
func TestRoleRemovalStopsRolePushes(t *testing.T) {
	t.Parallel()
	for _, tk := range tokenKinds {
		t.Run(tk.name, func(t *testing.T) {
			a, b := twoNodes(t, tk.opts...)
			tok, user, name := createUser(t, a, "ops")
			onB := dial(t, b, tok)
			connections(t, b, 1)
			if !receivesRole(t, b, onB, user, "ops") {
				t.Fatal("the socket does not receive pushes to its role ops")
			}
			if err := a.Security().Store().SetRoles(context.Background(), name, []string{"audit"}); err != nil {
				t.Fatalf("SetRoles: %v", err)
			}
			svctest.Eventually(t, closeBound, func() bool { return !receivesRole(t, b, onB, user, "ops") },
				"the socket still receives pushes to the removed role")
			if !receivesRole(t, b, onB, user, "audit") {
				t.Error("the socket does not receive pushes to its new role")
			}
			if n := b.Push().Connections(); n != 1 {
				t.Errorf("connections on node B = %d, want 1 (a role change keeps the socket)", n)
			}
		})
	}
}

// receivesRole pushes to role on srv, then to the user, and reports whether the role's push
// arrived before the user's marker (frames of one connection arrive in order).
func receivesRole(t *testing.T, srv *svctest.Server, c *client, user, role string) bool {
	t.Helper()
	send(t, srv, push.NewMessage("role."+role, nil), push.ToRoles(role))
	send(t, srv, push.NewMessage("marker", nil), push.ToUsers(user))
	got := false
	for {
		switch m := c.next(t); m.Type {
		case "marker":
			return got
		case "role." + role:
			got = true
		}
	}
}
