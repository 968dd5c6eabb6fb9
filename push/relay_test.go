package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/svctest"
)

// twoNodes boots two push servers sharing PostgreSQL and Redis (sessions in Redis with opaque
// tokens) under an app name unique to the test, so the relay channel is the test's own.
func twoNodes(t *testing.T, opts ...svctest.Option) (*svctest.Server, *svctest.Server) {
	t.Helper()
	ds := svctest.DataSource(t, config.Postgres)
	kv := svctest.RedisConfig(t)
	name := "push-" + svctest.UniquePrefix(t)[8:]
	shared := svctest.WithConfig(func(c *config.Config) {
		c.DataSources[config.PrimaryDataSource] = ds
		c.KVStore = kv
		c.App.Name = name
	})
	all := append([]svctest.Option{shared}, opts...)
	return pushServer(t, all...), pushServer(t, all...)
}

// TestTwoNodes: a push sent on node A reaches a user connected to node B, and a node ignores
// its own relay frames (a user on A gets the push once); a forced logout on A kicks the socket
// on B.
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	a, b := twoNodes(t, opaqueTokens)
	tok, user, _ := login(t, a)
	onB := dial(t, b, tok)
	connections(t, b, 1)
	waitRelay(t, a, onB)
	onA := dial(t, a, tok)
	connections(t, a, 1)

	send(t, a, push.NewMessage("hello", map[string]any{"from": "a"}), push.ToUsers(user))
	if got := onB.next(t); got.Type != "hello" {
		t.Fatalf("node B got %q", got.Type)
	}
	if got := onA.next(t); got.Type != "hello" {
		t.Fatalf("node A got %q", got.Type)
	}
	send(t, a, push.NewMessage("marker", nil), push.ToUsers(user))
	if got := onA.next(t); got.Type != "marker" {
		t.Errorf("node A's next frame = %q, want marker (its own relay frame ignored)", got.Type)
	}
	_ = onB.next(t)

	a.RevokeSession(t, tok)
	// The relayed kick says "session revoked". A recheck of the user's sockets may get there
	// first (the change notice of the user's creation reaches B at a time of its own, and its
	// recheck reads the session after the revocation): it closes with the same code as an
	// invalid session. Either way the revocation on A ended the socket on B.
	onB.wantClose(t, time.Second, push.CloseSessionInvalid, push.ReasonSessionRevoked, push.ReasonSessionInvalid)
	onA.wantClose(t, time.Second, push.CloseSessionInvalid, push.ReasonSessionRevoked, push.ReasonSessionInvalid)
}

// waitRelay waits until the other node's relay subscription is live: probes through a until
// c, connected to the other node, sees one (next skips late probes).
func waitRelay(t *testing.T, a *svctest.Server, c *client) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		send(t, a, push.NewMessage("probe", nil), push.Broadcast())
		select {
		case <-c.frames:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("the relay did not reach node B")
}

// TestSendKick: a kick published from outside the server (`svc session revoke`) closes the
// session's socket with 4401.
func TestSendKick(t *testing.T) {
	t.Parallel()
	a, _ := twoNodes(t, opaqueTokens)
	tok, _, _ := login(t, a)
	c := dial(t, a, tok)
	connections(t, a, 1)
	kv := svctest.Redis(t)
	svctest.Eventually(t, wait, func() bool { // until the node's relay subscription is live
		if err := push.SendKick(context.Background(), a.Config(), kv, svctest.SessionID(tok)); err != nil {
			t.Fatal(err)
		}
		return a.Push().Connections() == 0
	}, "the kick closes the socket")
	c.wantClose(t, wait, push.CloseSessionInvalid, push.ReasonSessionRevoked)
}
