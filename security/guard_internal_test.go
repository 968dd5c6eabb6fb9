package security

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestGuard: keys by user, ip and user_ip with normalized identifiers; a failing store fails
// open; the wait rounds up to whole minutes, at least one.
func TestGuard(t *testing.T) {
	g := &guard{key: config.LockoutKeyUserIP}
	if got := g.lockKey("  Alice ", "10.0.0.1"); got != "user:alice|ip:10.0.0.1" {
		t.Errorf("user_ip key = %q", got)
	}
	g.key = config.LockoutKeyUser
	if got := g.lockKey("ALICE", "x"); got != "user:alice" {
		t.Errorf("user key = %q", got)
	}
	g.key = config.LockoutKeyIP
	if got := g.lockKey("alice", "10.0.0.1"); got != "ip:10.0.0.1" {
		t.Errorf("ip key = %q", got)
	}
	g = &guard{enabled: true, store: failingStore{}, now: time.Now, logger: discard(), key: config.LockoutKeyUser}
	if err := g.check(context.Background(), g.lockKey("alice", "ip"), nil); err != nil {
		t.Errorf("failing store: %v, want fail open", err)
	}
	g.fail(context.Background(), g.lockKey("alice", "ip"), lockReasonLogin, "alice", "password")
	g.succeed(context.Background(), g.lockKey("alice", "ip"))
	for _, tt := range []struct {
		wait time.Duration
		want string
	}{{time.Second, "1"}, {time.Minute, "1"}, {61 * time.Second, "2"}, {15 * time.Minute, "15"}} {
		e, _ := rpc.AsError(lockedError(tt.wait))
		if e.Args["minutes"] != tt.want || e.Code != rpc.CodeAccountLocked || e.HTTPStatus() != 429 {
			t.Errorf("lockedError(%v) = %+v, want minutes %s", tt.wait, e, tt.want)
		}
	}
}

type failingStore struct{}

func (failingStore) Blocked(context.Context, string, time.Time) (time.Duration, error) {
	return 0, errors.New("down")
}
func (failingStore) Fail(context.Context, string, time.Time) (time.Duration, error) {
	return 0, errors.New("down")
}
func (failingStore) Reset(context.Context, string) error { return errors.New("down") }
