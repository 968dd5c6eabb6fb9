package security_test

import (
	"sync"
	"testing"

	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestFamilyHookAndInspect: Inspect returns a login token's family, issue time and expiry (and refuses a
// bad token); logout runs the OnFamilyRevoked hooks with that family.
func TestFamilyHookAndInspect(t *testing.T) {
	e := newEnv(t)
	jt, ok := e.sec.Tokens().(*security.JWTTokens)
	if !ok {
		t.Fatalf("token service %T, want *security.JWTTokens", e.sec.Tokens())
	}
	var mu sync.Mutex
	var got []string
	jt.OnFamilyRevoked(func(fid string) { mu.Lock(); got = append(got, fid); mu.Unlock() })

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
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[0] != fid {
		t.Errorf("hook calls = %v, want the family %s", got, fid)
	}
}
