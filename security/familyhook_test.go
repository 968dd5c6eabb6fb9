package security_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
	"github.com/svc-framework/svc/svctest"
)

// TestFamilyHookAndInspect: Inspect returns a login token's family, issue time and expiry (and refuses a
// bad token); logout publishes token.SignalFamilyRevoked with that family on the node's bus
// (what push subscribes to).
func TestFamilyHookAndInspect(t *testing.T) {
	e := newEnv(t)
	jt, ok := e.sec.Tokens().(*security.JWTTokens)
	if !ok {
		t.Fatalf("token service %T, want *security.JWTTokens", e.sec.Tokens())
	}
	got := make(chan string, 8)
	unsub, err := event.SubscribeTyped(e.srv.Events(), func(_ context.Context, env *event.Envelope, s signal) error {
		got <- s.Ref
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()

	tok := e.access(t, e.freshUser(t))
	info, ok := jt.Inspect(tok)
	fid := info.Family
	if !ok || fid == "" || !info.Expires.After(e.clock.Now()) || info.IssuedAt.After(e.clock.Now()) {
		t.Fatalf("Inspect = %+v, %v; want a family, a past issue time and a future expiry", info, ok)
	}
	if _, ok := jt.Inspect("not-a-token"); ok {
		t.Error("Inspect accepted a malformed token")
	}
	want(t, e.call(t, "logout", nil, svctest.WithToken(tok)), 200, 0)
	select {
	case ref := <-got:
		if ref != fid {
			t.Errorf("signal for family %s, want %s", ref, fid)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no %s signal for family %s", token.SignalFamilyRevoked, fid)
	}
}

// signal is token.Signal typed as the family-revoked signal, for event.SubscribeTyped.
type signal token.Signal

func (signal) EventType() string { return token.SignalFamilyRevoked }
