package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/security"
)

// userMap is a UserStore in memory.
type userMap map[string]*security.User

func (m userMap) LookupUser(_ context.Context, name string) (*security.User, error) {
	if u, ok := m[name]; ok {
		return u, nil
	}
	return nil, security.ErrUserNotFound
}

// TestLoginBurstMemoryBounded (issue #13, #43): 1 000 concurrent password logins against a hash
// made with the default argon2id parameters (9 MiB each) take the process at most 40 MiB
// beyond where it was, with the runtime's own collector at its default GOGC and no collection
// started by hand: the gate of the default svc.security.hash_memory_budget (24 MiB: one slot)
// runs one hash at a time, the others wait in the bounded queue within their deadline or are
// refused with 429/1401. Every login either succeeds or is refused that way.
func TestLoginBurstMemoryBounded(t *testing.T) {
	const logins, bound = 1000, 40 << 20
	h := security.NewHasherBudget(security.DefaultHashParams, 24<<20)
	hash, err := h.Hash(alicePassword)
	if err != nil {
		t.Fatal(err)
	}
	auth := &security.PasswordAuthenticator{Hasher: h,
		Users: userMap{"alice": {ID: "u-1", Username: "alice", PasswordHash: hash, Roles: []string{}}}}
	creds, _ := json.Marshal(alicePassword)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range logins {
		wg.Go(func() {
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := auth.Authenticate(ctx, security.LoginRequest{Type: "password", Identifier: "alice", Credentials: creds})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, security.ErrHashBusy):
				busy.Add(1)
			default:
				t.Errorf("login: %v, want success or ErrHashBusy", err)
			}
		})
	}
	close(start)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	grown := int64(after.Sys) - int64(before.Sys) // Sys only grows: it covers the peak
	t.Logf("%d logins: %d succeeded, %d refused busy; memory obtained from the OS grew %d MiB (GOMAXPROCS %d)",
		logins, ok.Load(), busy.Load(), grown>>20, runtime.GOMAXPROCS(0))
	if grown > bound {
		t.Errorf("memory grew %d MiB during the burst, want at most %d MiB", grown>>20, bound>>20)
	}
	if ok.Load() < 1 {
		t.Error("no login succeeded")
	}
	if ok.Load()+busy.Load() != logins {
		t.Errorf("%d answered, want %d", ok.Load()+busy.Load(), logins)
	}
}
