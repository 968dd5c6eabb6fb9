package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/svctest"
)

// opaqueTokens switches the server to opaque session tokens.
var opaqueTokens = svctest.WithConfig(func(c *config.Config) { c.Security.TokenType = config.TokenTypeOpaque })

// TestForcedLogoutKicks: a forced logout of an opaque session closes its sockets with 4401
// "session revoked" within one second; the user's other session stays connected.
func TestForcedLogoutKicks(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, opaqueTokens)
	tok, user, name := login(t, srv)
	other := loginAs(t, srv, name)
	c := dial(t, srv, tok)
	keep := dial(t, srv, other)
	connections(t, srv, 2)
	srv.RevokeSession(t, tok)
	c.wantClose(t, time.Second, push.CloseSessionInvalid, push.ReasonSessionRevoked)
	send(t, srv, push.NewMessage("still", nil), push.ToUsers(user))
	if got := keep.next(t); got.Type != "still" {
		t.Errorf("other session got %q", got.Type)
	}
}

// TestLogoutKicksOpaque: logout through security/auth kicks the session's socket.
func TestLogoutKicksOpaque(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, opaqueTokens)
	tok, _, _ := login(t, srv)
	c := dial(t, srv, tok)
	connections(t, srv, 1)
	srv.Logout(t, tok)
	c.wantClose(t, time.Second, push.CloseSessionInvalid, push.ReasonSessionRevoked)
}

// TestRecheck: a session ended where no hook sees it (another process, such as the CLI) is
// found by the periodic recheck and its socket closed with 4401 "session invalid".
func TestRecheck(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, opaqueTokens)
	tok, _, _ := login(t, srv)
	c := dial(t, srv, tok)
	connections(t, srv, 1)
	srv.RevokeSessionOffline(t, tok) // like `svc session revoke`
	svctest.Eventually(t, wait, func() bool {
		_ = srv.Push().Recheck(context.Background())
		return srv.Push().Connections() == 0
	}, "the recheck closes the revoked session's socket")
	c.wantClose(t, wait, push.CloseSessionInvalid, push.ReasonSessionInvalid)
}

// TestJWTExpiry: a JWT connection is closed with 4401 "token expired" when its token expires:
// by the expiry check (called directly, and not before the expiry) and by the push-expiry
// worker on its own.
func TestJWTExpiry(t *testing.T) {
	t.Parallel()
	for _, byWorker := range []bool{false, true} {
		clock := svctest.NewClock(time.Now())
		srv := pushServer(t, svctest.WithClock(clock))
		c := dial(t, srv, srv.Token(t, svctest.User("alice")))
		connections(t, srv, 1)
		if !byWorker {
			_ = srv.Push().Expire(context.Background())
			if n := srv.Push().Connections(); n != 1 {
				t.Fatalf("connections before expiry = %d, want 1", n)
			}
		}
		clock.Advance(srv.Config().Security.AccessTokenExpires + time.Second)
		if !byWorker {
			_ = srv.Push().Expire(context.Background())
		}
		c.wantClose(t, 3*time.Second, push.CloseSessionInvalid, push.ReasonTokenExpired)
	}
}

// TestJWTLogoutKicks: logout revokes the JWT's token family, which closes its sockets with 4401
// (beyond the original, where JWT connections lived on).
func TestJWTLogoutKicks(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	tok, _, _ := login(t, srv)
	c := dial(t, srv, tok)
	connections(t, srv, 1)
	srv.Logout(t, tok)
	c.wantClose(t, time.Second, push.CloseSessionInvalid, push.ReasonSessionRevoked)
}
